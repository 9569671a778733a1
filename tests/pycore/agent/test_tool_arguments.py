"""Tool calls whose arguments are not what the tool takes are not run (issue 29 item 10).

Before, cut-off JSON was completed by a guess (and a worse break ran the tool with ``{}``: the interpreter then
answered "(no output)"), and a call missing a required argument ran too. Now the model gets an error result
naming the problem, as the vendors' agent SDKs answer it, and the call keeps the text the model wrote
(``raw_arguments``), which the card shows. Recorded OpenAI stream, its arguments deltas edited.
"""

from __future__ import annotations

from typing import Any

import pytest
from agent_helpers import Calls, Run, fixture
from test_agent_loop_behaviour import TEXT

from pycore._parts import PartsManager
from pycore.agent.tools import AgentTool
from pycore.http.replay import Recording

pytestmark = pytest.mark.pyodide

TOOL_FILE = "openai/chat-stream-tool-call.sse"  # get_capital, arguments {"country":"UK"} over five deltas
COUNTRY = {"type": "object", "properties": {"country": {"type": "string"}}, "required": ["country"]}


def edited(*replacements: tuple[str, str]) -> Recording:
    body = fixture(TOOL_FILE).body().decode()
    for old, new in replacements:
        assert old in body
        body = body.replace(old, new, 1)
    return Recording(body.encode(), content_type="text/event-stream", chunk_size=41)


def get_capital(calls: Calls, schema: dict[str, Any]) -> AgentTool:
    tool = calls.tool("get_capital")
    tool.input_schema = schema
    return tool


async def run_one(recording: Recording, schema: dict[str, Any]) -> tuple[Run, Calls]:
    calls = Calls()
    run = Run([recording, TEXT["openai"]], [get_capital(calls, schema)], vendor="openai",
              policy={"get_capital": "allow"})
    result = await run.loop.run()
    assert result.stop_reason == "end_turn"
    return run, calls


async def test_cut_off_json_is_not_completed_by_a_guess_and_the_model_is_told() -> None:
    # {"country":"UK   (the closing quote and brace never came)
    run, calls = await run_one(edited(('"arguments":"\\"}"', '"arguments":""')), COUNTRY)
    assert calls.log == []  # not run, neither with a guess nor with {}
    [end] = run.of("tool_end")
    text = end["content"][0]["text"]
    assert end["is_error"] and text.startswith("get_capital was not run: arguments were not valid JSON: ")
    assert text in run.transport.requests[1].body.decode()  # the model reads it
    call = run.messages()[0]["parts"][0]
    assert call["raw_arguments"] == '{"country":"UK' and call["arguments"] == {}


async def test_a_call_missing_a_required_argument_is_not_run() -> None:
    run, calls = await run_one(edited(('"arguments":"country"', '"arguments":"nation"')), COUNTRY)
    assert calls.log == []
    [end] = run.of("tool_end")
    assert end["is_error"]
    assert end["content"][0]["text"] == "get_capital was not run: missing required argument `country`"
    assert "raw_arguments" not in run.messages()[0]["parts"][0]  # valid JSON: nothing to show but the arguments


async def test_a_call_that_is_not_a_json_object_is_not_run() -> None:
    # ["country","UK"]
    run, calls = await run_one(edited(('"arguments":"{\\""', '"arguments":"[\\""'),
                                      ('"arguments":"\\":\\""', '"arguments":"\\",\\""'),
                                      ('"arguments":"\\"}"', '"arguments":"\\"]"')), {"type": "object"})
    assert calls.log == []
    text = run.of("tool_end")[0]["content"][0]["text"]
    assert text == "get_capital was not run: arguments were not a JSON object (got an array)"
    assert run.messages()[0]["parts"][0]["raw_arguments"] == '["country","UK"]'


async def test_valid_arguments_with_every_required_one_still_run() -> None:
    run, calls = await run_one(edited(), COUNTRY)
    assert calls.log == [("get_capital", {"country": "UK"})]
    assert run.of("tool_end")[0]["is_error"] is False


@pytest.mark.parametrize("text", ['{"a": 1', '{"a": [1, 2', "not json", '{"a": 1}}'])
def test_the_parts_manager_keeps_unparsable_arguments_as_text(text: str) -> None:
    parts = PartsManager("openai")
    parts.tool_call(0, "c1", "f", text)
    [call] = parts.completion().tool_calls()
    assert (call.arguments, call.raw_arguments) == ({}, text)


@pytest.mark.parametrize(("text", "arguments"), [("", {}), ("  ", {}), ('{"a": 1}', {"a": 1})])
def test_the_parts_manager_parses_what_is_whole(text: str, arguments: dict[str, Any]) -> None:
    parts = PartsManager("openai")
    parts.tool_call(0, "c1", "f", text)
    [call] = parts.completion().tool_calls()
    assert (call.arguments, call.raw_arguments) == (arguments, None)
