"""The client against a real server built on the official SDK, over streamable HTTP and legacy SSE."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from mcp_servers import sdk_server

from pycore.mcp import ClientSession, MCPRPCError, MCPTimeoutError


@pytest.fixture(scope="module", params=["http", "sse"])
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    server, url = sdk_server(request.param)
    with server:
        yield url


async def test_initialize_and_three_pages_of_tools(url: str) -> None:
    async with ClientSession(url) as mcp:
        assert mcp.server is not None and mcp.server.server_info.name == "orizuru-test"
        assert mcp.transport_kind == ("sse" if url.endswith("/sse") else "streamable-http")
        names = [tool.name for tool in await mcp.list_tools()]
    # pages of 3, 2, then the rest; tools added by other tests' ``grow`` come last
    assert names[:7] == ["echo", "add", "weather", "fail", "slow", "everything", "grow"]
    assert len(names) == len(set(names))


async def test_call_text_and_structured(url: str) -> None:
    async with ClientSession(url) as mcp:
        await mcp.list_tools()
        assert (await mcp.call_tool("echo", {"message": "hi"})).text() == "Echo: hi"
        weather = await mcp.call_tool("weather", {"city": "Kyoto"})
        assert weather.structured == {"city": "Kyoto", "celsius": 21.5}
        assert weather.schema_violation is None and not weather.is_error


async def test_failing_tool_is_an_error_result_not_an_exception(url: str) -> None:
    async with ClientSession(url) as mcp:
        out = await mcp.call_tool("fail", {"reason": "kaput"})
    assert out.is_error and "fail" in out.text()  # the SDK hides an unexpected exception's message


async def test_unknown_tool(url: str) -> None:
    async with ClientSession(url) as mcp:
        try:
            out = await mcp.call_tool("nope", {})
        except MCPRPCError as e:  # older servers: a protocol error
            assert e.code < 0
        else:
            assert out.is_error


async def test_every_content_type(url: str) -> None:
    async with ClientSession(url) as mcp:
        out = await mcp.call_tool("everything")
    kinds = [part["type"] for part in out.content]
    assert kinds == ["text", "image", "text", "text", "text"]
    assert "file:///etc/passwd" in out.content[3]["text"] and "not fetched" in out.content[3]["text"]
    assert "embedded text" in out.content[4]["text"]
    assert [a["type"] for a in out.attachments] == ["audio", "resource_link"]


async def test_slow_tool_progress_and_timeout(url: str) -> None:
    seen: list[float] = []
    async with ClientSession(url) as mcp:
        out = await mcp.call_tool("slow", {"seconds": 0.2}, on_progress=lambda p, total, msg: seen.append(p))
        assert out.text() == "slept 0.2"
        with pytest.raises(MCPTimeoutError):
            await mcp.call_tool("slow", {"seconds": 5}, timeout=0.3)
        assert (await mcp.call_tool("echo", {"message": "still alive"})).text() == "Echo: still alive"
    assert seen == [1, 2, 3, 4]


async def test_list_changed_relists(url: str) -> None:
    changed: asyncio.Queue[list[str]] = asyncio.Queue()
    async with ClientSession(url, on_tools_changed=lambda tools: changed.put_nowait([t.name for t in tools])) as mcp:
        await mcp.list_tools()
        await mcp.call_tool("grow", {"name": f"new_{id(mcp)}"})
        names = await asyncio.wait_for(changed.get(), 5)
    assert f"new_{id(mcp)}" in names


async def test_resources_prompts_ping(url: str) -> None:
    async with ClientSession(url) as mcp:
        await mcp.ping()
        resources = await mcp.list_resources()
        assert [str(r.uri) for r in resources] == ["test://static"]
        read = await mcp.read_resource("test://static")
        assert read.contents[0].text == "static content"  # type: ignore[union-attr]
        prompts = await mcp.list_prompts()
        assert [p.name for p in prompts] == ["greet"]
        got = await mcp.get_prompt("greet", {"name": "Ada"})
        assert "Hello, Ada!" in got.messages[0].content.text  # type: ignore[union-attr]


async def test_the_servers_log_is_kept_with_its_levels_and_without_the_credential(url: str) -> None:
    token = "tok-abcdef123456"
    async with ClientSession(url, headers={"Authorization": f"Bearer {token}"}) as mcp:
        await mcp.list_tools()
        assert (await mcp.call_tool("chatty", {"secret": token})).text() == "logged"
        entries = list(mcp.log)
    assert [(e["level"], e["logger"]) for e in entries] == [("info", "chatty"), ("warning", None), ("error", None),
                                                            ("debug", None)]
    assert entries[0]["data"] == "starting" and entries[1]["data"] == {"step": 2, "note": "structured"}
    assert entries[2]["data"] == "the header was [redacted]" and token not in str(entries)
    assert isinstance(entries[3]["data"], str) and len(entries[3]["data"]) <= 4001 and entries[3]["data"].endswith("…")
    assert all(isinstance(e["time"], float) for e in entries)
