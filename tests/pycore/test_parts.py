"""The parts manager's positional delta constructors build exactly what the events' own constructors build."""

from __future__ import annotations

from dataclasses import fields

import pytest

from pycore._parts import _args_delta, _reasoning_delta, _text_delta
from pycore.messages import ReasoningDelta, TextDelta, ToolCallArgsDelta

pytestmark = pytest.mark.pyodide


@pytest.mark.parametrize(
    ("fast", "public"),
    [
        (_text_delta(3, "héllo", True), TextDelta(index=3, text="héllo", refusal=True)),
        (_text_delta(0, "x", False), TextDelta(index=0, text="x")),
        (_reasoning_delta(1, "why", False), ReasoningDelta(index=1, text="why")),
        (_args_delta(2, '{"a":', False), ToolCallArgsDelta(index=2, delta='{"a":')),
    ],
    ids=["text-refusal", "text", "reasoning", "args"],
)
def test_every_field_is_set_as_the_constructor_sets_it(fast: object, public: object) -> None:
    assert type(fast) is type(public)
    assert {f.name: getattr(fast, f.name) for f in fields(public)} == {  # a field left unset raises here
        f.name: getattr(public, f.name) for f in fields(public)
    }
    assert fast == public
    assert fast.model_dump() == public.model_dump()
