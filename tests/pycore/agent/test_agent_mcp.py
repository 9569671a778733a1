"""The loop and the mcp.* wire methods against a real MCP server (official SDK) on loopback (CPython only)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_helpers import KEY, Run

from pycore import wire
from pycore.agent.loop import Limits
from pycore.agent.mcp_tools import session_tools
from pycore.http.replay import ReplayTransport
from pycore.mcp import ClientSession
from pycore.methods import _provider
from pycore.methods._state import STATE

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
from mcp_servers import free_port, running  # noqa: E402

SERVER = Path(__file__).with_name("agent_mcp_server.py")


@pytest.fixture(scope="module")
def mcp_url() -> Iterator[str]:
    port = free_port()
    with running([sys.executable, str(SERVER), str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


async def call(method: str, params: dict, on_event=None) -> tuple[dict, list[dict]]:
    events: list[dict] = []

    def emit(text: str) -> None:
        assert KEY not in text
        events.append(json.loads(text))
        if on_event:
            on_event(events[-1])

    result = await wire.start(method, json.dumps(params), emit)
    assert KEY not in result
    return json.loads(result), events


async def test_mcp_connect_describes_the_server_with_model_names_and_default_policies(mcp_url: str) -> None:
    try:
        result, _ = await call("mcp.connect",
                               {"id": "t", "url": mcp_url, "headers": {"Authorization": f"Bearer {KEY}"}})
        assert result["server"] == {"name": "agent-test", "version": "2.0"}
        assert result["protocol_version"] == "2026-07-28" and result["status"] == "connected"
        tools = {tool["name"]: tool for tool in result["tools"]}
        assert tools["get_weather"]["policy"] == "ask" and tools["delete_file"]["policy"] == "ask"
        assert tools["broken"]["policy"] == "ask"
        assert tools["get_weather"]["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
        assert tools["get_weather"]["inputSchema"]["required"] == ["location"]
        assert result["resources"] == [{"uri": "test://readme", "name": "readme", "description": "The readme.",
                                        "mimeType": "text/plain"}]
        assert result["prompts"][0]["name"] == "review"
        # a second server with the same tool names: both get namespaced in the model's view
        second, _ = await call("mcp.connect", {"id": "u", "url": mcp_url})
        assert {t["name"] for t in second["tools"]} >= {"u__get_weather", "u__hang"}
        listed, _ = await call("mcp.list", {})
        assert [s["id"] for s in listed["servers"]] == ["t", "u"]
        assert {t["name"] for t in listed["servers"][0]["tools"]} >= {"t__get_weather"}
        contents, _ = await call("mcp.read_resource", {"id": "t", "uri": "test://readme"})
        assert contents == {"contents": [{"uri": "test://readme", "mimeType": "text/plain", "text": "read me first"}]}
        prompt, _ = await call("mcp.get_prompt", {"id": "t", "name": "review", "arguments": {"language": "Rust"}})
        assert prompt["messages"] == [{"role": "user", "parts": [
            {"type": "text", "text": "Please review this Rust code.", "refusal": False}]}]
    finally:
        await call("mcp.disconnect", {"id": "t"})
        await call("mcp.disconnect", {"id": "u"})
    assert STATE.connections == {}
    with pytest.raises(LookupError, match="no MCP server 't' is connected"):
        await call("mcp.read_resource", {"id": "t", "uri": "test://readme"})


async def test_connect_errors_name_the_problem() -> None:
    port = free_port()
    with pytest.raises(Exception, match=f"127.0.0.1:{port}"):
        await call("mcp.connect", {"id": "x", "url": f"http://127.0.0.1:{port}/mcp"})
    with pytest.raises(ValueError, match="not an http"):
        await call("mcp.connect", {"id": "x", "url": "ftp://example.com"})
    assert "x" not in STATE.connections


async def test_a_recorded_tool_call_runs_on_the_mcp_server_and_its_result_goes_back(mcp_url: str) -> None:
    async with ClientSession(mcp_url) as session:
        await session.list_tools()
        # allowed by the user: a server's "read-only" claim alone no longer runs it unasked
        run = Run(["anthropic/stream-tool-use.sse", "anthropic/stream-text.sse"], session_tools("srv", session),
                  policy={"get_weather": "allow"})
        result = await run.loop.run()
    assert result.stop_reason == "end_turn"
    [start] = run.of("tool_start")
    assert (start["name"], start["source"], start["arguments"]) == (
        "get_weather", "mcp:srv", {"location": "San Francisco, CA", "units": "f"})
    [end] = run.of("tool_end")
    assert end["is_error"] is False
    assert end["structured_content"] == {"city": "San Francisco, CA", "celsius": 21.5}
    assert "schema_problem" not in end  # it fits the tool's outputSchema
    assert '\\"celsius\\": 21.5' in run.transport.requests[1].body.decode()


async def test_a_structured_result_that_breaks_its_schema_reaches_the_page_flagged() -> None:
    from pycore.agent.tools import AgentTool, ToolResult

    async def handler(arguments: dict, context: object) -> ToolResult:
        return ToolResult(content=[], structured={"celsius": "warm"}, schema_problem="$.celsius: not a number")

    tool = AgentTool(name="get_weather", description="", input_schema={"type": "object"}, handler=handler,
                     source="mcp:srv")
    run = Run(["anthropic/stream-tool-use.sse", "anthropic/stream-text.sse"], [tool], policy={"get_weather": "allow"})
    await run.loop.run()
    [end] = run.of("tool_end")
    assert end["structured_content"] == {"celsius": "warm"} and end["schema_problem"] == "$.celsius: not a number"


async def test_mcp_errors_and_images_come_back_as_results(mcp_url: str) -> None:
    async with ClientSession(mcp_url) as session:
        await session.list_tools()
        tools = {tool.name: tool for tool in session_tools("srv", session)}
        from pycore.agent.tools import ToolContext

        failed = await tools["broken"].handler({}, ToolContext(call_id="1"))
        assert failed.is_error and failed.content == [{"type": "text", "text": "Error executing tool broken"}]
        picture = await tools["picture"].handler({}, ToolContext(call_id="2"))
        assert [c["type"] for c in picture.content] == ["text", "image"]
        assert [p.type for p in picture.model_content()] == ["text", "image"]


async def test_stop_while_an_mcp_tool_runs_sends_notifications_cancelled(mcp_url: str) -> None:
    from pycore.adapters.fake import encode_turn
    from pycore.http.replay import Recording
    from pycore.messages import ToolCallPart

    turn = encode_turn([ToolCallPart(id="call_hang", name="hang", arguments={"label": "stop-test"})])
    async with ClientSession(mcp_url) as session:
        await session.list_tools()
        run = Run([Recording(turn, content_type="application/x-ndjson")], session_tools("srv", session),
                  vendor="fake", policy={"hang": "allow"})
        task = asyncio.ensure_future(run.loop.run())
        while not run.of("tool_progress") and not task.done():
            await asyncio.sleep(0.01)
        task.cancel()
        result = await task
        assert result.stop_reason == "stopped"
        assert run.of("tool_progress")[0] == {"type": "tool_progress", "step": 1, "call_id": "call_hang",
                                              "progress": 1.0, "total": 10, "message": "started"}
        for _ in range(100):  # the server handles the notification on its own time
            report = await session.call_tool("cancellations", {})
            if "stop-test" in report.text():
                break
            await asyncio.sleep(0.02)
        assert report.text() == "stop-test"
    assert run.messages()[-1]["parts"][0]["content"][0]["text"] == "cancelled: stopped by the user"


async def test_a_tool_timeout_cancels_the_mcp_call_too(mcp_url: str) -> None:
    from pycore.adapters.fake import encode_turn
    from pycore.http.replay import Recording
    from pycore.messages import ToolCallPart

    turns = [encode_turn([ToolCallPart(id="c1", name="hang", arguments={"label": "timeout-test"})]),
             encode_turn(["done"])]
    async with ClientSession(mcp_url) as session:
        await session.list_tools()
        run = Run([Recording(t, content_type="application/x-ndjson") for t in turns], session_tools("srv", session),
                  vendor="fake", limits=Limits(tool_timeout=0.5), policy={"hang": "allow"})
        result = await run.loop.run()
        assert result.stop_reason == "end_turn"
        assert run.of("tool_end")[0]["content"][0]["text"] == "hang did not answer within 0.5 s and was cancelled"
        for _ in range(100):
            report = await session.call_tool("cancellations", {})
            if "timeout-test" in report.text():
                break
            await asyncio.sleep(0.02)
        assert "timeout-test" in report.text()


async def test_chat_run_over_the_wire_with_mcp_tools_ask_then_allow(mcp_url: str) -> None:
    """delete_file is destructive: the run asks; the page allows through chat.approve."""
    from pycore.adapters.fake import encode_turn
    from pycore.messages import ToolCallPart

    turns = [encode_turn([ToolCallPart(id="c9", name="srv__delete_file", arguments={"path": "/tmp/x"})]),
             encode_turn(["All done."])]

    def transport() -> ReplayTransport:
        from pycore.http.replay import Recording

        return ReplayTransport([Recording(t, content_type="application/x-ndjson") for t in turns])

    approvals: list[asyncio.Task] = []

    def on_event(event: dict) -> None:
        if event["type"] == "approval":
            approvals.append(asyncio.ensure_future(call("chat.approve", {"call_id": event["call_id"],
                                                                         "decision": "allow"})))

    _provider.use_transport(transport)
    try:
        await call("mcp.connect", {"id": "srv", "url": mcp_url})
        await call("mcp.connect", {"id": "other", "url": mcp_url})
        result, events = await call("chat.run", {
            "provider": {"vendor": "fake", "api_key": KEY}, "model": "m",
            "messages": [{"role": "user", "parts": [{"type": "text", "text": "delete it"}]}],
            "tools": {"mcp": ["srv", "other"]}}, on_event)
    finally:
        _provider.use_transport(None)
        await call("mcp.disconnect", {"id": "srv"})
        await call("mcp.disconnect", {"id": "other"})
    assert result["stop_reason"] == "end_turn"
    assert [e["type"] for e in events if e["type"] in ("approval", "tool_start", "tool_end")] == [
        "approval", "tool_start", "tool_end"]
    end = next(e for e in events if e["type"] == "tool_end")
    assert end["content"] == [{"type": "text", "text": "deleted /tmp/x"}] and not end["is_error"]
    assert (await approvals[0])[0] == {}


async def test_the_loop_tells_the_page_the_handle_of_a_call_that_became_a_task() -> None:
    """The handle is what a reload needs to pick the task up again: the run's tool_task event carries it, named
    as the model called the tool and after the page's server id."""
    from mcp_servers import serve_asgi
    from tasks_server import TasksState, tasks_app

    from pycore.adapters.fake import encode_turn
    from pycore.http.replay import Recording
    from pycore.messages import ToolCallPart

    turns = [encode_turn([ToolCallPart(id="call_render", name="render", arguments={"frames": 1})]),
             encode_turn(["Done."])]
    with serve_asgi(lambda base: tasks_app(TasksState())) as (base, _):
        async with ClientSession(f"{base}/mcp") as mcp:
            await mcp.list_tools()
            run = Run([Recording(turn, content_type="application/x-ndjson") for turn in turns],
                      session_tools("url:tasks", mcp), vendor="fake", policy={"render": "allow"})
            await run.loop.run()
    [event] = run.of("tool_task")
    handle = event.pop("handle")
    assert event == {"type": "tool_task", "step": 1}
    created = handle.pop("created")
    assert abs(created - time.time() * 1000) < 60_000
    assert handle == {"server_id": "url:tasks", "task_id": handle["task_id"], "call_id": "call_render",
                      "name": "render", "tool": "render", "ttl_ms": 600_000}
