"""Loop behaviour on recorded vendor streams: errors, concurrency, approval, limits, Stop, cut-offs."""

from __future__ import annotations

import asyncio

import pytest
from agent_helpers import KEY, Calls, Run, fixture, recording

from pycore.agent.loop import Limits
from pycore.agent.tools import ToolResult

pytestmark = pytest.mark.pyodide

TEXT = {
    "openai": "openai/chat-stream-text-usage.sse",
    "anthropic": "anthropic/stream-text.sse",
    "gemini": "gemini/stream-text.sse",
    "ollama": "ollama/chat-stream-text.ndjson",
}
TOOL = {
    "openai": ("openai/chat-stream-tool-call.sse", "get_capital"),
    "anthropic": ("anthropic/stream-tool-use.sse", "get_weather"),
    "gemini": ("gemini/stream-function-call.sse", "get_capital"),
    "ollama": ("ollama/chat-stream-tool-call-docs.ndjson", "get_weather"),
    "openai-responses": ("openai/responses-stream-function-call.sse", "get_capital"),
}


def explode(arguments: dict) -> str:
    raise RuntimeError("the weather service is down")


@pytest.mark.parametrize("vendor", sorted(TEXT))
async def test_a_tool_that_raises_becomes_an_error_result_and_the_loop_goes_on(vendor: str) -> None:
    file, name = TOOL[vendor]
    calls = Calls()
    run = Run([file, TEXT[vendor]], [calls.tool(name, explode)])
    result = await run.loop.run()
    assert result.stop_reason == "end_turn"
    [end] = run.of("tool_end")
    assert end["is_error"] is True
    assert end["content"] == [{"type": "text", "text": f"{name} failed: RuntimeError: the weather service is down"}]
    results = run.messages()[1]["parts"]
    assert results[0]["is_error"] is True
    assert "the weather service is down" in run.transport.requests[1].body.decode()


async def test_responses_api_two_tool_steps_then_an_error_event_keeps_everything() -> None:
    calls = Calls()
    files = ["openai/responses-stream-function-call.sse", "openai/responses-stream-reasoning-summary.sse",
             "openai/responses-stream-error-event.sse"]
    run = Run(files, [calls.tool("get_capital"), calls.tool("calculator")])
    result = await run.loop.run()
    assert [name for name, _ in calls.log] == ["get_capital", "calculator"]
    assert calls.log[1][1] == {"a": 12, "b": 7, "op": "add"}
    assert result.stop_reason == "error" and result.steps == 3
    expected = fixture(files[2]).expected()["error"]
    assert (result.error.status, result.error.type, result.error.message) == (
        expected["status"], expected["type"], expected["message"])
    assert [m["role"] for m in run.messages()] == ["assistant", "user", "assistant", "user"]
    assert run.messages()[2]["parts"][0]["type"] == "reasoning"  # the reasoning of step 2 is kept


@pytest.mark.parametrize("file", ["openai/chat-stream-parallel-tools.sse",
                                  "ollama/chat-stream-parallel-tool-calls.ndjson"])
async def test_parallel_calls_run_concurrently(file: str) -> None:
    """Each tool waits until the other has started: run one after the other, they would both time out."""
    first, second = [c["name"] for c in fixture(file).expected()["tool_calls"]]
    started = {first: asyncio.Event(), second: asyncio.Event()}

    def waits_for(other: str):
        async def body(arguments: dict) -> str:
            started[other is first and second or first].set()
            await started[other].wait()
            return f"saw {other} running"
        return body

    calls = Calls()
    text = TEXT["openai" if file.startswith("openai") else "ollama"]
    run = Run([file, text], [calls.tool(first, waits_for(second)), calls.tool(second, waits_for(first))],
              limits=Limits(tool_timeout=5))
    result = await run.loop.run()
    assert result.stop_reason == "end_turn"
    kinds = [(e["type"], e.get("name")) for e in run.events if e["type"] in ("tool_start", "tool_end")]
    assert kinds[:2] == [("tool_start", first), ("tool_start", second)]
    assert all(not e["is_error"] for e in run.of("tool_end"))
    # results go back in the order of the calls, whatever order they finished in
    call_ids = [p["id"] for p in run.messages()[0]["parts"] if p["type"] == "tool_call"]
    assert [p["call_id"] for p in run.messages()[1]["parts"]] == call_ids


