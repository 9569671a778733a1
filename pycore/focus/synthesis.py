"""Prompt synthesis: the focus tiers and the current message become a system prompt and a message
list that any chat request carries (tools are added by the loop as usual, for any vendor).

    system    templates/<locale>/system.j2: the app's own prompt, the mission, every constraint
    messages  the turn tier's recent exchanges, verbatim, then the current message (current.j2)

Under the token budget (estimated, see :mod:`pycore.focus.tokens`) the oldest recent exchanges go
first. The mission, the constraints and the current message are never cut: when they alone exceed
the budget the result says ``over_budget`` and the panel shows it, so nothing stated is dropped
without the user seeing it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pycore.focus.prompts import TemplateError, render
from pycore.focus.results import Synthesis
from pycore.focus.state import FocusState, Item
from pycore.focus.tokens import estimate_prompt
from pycore.messages import Message

DEFAULT_BUDGET = 2000
MAX_RECENT_CHARS = 4000  # one recent message longer than this is shortened before it counts


def constraint_context(state: FocusState) -> list[dict[str, Any]]:
    by_id = {item.id: item for item in state.evolving}
    order = {item.id: n for n, item in enumerate(state.evolving)}
    return [_item_context(item, by_id, order) for item in state.ordered_items()]


def _item_context(item: Item, by_id: dict[str, Item], order: dict[str, int]) -> dict[str, Any]:
    others = [by_id[i] for i in item.conflicts_with if i in by_id]
    return {
        "id": item.id,
        "text": item.text,
        "kind": item.kind,
        "pinned": item.pinned,
        "newer_than": [o.text for o in others if order[o.id] < order[item.id]],
        "older_than": [o.text for o in others if order[o.id] > order[item.id]],
    }


def _shorten(text: str) -> str:
    return text if len(text) <= MAX_RECENT_CHARS else text[: MAX_RECENT_CHARS - 1] + "…"


def _recent_messages(state: FocusState, keep: int) -> list[Message]:
    messages: list[Message] = []
    for exchange in state.turn[len(state.turn) - keep :] if keep else []:
        messages.append(Message.user(_shorten(exchange.user)))
        if exchange.assistant:
            messages.append(Message.assistant(_shorten(exchange.assistant)))
    return messages


def synthesize(
    state: FocusState,
    message: str,
    *,
    base_system: str | None = None,
    budget: int = DEFAULT_BUDGET,
    locale: str | None = None,
    overrides: Mapping[str, str] | None = None,
) -> Synthesis:
    warnings: list[str] = []
    constraints = constraint_context(state)
    mission = state.core.text if state.core else ""
    context = {"base": base_system or "", "mission": mission, "constraints": constraints}
    current = Message.user(_render("current.j2", {**context, "message": message}, locale, overrides, warnings))
    available = min(len(state.turn), state.window)
    keep = available
    while True:
        earlier = max(state.seen, len(state.turn)) - keep
        system = _render("system.j2", {**context, "recent": keep, "omitted": earlier}, locale, overrides, warnings)
        messages = [*_recent_messages(state, keep), current]
        tokens = estimate_prompt(system, messages)
        if tokens <= budget or keep == 0:
            break
        keep -= 1
    return Synthesis(
        system=system,
        messages=messages,
        tokens=tokens,
        budget=budget,
        recent=keep,
        omitted=len(state.turn) - keep,
        over_budget=tokens > budget,
        warnings=list(dict.fromkeys(warnings)),
    )


def _render(name: str, context: dict[str, Any], locale: str | None, overrides: Mapping[str, str] | None,
            warnings: list[str]) -> str:
    """The user's template; if it breaks, the shipped one, with a warning (the chat goes on)."""
    try:
        return render(name, context, locale=locale, overrides=overrides)
    except TemplateError as e:
        warnings.append(f"{e}; the default template was used")
        return render(name, context, locale=locale)
