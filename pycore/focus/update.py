"""One turn of focus memory: classify the user's message (unless the page already did), fold it into
the tiers, record the exchange in the turn tier, and add the classifier's cost."""

from __future__ import annotations

from pycore.focus.classifier import Classifier
from pycore.focus.memory import apply, record_exchange
from pycore.focus.results import ClassifierResult, UpdateResult
from pycore.focus.state import Cost, FocusState


async def update_focus(
    state: FocusState,
    *,
    message_id: str | None,
    text: str,
    reply: str = "",
    classifier: Classifier | None = None,
    classified: ClassifierResult | None = None,
) -> UpdateResult:
    if classified is None and classifier is not None:
        classified = await classifier.classify(text, state)
    if classified is not None:
        state = apply(state, classified.classification, message_id=message_id, text=text)
        state.cost = state.cost.add(classified.cost)
    state = record_exchange(state, message_id=message_id, user=text, assistant=reply)
    if classified is None:
        return UpdateResult(state=state, classification=None, ok=True, cost=Cost())
    return UpdateResult(state=state, classification=classified.classification, ok=classified.ok,
                        cost=classified.cost, error=classified.error)