@pytest.mark.parametrize("decision", [True, False])
async def test_ask_waits_for_the_user(decision: bool) -> None:
    file, name = TOOL["anthropic"]
    calls = Calls()

    def answer(event: dict, run: Run) -> None:
        if event["type"] == "approval":
            assert calls.log == []  # nothing ran before the user answered
            asyncio.get_running_loop().call_soon(run.approvals.resolve, event["call_id"], decision)

    run = Run([file, TEXT["anthropic"]], [calls.tool(name)], policy={name: "ask"}, on_event=answer)
    result = await run.loop.run()
    assert result.stop_reason == "end_turn"
    [approval] = run.of("approval")
    expected = fixture(file).expected()["tool_calls"][0]
    assert (approval["call_id"], approval["name"], approval["arguments"], approval["source"]) == (
        expected["id"], name, expected["arguments"], "python:test")
    assert len(calls.log) == (1 if decision else 0)
    [end] = run.of("tool_end")
    assert end["is_error"] is (not decision)
    if not decision:
        assert end["content"][0]["text"] == f"the user declined to run {name}"
        assert run.of("tool_start") == []


async def test_deny_is_not_offered_and_a_call_anyway_is_refused() -> None:
    file, name = TOOL["openai"]
    calls = Calls()
    run = Run([file, TEXT["openai"]], [calls.tool(name), calls.tool("other")], policy={name: "deny"})
    result = await run.loop.run()
    assert result.stop_reason == "end_turn" and calls.log == []
    assert '"get_capital"' not in run.transport.requests[0].body.decode()
    assert '"other"' in run.transport.requests[0].body.decode()
    assert run.of("tool_end")[0]["is_error"] is True


async def test_an_unknown_tool_is_an_error_result_naming_the_tools() -> None:
    calls = Calls()
    run = Run([TOOL["gemini"][0], TEXT["gemini"]], [calls.tool("lookup")])
    result = await run.loop.run()
    assert result.stop_reason == "end_turn"
    assert run.of("tool_end")[0]["content"][0]["text"] == "unknown tool 'get_capital'; the tools are: lookup"


async def test_a_tool_that_never_answers_times_out_is_cancelled_and_the_loop_goes_on() -> None:
    file, name = TOOL["ollama"]
    calls = Calls()
    run = Run([file, TEXT["ollama"]], [calls.tool(name, lambda a: asyncio.Event().wait())],
              limits=Limits(tool_timeout=0.05))
    result = await run.loop.run()
    assert result.stop_reason == "end_turn"
    assert calls.cancelled == [name]
    [end] = run.of("tool_end")
    assert end["is_error"] and end["content"][0]["text"] == f"{name} did not answer within 0.05 s and was cancelled"


async def test_the_step_limit_stops_before_running_more_tools_and_keeps_the_transcript_valid() -> None:
    file, name = TOOL["anthropic"]
    calls = Calls()
    run = Run([file, TEXT["anthropic"]], [calls.tool(name)], limits=Limits(max_steps=1))
    result = await run.loop.run()
    assert result.stop_reason == "max_steps" and result.steps == 1
    assert calls.log == [] and len(run.transport.requests) == 1
    assistant, results = run.messages()
    assert results["parts"][0]["call_id"] == assistant["parts"][0]["id"]
    assert results["parts"][0]["is_error"] is True
    assert "step limit (1)" in results["parts"][0]["content"][0]["text"]


async def test_the_token_budget_stops_the_run() -> None:
    # step 1 uses 53 + 15 tokens, step 2 364 + 40: a budget of 300 is spent after step 2
    files = ["openai/chat-stream-tool-call.sse", "openai/chat-stream-parallel-tools.sse", TEXT["openai"]]
    calls = Calls()
    run = Run(files, [calls.tool("get_capital"), calls.tool("get_country"), calls.tool("get_product_name")],
              limits=Limits(token_budget=300))
    result = await run.loop.run()
    assert result.stop_reason == "token_budget" and result.steps == 2
    assert (result.input_tokens, result.output_tokens) == (53 + 364, 15 + 40)
    assert [name for name, _ in calls.log] == ["get_capital"]
    assert len(run.transport.requests) == 2


async def test_stop_mid_stream_keeps_what_arrived() -> None:
    text_file = TEXT["gemini"]
    slow = recording(text_file, chunk_size=30, delay=0.01)
    run = Run([TOOL["gemini"][0], slow], [Calls().tool("get_capital")], vendor="gemini")
    task = asyncio.ensure_future(run.loop.run())
    while not any(e["type"] == "text_delta" and e["step"] == 2 for e in run.events):
        await asyncio.sleep(0.002)
    task.cancel()
    result = await task
    assert result.stop_reason == "stopped"
    last = run.of("message")[-1]
    assert last["incomplete"] is True and last["step"] == 2
    kept = last["message"]["parts"][0]["text"]
    assert kept and fixture(text_file).expected()["text"].startswith(kept)
    assert run.transport.responses[-1].closed  # the stream was aborted


