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


def test_a_delta_after_its_part_closed_or_its_key_was_reused_goes_where_the_parts_are_now() -> None:
    """delta() remembers the part of its last call: closing that part, or a new part under the same
    key, must not leave it writing to the old one."""
    from pycore._parts import PartsManager

    parts = PartsManager("x", runs=True)
    parts.tool_call_start(0, "call_1", "first")
    assert parts.delta("args", 0, '{"a":') != []
    parts.delta("args", 0, "1}")
    parts.tool_call_end(0)
    assert parts.delta("args", 0, "late") == []  # the call is closed: nothing joins its arguments
    parts.tool_call_start(0, "call_2", "second")  # the vendor reuses the key for a new call
    parts.delta("args", 0, '{"b":2}')
    parts.close()
    first, second = parts.completion().message.parts
    assert (first.arguments, second.arguments) == ({"a": 1}, {"b": 2})


def test_a_key_started_again_while_open_takes_the_deltas_that_follow() -> None:
    from pycore._parts import PartsManager

    parts = PartsManager("x", runs=True)
    parts.tool_call_start("k", "call_1", "first")
    parts.delta("args", "k", '{"a":1}')
    parts.tool_call_start("k", "call_2", "second")  # no end in between: the key now names the new call
    parts.delta("args", "k", '{"b":2}')
    parts.tool_call_end("k")
    assert [p.arguments for p in parts.completion().message.parts] == [{}, {"b": 2}]  # the first never ended
