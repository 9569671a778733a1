"""The loop over real HTTP (httpx) against the loopback server replaying recordings with their real
status codes and chunked bodies: a 401 mid-loop, a stream dropped mid-loop, Stop aborting the request."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from agent_helpers import KEY, Calls
from vendor_fixtures import no_sleep

from pycore.adapters import get_adapter
from pycore.agent.loop import AgentLoop
from pycore.agent.tools import ToolRegistry
from pycore.client import ChatClient
from pycore.http import Request, Response, Transport
from pycore.http.httpx import HttpxTransport
from pycore.messages import ChatRequest, Message

sys.path.insert(0, str(Path(__file__).parents[1] / "http"))
from loopback import LoopbackServer  # noqa: E402


@pytest.fixture(scope="module")
def server():
    with LoopbackServer() as s:
        yield s


class Routes(Transport):
    """The n-th request goes to the n-th loopback route, whatever URL the adapter built."""

    def __init__(self, base: str, routes: list[str]) -> None:
        self.base, self.routes, self.inner, self.sent = base, routes, HttpxTransport(), 0

    async def send(self, request: Request) -> Response:
        route = self.routes[min(self.sent, len(self.routes) - 1)]
        self.sent += 1
        return await self.inner.send(Request(request.method, f"{self.base}/{route}", request.headers, request.body))

    async def aclose(self) -> None:
        await self.inner.aclose()


async def run_loop(server: LoopbackServer, vendor: str, routes: list[str], tools: list, events: list):
    transport = Routes(server.url, routes)
    client = ChatClient(get_adapter(vendor, api_key=KEY), transport, sleep=no_sleep)
    loop = AgentLoop(client, ChatRequest(model="m", messages=[Message.user("go")]), ToolRegistry(tools),
                     emit=events.append)
    try:
        return await loop.run()
    finally:
        await transport.aclose()


async def test_a_401_after_a_tool_step_over_http(server: LoopbackServer) -> None:
    events: list[dict] = []
    calls = Calls()
    result = await run_loop(server, "openai", ["replay/openai/chat-stream-tool-call.sse",
                                               "replay/openai/error-401-invalid-api-key.json"],
                            [calls.tool("get_capital")], events)
    assert result.stop_reason == "error" and result.error.status == 401
    assert calls.log == [("get_capital", {"country": "UK"})]
    assert [e["message"]["role"] for e in events if e["type"] == "message"] == ["assistant", "user"]
    assert KEY not in repr(events) + repr(result.to_json())


async def test_a_stream_dropped_mid_loop_over_http(server: LoopbackServer) -> None:
    events: list[dict] = []
    result = await run_loop(server, "gemini", ["replay/gemini/stream-function-call.sse",
                                               "cut/200/gemini/stream-text.sse"], [Calls().tool("get_capital")], events)
    assert result.stop_reason == "error" and result.error.type == "connection_error"
    assert [e["step"] for e in events if e["type"] == "error"] == [2]


async def test_stop_aborts_the_http_stream_mid_loop(server: LoopbackServer) -> None:
    events: list[dict] = []
    server.aborted.clear()
    task = asyncio.ensure_future(run_loop(server, "anthropic", ["replay/anthropic/stream-tool-use.sse",
                                                                "slow/anthropic/stream-thinking.sse"],
                                          [Calls().tool("get_weather")], events))
    while not any(e.get("step") == 2 and e["type"] == "reasoning_delta" for e in events):
        await asyncio.sleep(0.01)
    task.cancel()
    result = await task
    assert result.stop_reason == "stopped"
    last = [e for e in events if e["type"] == "message"][-1]
    assert last["incomplete"] is True and last["message"]["parts"][0]["type"] == "reasoning"
    assert await asyncio.get_running_loop().run_in_executor(None, server.aborted.wait, 5)
