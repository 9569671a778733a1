"""The loop over the real recorded tool-call streams of every vendor (replayed, real status codes)."""

from __future__ import annotations

import pytest
from agent_helpers import Calls, Run, fixture

pytestmark = pytest.mark.pyodide

# vendor: (recordings that call tools, in order; the recording that answers with text)
SEVERAL_STEPS = {
    "openai": (["openai/chat-stream-tool-call.sse", "openai/chat-stream-parallel-tools.sse"],
               "openai/chat-stream-text-usage.sse"),
    "anthropic": (["anthropic/stream-tool-use.sse", "anthropic/stream-tool-no-args.sse"], "anthropic/stream-text.sse"),
    "gemini": (["gemini/stream-function-call.sse", "gemini/stream-function-call-gemini3.sse"],
               "gemini/stream-text.sse"),
    "ollama": (["ollama/chat-stream-tool-call-docs.ndjson", "ollama/chat-stream-parallel-tool-calls.ndjson"],
               "ollama/chat-stream-text.ndjson"),
}
ONE_STEP = {
    "openai": "openai/chat-stream-tool-call.sse",
    "anthropic": "anthropic/stream-text-then-tool-use.sse",
    "gemini": "gemini/stream-function-call-separate-finish.sse",
    "ollama": "ollama/chat-stream-tool-call-docs.ndjson",
}


def recorded_calls(file: str) -> list[dict]:
    return fixture(file).expected()["tool_calls"]


def tools_for(files: list[str], calls: Calls, **behaviours) -> list:
    names = dict.fromkeys(c["name"] for f in files for c in recorded_calls(f))
    return [calls.tool(name, behaviours.get(name)) for name in names]


@pytest.mark.parametrize("vendor", sorted(ONE_STEP))
async def test_a_tool_step_then_a_text_step(vendor: str) -> None:
    tool_file, text_file = ONE_STEP[vendor], SEVERAL_STEPS[vendor][1]
    calls = Calls()
    run = Run([tool_file, text_file], tools_for([tool_file], calls))
    result = await run.loop.run()

    assert result.stop_reason == "end_turn" and result.steps == 2
    expected_calls = recorded_calls(tool_file)
    assert calls.log == [(c["name"], c["arguments"]) for c in expected_calls]
    assistant, results, answer = run.messages()
    call_parts = [p for p in assistant["parts"] if p["type"] == "tool_call"]
    assert [(p["name"], p["arguments"]) for p in call_parts] == [(c["name"], c["arguments"]) for c in expected_calls]
    assert results["role"] == "user"
    assert [(p["call_id"], p["is_error"]) for p in results["parts"]] == [(p["id"], False) for p in call_parts]
    assert "".join(p["text"] for p in answer["parts"] if p["type"] == "text") == fixture(text_file).expected()["text"]
    # the tool's output went back to the vendor in the second request
    second = run.transport.requests[1].body.decode()
    assert f"{expected_calls[0]['name']} result for" in second
    usages = [fixture(f).expected()["usage"] for f in (tool_file, text_file)]
    assert result.input_tokens == sum(u["input_tokens"] or 0 for u in usages)
    assert result.output_tokens == sum(u["output_tokens"] or 0 for u in usages)
    steps = [e["step"] for e in run.events]
    assert steps == sorted(steps) and run.events[0] == {"type": "step", "step": 1}


@pytest.mark.parametrize("vendor", sorted(SEVERAL_STEPS))
async def test_two_tools_over_several_steps(vendor: str) -> None:
    tool_files, text_file = SEVERAL_STEPS[vendor]
    calls = Calls()
    run = Run([*tool_files, text_file], tools_for(tool_files, calls))
    result = await run.loop.run()

    assert result.stop_reason == "end_turn" and result.steps == 3
    assert calls.log == [(c["name"], c["arguments"]) for f in tool_files for c in recorded_calls(f)]
    roles = [m["role"] for m in run.messages()]
    assert roles == ["assistant", "user", "assistant", "user", "assistant"]
    assert [e["type"] for e in run.of("step")] == ["step"] * 3
    # step 3 sent every earlier call and result back
    third = run.transport.requests[2].body.decode()
    for name, _ in calls.log:
        assert f"{name} result for" in third
