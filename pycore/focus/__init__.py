"""Focus memory: long conversations that keep their goal and constraints.

Each user message is labelled by a small, cheap model (:mod:`~pycore.focus.classifier`, asked for
JSON the vendor's own way by :mod:`~pycore.focus.strategy`, validated by
:mod:`~pycore.focus.classification`). :mod:`~pycore.focus.memory` folds the labels into three tiers
(:mod:`~pycore.focus.state`: core, evolving, turn), stored with the transcript. Before each reply,
:mod:`~pycore.focus.synthesis` renders them through jinja2 templates (:mod:`~pycore.focus.prompts`)
into a system prompt and a short message list under a token budget (:mod:`~pycore.focus.tokens`).

Timing: the classifier runs after the reply, for the next turn. The current message always reaches
the model verbatim, and the turn tier keeps it verbatim for the next ``window`` exchanges, so a
label that lands one turn later loses nothing, and the reply's first token never waits on a second
model (nor on its failures). :func:`~pycore.focus.update.update_focus` does one such turn.

Contradictions are reported by the classifier itself: it sees the current constraints with their
ids and answers ``contradicts: [ids]`` in the same call (no second request, no extra latency).
"""

from typing import TYPE_CHECKING

from pycore._lazy import lazy

if TYPE_CHECKING:
    from pycore.focus.classification import LABELS, Classification, InvalidClassification
    from pycore.focus.classifier import Classifier
    from pycore.focus.memory import apply, record_exchange
    from pycore.focus.results import ClassifierResult, Synthesis, UpdateResult
    from pycore.focus.state import Core, Cost, Exchange, FocusState, FocusStateError, Item
    from pycore.focus.synthesis import synthesize
    from pycore.focus.tokens import estimate_prompt, estimate_tokens
    from pycore.focus.update import update_focus

_WHERE = {
    "LABELS": "classification",
    "Classification": "classification",
    "InvalidClassification": "classification",
    "Classifier": "classifier",
    "apply": "memory",
    "record_exchange": "memory",
    "ClassifierResult": "results",
    "Synthesis": "results",
    "UpdateResult": "results",
    "Core": "state",
    "Cost": "state",
    "Exchange": "state",
    "FocusState": "state",
    "FocusStateError": "state",
    "Item": "state",
    "synthesize": "synthesis",
    "estimate_prompt": "tokens",
    "estimate_tokens": "tokens",
    "update_focus": "update",
}
__getattr__ = lazy(__name__, _WHERE)

__all__ = [
    "LABELS",
    "Classification",
    "Classifier",
    "ClassifierResult",
    "Core",
    "Cost",
    "Exchange",
    "FocusState",
    "FocusStateError",
    "InvalidClassification",
    "Item",
    "Synthesis",
    "UpdateResult",
    "apply",
    "estimate_prompt",
    "estimate_tokens",
    "record_exchange",
    "synthesize",
    "update_focus",
]
