"""The parts manager: where deltas go when keys are reused, and deltas merged per chunk without changing an event."""

from __future__ import annotations

import pytest

from pycore._parts import PartsManager
from pycore.messages import ReasoningDelta, TextDelta, ToolCallArgsDelta, ToolCallEnd, ToolCallStart, UsageEvent

pytestmark = pytest.mark.pyodide


def test_a_delta_after_its_part_closed_or_its_key_was_reused_goes_where_the_parts_are_now() -> None:
    parts = PartsManager("x", merge_deltas=True)
    parts.tool_call_start(0, "call_1", "first")
    parts.tool_call_args(0, '{"a":')
    parts.tool_call_args(0, "1}")
    parts.tool_call_end(0)
    assert parts.tool_call_args(0, "late") == []  # the call is closed: nothing joins its arguments
    parts.tool_call_start(0, "call_2", "second")  # the vendor reuses the key for a new call
    parts.tool_call_args(0, '{"b":2}')
    parts.close()
    first, second = parts.completion().message.parts
    assert (first.arguments, second.arguments) == ({"a": 1}, {"b": 2})


def test_a_key_started_again_while_open_ends_the_first_call_and_takes_the_deltas_that_follow() -> None:
    parts = PartsManager("x", merge_deltas=True)
    parts.tool_call_start("k", "call_1", "first")
    parts.tool_call_args("k", '{"a":1}')
    parts.tool_call_start("k", "call_2", "second")  # no end in between: the first call ends here
    parts.tool_call_args("k", '{"b":2}')
    parts.tool_call_end("k")
    assert [p.arguments for p in parts.completion().message.parts] == [{"a": 1}, {"b": 2}]
    assert parts.close() == []  # nothing is left open (closing used to raise KeyError)


def test_without_merging_every_delta_is_its_own_event() -> None:
    parts = PartsManager("x")
    assert parts.text(0, "a") == [TextDelta(index=0, text="a")]
    assert parts.text(0, "b") == [TextDelta(index=0, text="b")]
    assert parts.flush() == []


def test_merged_deltas_come_as_one_event_before_whatever_follows_and_never_change() -> None:
    parts = PartsManager("x", merge_deltas=True)
    events = parts.text(0, "Hel") + parts.text(0, "lo")
    assert events == []  # held back while more of the same part may follow
    events += parts.reasoning(1, "why") + parts.reasoning(1, " so")  # another part: the held text comes out
    events += parts.tool_call_start(2, "c1", "f") + parts.tool_call_args(2, "{") + parts.tool_call_args(2, "}")
    events += parts.set_usage(1, 2)
    assert events == [
        TextDelta(index=0, text="Hello"),
        ReasoningDelta(index=1, text="why so"),
        ToolCallStart(index=2, id="c1", name="f"),
        ToolCallArgsDelta(index=2, delta="{}"),
        UsageEvent(usage=parts.usage),
    ]
    given = [TextDelta(index=0, text="Hello"), ReasoningDelta(index=1, text="why so")]
    later = parts.text(0, "!") + parts.flush() + parts.flush()
    assert later == [TextDelta(index=0, text="!")]
    assert events[:2] == given  # what was handed out stays as it was
    assert parts.close()[0] == ToolCallEnd(index=2, id="c1", name="f", arguments={})
    assert parts.completion().text() == "Hello!"


def test_a_refusal_keeps_its_flag_when_merged() -> None:
    parts = PartsManager("x", merge_deltas=True)
    parts.text("r", "No", refusal=True)
    parts.text("r", ".", refusal=True)
    assert parts.flush() == [TextDelta(index=0, text="No.", refusal=True)]
