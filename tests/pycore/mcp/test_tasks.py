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
