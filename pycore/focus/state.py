"""The focus state: three tiers kept with the transcript, as one pydantic model.

    core      the problem definition (the mission); replaced when the user redefines it
    evolving  constraints and decisions, condensed and deduplicated, each linked to the message it
              came from; pinnable, editable, deletable; a contradiction is flagged on both sides
    turn      the last few exchanges, verbatim

It serialises to ``{"core", "evolving", "turn", ...}``: the ``focus`` object of an exported
conversation. Import is :meth:`FocusState.from_export`, which accepts exactly what export wrote and
names the field when something is wrong. Nothing here talks to a model.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

ItemKind = Literal["constraint", "decision"]
SCHEMA_VERSION: Final = 1
MAX_TEXT = 2000  # an item's text, after the user edits it
MAX_REPEATS = 5  # source ids kept when the same constraint is stated again


class FocusStateError(ValueError):
    """An imported or sent focus state that does not fit the model; the message names the field."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_assignment=True)


class Core(_Model):
    """The mission: what the user is trying to get done."""

    text: str = Field(min_length=1, max_length=MAX_TEXT)
    source_id: str | None = None  # the message it came from; None when the user typed it in the panel
    edited: bool = False  # the user changed it: the classifier's wording no longer applies


class Item(_Model):
    """One constraint or decision of the evolving tier."""

    id: str = Field(pattern=r"^c[0-9]+$")
    text: str = Field(min_length=1, max_length=MAX_TEXT)
    kind: ItemKind = "constraint"
    source_id: str | None = None  # the message that stated it first
    repeated_in: list[str] = Field(default_factory=list)  # later messages that said it again
    pinned: bool = False  # pinned items come first and are never reworded by the classifier
    edited: bool = False
    conflicts_with: list[str] = Field(default_factory=list)  # ids of items it contradicts

    @field_validator("text")
    @classmethod
    def _strip(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("text is empty")
        return value


class Exchange(_Model):
    """One user message and the reply to it (text only: tool traffic stays in the transcript)."""

    id: str | None = None  # the user message's id in the transcript
    user: str
    assistant: str = ""


class Cost(_Model):
    """What the classifier has cost in this conversation (tokens as the vendor reported them)."""

    calls: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, other: Cost) -> Cost:
        return Cost(
            calls=self.calls + other.calls,
            failures=self.failures + other.failures,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


class FocusState(_Model):
    version: Literal[1] = SCHEMA_VERSION
    enabled: bool = False  # the "Focus memory" switch, per conversation
    core: Core | None = None
    evolving: list[Item] = Field(default_factory=list)
    turn: list[Exchange] = Field(default_factory=list)
    window: int = Field(default=3, ge=0, le=20)  # exchanges the turn tier keeps
    seen: int = Field(default=0, ge=0)  # exchanges recorded so far (the turn tier keeps the last few)
    cost: Cost = Field(default_factory=Cost)

    # ------------------------------------------------------------------ export / import
    def to_export(self) -> dict[str, Any]:
        """The ``focus`` object of an exported conversation."""
        return self.model_dump(mode="json")

    @classmethod
    def from_export(cls, data: Any) -> FocusState:
        """The state from an exported (or page-sent) ``focus`` object; ``None`` is an empty state."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise FocusStateError(f"focus state must be an object, not {type(data).__name__}")
        try:
            state = cls.model_validate(data)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "focus"
            raise FocusStateError(f"focus state: {where}: {first['msg']}") from None
        state.check_ids()
        state.drop_dangling_conflicts()
        return state

    def check_ids(self) -> None:
        ids = [item.id for item in self.evolving]
        if len(ids) != len(set(ids)):
            raise FocusStateError("focus state: evolving: two items share an id")

    def drop_dangling_conflicts(self) -> None:
        """A flag pointing at a deleted item goes with it (ids are reused after a delete)."""
        ids = {item.id for item in self.evolving}
        for item in self.evolving:
            kept = [other for other in item.conflicts_with if other in ids and other != item.id]
            if kept != item.conflicts_with:
                item.conflicts_with = kept

    # ------------------------------------------------------------------ lookups
    def item(self, item_id: str) -> Item | None:
        return next((item for item in self.evolving if item.id == item_id), None)

    def next_item_id(self) -> str:
        numbers = [int(item.id[1:]) for item in self.evolving]
        return f"c{max(numbers, default=0) + 1}"

    def ordered_items(self) -> list[Item]:
        """Pinned first, then in the order they were stated."""
        return [i for i in self.evolving if i.pinned] + [i for i in self.evolving if not i.pinned]
