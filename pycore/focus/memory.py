"""Folding a classified message into the focus tiers (pure: no model, no I/O).

- PROBLEM_DEFINITION replaces the core with the restated problem (or the message itself);
- constraints and decisions join the evolving tier, unless one already says the same thing
  (same words after normalizing case, spacing and punctuation, or a close match): then the old
  item only notes the new message in ``repeated_in``;
- ids the classifier reports in ``contradicts`` flag both sides (``conflicts_with``): the old item
  stays until the user deletes one, and the synthesized prompt says which one is newer;
- QUESTION and UNCLEAR change nothing but the turn tier.
"""

from __future__ import annotations

import difflib
import re

from pycore.focus.classification import Classification
from pycore.focus.state import MAX_REPEATS, MAX_TEXT, Core, Exchange, FocusState, Item, ItemKind

SIMILAR = 0.9  # difflib ratio above which two statements are the same constraint
KEEPS_STATEMENTS = {"PROBLEM_DEFINITION", "CONSTRAINT_ADDITION", "REFINEMENT"}


def normalize(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def same_statement(a: str, b: str) -> bool:
    a, b = normalize(a), normalize(b)
    return a == b or difflib.SequenceMatcher(None, a, b).ratio() >= SIMILAR


def apply(state: FocusState, classification: Classification, *, message_id: str | None, text: str) -> FocusState:
    """A new state with the message's classification folded in; ``state`` is not changed."""
    state = state.model_copy(deep=True)
    labels = set(classification.labels)
    if "PROBLEM_DEFINITION" in labels:
        problem = classification.problem or " ".join(text.split())
        state.core = Core(text=problem[:MAX_TEXT], source_id=message_id)
    if not labels & KEEPS_STATEMENTS:
        return state
    contradicted = [i for i in classification.contradicts if state.item(i) is not None]
    statements: list[tuple[ItemKind, str]] = [("constraint", s) for s in classification.constraints]
    statements += [("decision", s) for s in classification.decisions]
    if contradicted and not statements:  # "forget the budget limit": the message itself is the new rule
        statements = [("constraint", " ".join(text.split())[:300])]
    for kind, statement in statements:
        _add(state, kind, statement, message_id, contradicted)
    return state


def _add(state: FocusState, kind: ItemKind, text: str, message_id: str | None, contradicted: list[str]) -> None:
    existing = next((item for item in state.evolving if same_statement(item.text, text)), None)
    if existing is not None:
        if message_id and message_id != existing.source_id and message_id not in existing.repeated_in:
            existing.repeated_in = [*existing.repeated_in, message_id][-MAX_REPEATS:]
        return
    item = Item(id=state.next_item_id(), text=text[:MAX_TEXT], kind=kind, source_id=message_id,
                conflicts_with=list(contradicted))
    for other_id in contradicted:
        other = state.item(other_id)
        if other is not None and item.id not in other.conflicts_with:
            other.conflicts_with = [*other.conflicts_with, item.id]
    state.evolving.append(item)


def record_exchange(state: FocusState, *, message_id: str | None, user: str, assistant: str = "") -> FocusState:
    """A new state with the exchange at the end of the turn tier (which keeps ``window`` of them)."""
    state = state.model_copy(deep=True)
    turn = [*state.turn, Exchange(id=message_id, user=user, assistant=assistant)]
    state.turn = turn[max(0, len(turn) - state.window) :]
    state.seen += 1
    return state
