"""A server restarted while connected (issue 29 item 9): its sessions are gone, and the client must notice.

The specification says a request naming an unknown session gets 404; ``@modelcontextprotocol/server-everything``
(TypeScript SDK) answers 400 "Bad Request: No valid session ID provided" instead, and the official Python SDK
404. Either way the client starts a new session and sends the call again, once. While the server is down a
call fails with a sentence naming the host and what to do, and the session says it cannot reach the server
(the Tools panel shows that) until an answer comes again.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import pytest
from mcp_servers import HERE, NODE, free_port, running
from test_server_everything import EVERYTHING

from pycore.mcp import ClientSession, MCPConnectionError

Start = Callable[[], AbstractContextManager[object]]


def everything(port: int) -> Start:
    return lambda: running([str(NODE), str(EVERYTHING), "streamableHttp"], port, env={"PORT": str(port)})


def sdk(port: int) -> Start:
    return lambda: running([sys.executable, str(HERE / "sdk_server.py"), str(port), "http"], port)


@pytest.fixture(params=["server-everything", "python-sdk"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[Start, str]]:
    if request.param == "server-everything" and (not NODE.exists() or not EVERYTHING.exists()):
        pytest.skip("npm devDependencies missing")
    port = free_port()
    start = everything(port) if request.param == "server-everything" else sdk(port)
    yield start, f"http://127.0.0.1:{port}/mcp"


async def test_a_restarted_server_gets_a_new_session_and_the_call_goes_through(server: tuple[Start, str]) -> None:
    start, url = server
    with start():
        mcp = ClientSession(url, timeout=10)
        await mcp.connect()
        await mcp.list_tools()
        assert (await mcp.call_tool("echo", {"message": "before"})).text().endswith("before")
        first_session = mcp._transport.session_id
    try:
        with start():  # the same address, a new process: it knows no session
            out = await mcp.call_tool("echo", {"message": "after"})
            assert out.text().endswith("after")
            assert mcp._transport.session_id not in (None, first_session)
            assert mcp.unreachable is None
    finally:
        await mcp.aclose()


async def test_a_server_that_went_away_is_said_to_be_unreachable_in_a_sentence(server: tuple[Start, str]) -> None:
    start, url = server
    host = url.split("/")[2]
    with start():
        mcp = ClientSession(url, timeout=10)
        await mcp.connect()
        await mcp.list_tools()
    try:
        with pytest.raises(MCPConnectionError) as caught:
            await mcp.call_tool("echo", {"message": "nobody there"})
        message = str(caught.value)
        assert message.startswith(f"Couldn't reach the MCP server at {host}: ")
        assert message.endswith("Check it's running, then Reconnect in Tools.")
        assert "Error" not in message and "Errno" not in message  # no class name, no errno
        assert mcp.unreachable is caught.value
        with start():
            assert (await mcp.call_tool("echo", {"message": "back"})).text().endswith("back")
        assert mcp.unreachable is None
    finally:
        await mcp.aclose()