async def test_stop_while_a_tool_runs_cancels_it_and_answers_every_call() -> None:
    file = "openai/chat-stream-parallel-tools.sse"
    calls = Calls()
    finished = "get_product_name"
    run = Run([file, TEXT["openai"]],
              [calls.tool("get_country", lambda a: asyncio.Event().wait()), calls.tool(finished, lambda a: "Widget")])
    task = asyncio.ensure_future(run.loop.run())
    while not any(e["type"] == "tool_end" for e in run.events):
        await asyncio.sleep(0.002)
    task.cancel()
    result = await task
    assert result.stop_reason == "stopped" and calls.cancelled == ["get_country"]
    results = run.messages()[-1]
    texts = [(p["is_error"], p["content"][0]["text"]) for p in results["parts"]]
    assert texts == [(True, "cancelled: stopped by the user"), (False, "Widget")]
    # the page shows the cancelled call as stopped, not failed; the one that finished is no stopped call
    assert {e["name"]: e.get("stopped", False) for e in run.of("tool_end")} == {"get_country": True, finished: False}
    assert len(run.transport.requests) == 1  # nothing more was sent


@pytest.mark.parametrize("error_file", ["openai/error-401-invalid-api-key.json",
                                        "anthropic/error-401-authentication.json",
                                        "gemini/error-429-resource-exhausted.json"])
async def test_a_vendor_error_mid_loop_ends_the_run_and_keeps_the_earlier_steps(error_file: str) -> None:
    vendor = fixture(error_file).vendor
    file, name = TOOL[vendor]
    calls = Calls()
    run = Run([file, error_file], [calls.tool(name)])
    result = await run.loop.run()
    expected = fixture(error_file).expected()["error"]
    assert result.stop_reason == "error"
    assert (result.error.status, result.error.type, result.error.message) == (
        expected["status"], expected["type"], expected["message"])
    assert [m["role"] for m in run.messages()] == ["assistant", "user"]
    assert calls.log and KEY not in repr(run.events) + repr(result.to_json())


async def test_a_stream_dropped_mid_loop_keeps_the_partial_answer() -> None:
    text_file = TEXT["anthropic"]
    cut = recording(text_file, cut_after=len(fixture(text_file).body()) // 2)
    run = Run([TOOL["anthropic"][0], cut], [Calls().tool("get_weather")], vendor="anthropic")
    result = await run.loop.run()
    assert result.stop_reason == "error" and result.error.type == "connection_error"
    last = run.of("message")[-1]
    assert last["incomplete"] is True and last["step"] == 2
    assert run.of("error")[-1]["step"] == 2


async def test_max_tokens_cut_tool_call_is_not_run() -> None:
    file = "anthropic/stream-max-tokens-partial-json.sse"
    calls = Calls()
    run = Run([file, TEXT["anthropic"]], [calls.tool("make_file")])
    result = await run.loop.run()
    assert result.stop_reason == "end_turn" and calls.log == []
    assert "output limit" in run.of("tool_end")[0]["content"][0]["text"]


LINK = {"type": "resource_link", "uri": "file:///report.csv", "name": "report.csv"}


@pytest.mark.parametrize("vendor", sorted(TEXT))
async def test_a_result_part_carries_what_its_card_shows_and_the_vendor_never_gets_it(vendor: str) -> None:
    """The card's data travels on the result part (``display``), not in a table of the page's: the server's items
    the model's text only names (a resource link), the structured result, the duration and the tool's source. The
    next request to the vendor carries the model's content alone."""
    file, name = TOOL[vendor]
    calls = Calls()
    linked = ToolResult(content=[{"type": "text", "text": "done"}, LINK], structured={"rows": 3})
    run = Run([file, TEXT[vendor]], [calls.tool(name, lambda _: linked)])
    assert (await run.loop.run()).stop_reason == "end_turn"
    [part] = run.messages()[1]["parts"]
    display = part["display"]
    assert display["content"] == [{"type": "text", "text": "done"}, LINK]
    assert display["structured"] == {"rows": 3} and display["source"] == "python:test"
    assert display["duration_ms"] == run.of("tool_end")[0]["duration_ms"]
    assert "stopped" not in display and "asked" not in display  # nothing said, nothing carried
    sent = run.transport.requests[1].body.decode()
    assert "resource link: report.csv" in sent and "display" not in sent and '"rows"' not in sent


async def test_a_declined_call_is_marked_denied_on_its_result_part() -> None:
    file, name = TOOL["openai"]

    def deny(event: dict, run: Run) -> None:
        if event["type"] == "approval":
            asyncio.get_running_loop().call_soon(run.approvals.resolve, event["call_id"], "deny")

    run = Run([file, TEXT["openai"]], [Calls().tool(name)], policy={name: "ask"}, on_event=deny)
    await run.loop.run()
    [part] = run.messages()[1]["parts"]
    assert part["display"]["denied"] is True and part["is_error"] is True
