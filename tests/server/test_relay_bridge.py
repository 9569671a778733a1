"""The official MCP SDK client through the relay, against real stdio servers (SECURITY.md T-R cases elsewhere)."""

from __future__ import annotations

import sys

import anyio
import mcp_types as types
import pytest
from conftest import FAKE, FIXTURE, NODE_BIN, ROOT, mcp_client, python_server, relay, text

EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

SERVERS = {
    "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
    "everything": {"command": str(NODE_BIN / "node"), "args": [str(EVERYTHING), "stdio"]},
    "fixture": python_server(FIXTURE),
    "fake": python_server(FAKE),
}


@pytest.fixture(scope="module")
def running(dist, tmp_path_factory):
    if not EVERYTHING.is_file():
        pytest.fail("npm devDependencies missing: run `npm ci`")
    with relay(dist, tmp_path_factory.mktemp("bridge"), SERVERS) as r:
        yield r


async def test_mcp_server_time_through_the_relay(running):
    async with mcp_client(running.url("time"), running.token) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert {"get_current_time", "convert_time"} <= tools
        result = await client.call_tool("get_current_time", {"timezone": "Asia/Tokyo"})
        assert not result.is_error
        assert "Asia/Tokyo" in text(result)


async def test_server_everything_tools_resources_prompts_progress(running):
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with mcp_client(running.url("everything"), running.token) as client:
        assert text(await client.call_tool("echo", {"message": "über ✓"})) == "Echo: über ✓"
        assert "7" in text(await client.call_tool("get-sum", {"a": 3, "b": 4}))
        result = await client.call_tool("trigger-long-running-operation", {"duration": 0.3, "steps": 3},
                                        progress_callback=on_progress)
        assert not result.is_error and progress == [1, 2, 3]
        assert (await client.list_resources()).resources
        assert (await client.list_prompts()).prompts


async def test_server_to_client_sampling_and_elicitation(running):
    async def sampling(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", model="m",
                                         content=types.TextContent(type="text", text="from the browser"))

    async def elicitation(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"response": "yes"})

    async with mcp_client(running.url("fixture"), running.token, sampling_callback=sampling,
                          elicitation_callback=elicitation) as client:
        assert "from the browser" in text(await client.call_tool("test_sampling", {"prompt": "hi"}))
        assert "yes" in text(await client.call_tool("test_elicitation", {"message": "ok?"}))


async def test_logging_notifications_reach_the_client(running):
    logs: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(str(params.data))

    async with mcp_client(running.url("fixture"), running.token, logging_callback=on_log) as client:
        await client.call_tool("test_tool_with_logging", {})
    assert logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]


async def test_cancellation_reaches_the_child_and_ends_the_request(running):
    async with mcp_client(running.url("everything"), running.token) as client:
        with pytest.raises(Exception):  # noqa: B017  (the SDK's timeout error type is not public API)
            await client.call_tool("trigger-long-running-operation", {"duration": 30, "steps": 30},
                                   read_timeout_seconds=0.5)
        # The session is still usable afterwards.
        assert text(await client.call_tool("echo", {"message": "still here"})) == "Echo: still here"


async def test_legacy_sse_transport(running):
    async with mcp_client(running.url("fixture", "sse"), running.token, transport="sse") as client:
        assert text(await client.call_tool("echo", {"message": "over sse"})) == "Echo: over sse"
        assert (await client.read_resource("test://static-text")).contents


async def test_bundled_demo_server(dist, tmp_path):
    with relay(dist, tmp_path, None) as r:
        async with mcp_client(r.url("demo"), r.token) as client:
            assert text(await client.call_tool("calculate", {"expression": "2**10 + sqrt(16)"})) == "1028.0"
            assert "Europe/Paris" in text(await client.call_tool("current_time", {"timezone": "Europe/Paris"}))
            assert "words" in text(await client.call_tool("text_stats", {"text": "one two. three"}))
            assert (await client.read_resource("orizuru://demo/about")).contents
            prompt = await client.get_prompt("time_difference", {"city_a": "Paris", "city_b": "Tokyo"})
            assert "Tokyo" in prompt.messages[0].content.text


async def test_sixteen_concurrent_sessions_get_only_their_own_responses(running):
    async def one(i: int, seen: dict[int, list[str]]) -> None:
        async with mcp_client(running.url("fixture"), running.token) as client:
            for j in range(10):
                seen[i].append(text(await client.call_tool("echo", {"message": f"session-{i}-call-{j}"})))

    seen: dict[int, list[str]] = {i: [] for i in range(16)}
    async with anyio.create_task_group() as tg:
        for i in range(16):
            tg.start_soon(one, i, seen)
    for i in range(16):
        assert seen[i] == [f"Echo: session-{i}-call-{j}" for j in range(10)]
