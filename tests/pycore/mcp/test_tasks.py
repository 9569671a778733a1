"""Tasks (the io.modelcontextprotocol/tasks extension on MCP 2026-07-28) against a real server on the official SDK
(tasks_server.py): a long call answered as a task is followed to its result, its status reported as it goes; a
question it asks is answered with tasks/update; a failed task is the server's error; a call stopped by the user
cancels its task on the server."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_servers import serve_asgi
from tasks_server import EXTENSION, TasksState, tasks_app
from wire_calls import call

from pycore.mcp import ClientSession, MCPRPCError


@pytest.fixture
def served() -> Iterator[tuple[str, TasksState]]:
    state = TasksState()
    with serve_asgi(lambda base: tasks_app(state)) as (base, _):
        yield f"{base}/mcp", state


def sent(mcp: ClientSession, method: str) -> list[dict[str, Any]]:
    return [entry["message"] for entry in mcp.traffic.entries
            if entry["dir"] == "out" and entry["message"].get("method") == method]


async def test_a_long_call_answered_as_a_task_is_followed_to_its_result_reporting_its_status(
        served: tuple[str, TasksState]) -> None:
    url, state = served
    seen: list[tuple[str | None, str | None]] = []
    async with ClientSession(url) as mcp:
        await mcp.list_tools()
        out = await mcp.call_tool("render", {"frames": 3},
                                  on_progress=lambda p, total, message, task=None: seen.append((task, message)))
    assert out.text() == "Rendered 3 frames."
    assert ("working", "Rendering frame 1 of 3") in seen and ("working", "Rendering frame 3 of 3") in seen
    [call] = sent(mcp, "tools/call")
    assert EXTENSION in call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
    gets = sent(mcp, "tasks/get")
    assert gets and {get["params"]["taskId"] for get in gets} == set(state.tasks)
    assert state.calls == [("render", {"frames": 3})]


async def test_a_task_that_asks_is_answered_with_tasks_update_and_then_completes(
        served: tuple[str, TasksState]) -> None:
    url, state = served
    asked: list[str] = []

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"note": "looks good"}}

    async with ClientSession(url, on_elicit=answer) as mcp:
        await mcp.list_tools()
        out = await mcp.call_tool("publish", {"title": "Spring"})
    assert out.text() == "Published 'Spring': looks good"
    assert asked == ["Publish 'Spring'?"]
    [update] = sent(mcp, "tasks/update")
    assert update["params"]["inputResponses"] == {"confirm": {"action": "accept", "content": {"note": "looks good"}}}


async def test_a_failed_task_is_the_servers_error(served: tuple[str, TasksState]) -> None:
    url, _ = served
    async with ClientSession(url) as mcp:
        await mcp.list_tools()
        with pytest.raises(MCPRPCError, match="the renderer ran out of memory"):
            await mcp.call_tool("explode", {})


async def test_a_call_the_user_stops_cancels_its_task_on_the_server(served: tuple[str, TasksState]) -> None:
    url, state = served
    state.gate = threading.Event()  # the frames wait: the task is running when the user stops it
    running = asyncio.Event()
    async with ClientSession(url) as mcp:
        await mcp.list_tools()
        call = asyncio.ensure_future(mcp.call_tool("render", {"frames": 2},
                                                   on_progress=lambda *args, **kwargs: running.set()))
        await asyncio.wait_for(running.wait(), 10)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        for _ in range(250):
            if state.cancelled:
                break
            await asyncio.sleep(0.02)
    assert state.cancelled == list(state.tasks)
    assert [task["status"] for task in state.tasks.values()] == ["cancelled"]


async def test_a_client_that_does_not_declare_tasks_gets_an_ordinary_answer(served: tuple[str, TasksState]) -> None:
    """The server decides; an older session (no extension declared) is answered as before."""
    url, state = served
    async with ClientSession(url) as mcp:
        await mcp.list_tools()
        assert (await mcp.call_tool("greet", {"name": "Ada"})).text() == "Hello, Ada!"
    assert state.tasks == {}


async def started_task(mcp: ClientSession, handles: list[dict[str, Any]]) -> asyncio.Future[Any]:
    """render(2) called on ``mcp`` as the loop calls it, held by the gate; returns once its task is made."""
    call = asyncio.ensure_future(mcp.call_tool("render", {"frames": 2}, on_task=handles.append))
    for _ in range(500):
        if handles:
            return call
        await asyncio.sleep(0.02)
    raise AssertionError("the call never became a task")


async def test_a_task_is_picked_up_again_by_its_id_from_another_session_and_followed_to_its_result(
        served: tuple[str, TasksState]) -> None:
    """Issue 31 item 5: the page keeps the task's id (a reload ends the session that made it); a new session
    follows the task from its state now to the same result, without calling the tool again."""
    url, state = served
    state.gate = threading.Event()
    handles: list[dict[str, Any]] = []
    seen: list[str | None] = []
    async with ClientSession(url) as first, ClientSession(url) as second:
        await first.list_tools()
        call = await started_task(first, handles)
        [created] = handles
        assert created["taskId"] in state.tasks and created["ttlMs"] == 600_000
        resumed = asyncio.ensure_future(second.resume_task(
            created["taskId"], on_progress=lambda *args, task=None: seen.append(task)))
        await asyncio.sleep(0.3)
        state.gate.set()
        result = await asyncio.wait_for(resumed, 10)
        await call
    assert result.content[0].text == "Rendered 2 frames."  # type: ignore[union-attr]
    assert "working" in seen
    assert state.calls == [("render", {"frames": 2})] and state.cancelled == []


async def test_a_task_the_server_no_longer_has_is_said_so(served: tuple[str, TasksState]) -> None:
    url, _ = served
    async with ClientSession(url) as mcp:
        await mcp.list_tools()
        with pytest.raises(MCPRPCError, match=r"the server no longer has task 'gone-1' \(it may have expired\)"):
            await mcp.resume_task("gone-1")


async def test_mcp_task_result_follows_a_kept_handle_and_gives_the_result_part_the_run_would_have(
        served: tuple[str, TasksState]) -> None:
    """The page's side of a reload: mcp.task_result with the handle the run's tool_task event carried; the status
    streams as tool_progress for the call, the result is its tool_result part; a task gone is an error result."""
    url, state = served
    state.gate = threading.Event()
    handles: list[dict[str, Any]] = []
    await call("mcp.connect", {"id": "url:tasks", "url": url})
    try:
        async with ClientSession(url) as first:
            await first.list_tools()
            made = await started_task(first, handles)
            handle = {"server_id": "url:tasks", "task_id": handles[0]["taskId"], "call_id": "call_render",
                      "name": "render", "tool": "render", "created": 1.0}
            events: list[dict[str, Any]] = []
            resumed = asyncio.ensure_future(call("mcp.task_result", {"handle": handle}, events.append))
            while not events:
                await asyncio.sleep(0.02)
            state.gate.set()
            (result, _), _ = await asyncio.wait_for(resumed, 10), await made
        gone, _ = await call("mcp.task_result", {"handle": {**handle, "task_id": "gone-1"}})
    finally:
        await call("mcp.disconnect", {"id": "url:tasks"})
    assert events[0] == {"type": "tool_progress", "step": 0, "call_id": "call_render", "progress": 0.0,
                         "message": "Rendering frame 1 of 2", "task": "working"}
    part = result["part"]
    assert (part["call_id"], part["name"], part["is_error"]) == ("call_render", "render", False)
    assert [item["text"] for item in part["content"]] == ["Rendered 2 frames."]
    assert part["display"]["source"] == "mcp:url:tasks"
    assert gone["part"]["is_error"] is True
    assert "render failed: " in gone["part"]["content"][0]["text"]
    assert "the server no longer has task 'gone-1' (it may have expired)" in gone["part"]["content"][0]["text"]



@pytest.mark.parametrize(("tool", "said"), [("explode", "MCP error -32603: the renderer ran out of memory"),
                                            ("render", "MCP error -32603: the server cancelled the task")])
async def test_a_kept_task_that_failed_or_was_cancelled_meanwhile_is_the_servers_sentence_as_the_result(
        served: tuple[str, TasksState], tool: str, said: str) -> None:
    """What happened while no page followed the task is what the model reads, and the card shows, in a sentence."""
    url, state = served
    state.gate = threading.Event()  # render waits: it ends only by being cancelled
    async with ClientSession(url) as mcp:
        await mcp.list_tools()
        created = await mcp.request("tools/call", {"name": tool, "arguments": {}})
        task_id = created["taskId"]
        if tool == "render":
            await mcp.request("tasks/cancel", {"taskId": task_id})
        while state.tasks[task_id]["status"] not in ("failed", "cancelled"):
            await asyncio.sleep(0.02)
    await call("mcp.connect", {"id": "url:tasks", "url": url})
    try:
        handle = {"server_id": "url:tasks", "task_id": task_id, "call_id": "c1", "name": tool, "tool": tool,
                  "created": 1.0}
        result, _ = await call("mcp.task_result", {"handle": handle})
    finally:
        await call("mcp.disconnect", {"id": "url:tasks"})
    assert result["part"]["is_error"] is True
    assert result["part"]["content"][0]["text"] == f"{tool} failed: {said}"


async def test_mcp_task_result_for_a_server_not_connected_fails_and_the_handle_stays_good() -> None:
    """Not a result: the page keeps the handle and says so on the card, to try again when the chat is opened."""
    handle = {"server_id": "url:nowhere", "task_id": "t1", "call_id": "c1", "name": "render", "tool": "render",
              "created": 1.0}
    with pytest.raises(Exception, match="no MCP server 'url:nowhere' is connected"):
        await call("mcp.task_result", {"handle": handle})
