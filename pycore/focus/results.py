"""What focus memory's operations return: the prompt it synthesized, a classification, an update.

These are the results of the ``focus.*`` wire methods as they are (:mod:`pycore.contract.results`), so
they live apart from the code that makes them: importing them does not import the templates (jinja2)
or a vendor client.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from pycore.focus.classification import Classification
from pycore.focus.state import Cost, FocusState
from pycore.messages import Message


class Synthesis(BaseModel):
    """The next request's system prompt and messages, made from the focus state."""

    system: str
    messages: list[Message]
    tokens: int  # estimated
    budget: int
    recent: int  # exchanges kept
    omitted: int  # exchanges of the turn tier left out for the budget
    over_budget: bool = False
    warnings: list[str] = Field(default_factory=list)


class ClassifierResult(BaseModel):
    """A message classified: the labels, and what it cost."""

    classification: Classification
    ok: bool  # False: both attempts failed and the labels are the UNCLEAR fallback
    attempts: int
    cost: Cost
    strategy: str
    error: str | None = None


class UpdateResult(BaseModel):
    """The focus state after a message and its reply."""

    state: FocusState
    classification: Classification | None  # None when no classifier was given
    ok: bool
    cost: Cost  # of this message alone; state.cost is the conversation's total
    error: str | None = None
