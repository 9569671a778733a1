"""SECURITY.md §8 client cases (T-C*) and the error cases of issue 4 item 5, against a scripted server."""

from __future__ import annotations

import asyncio
import base64

import pytest
from scripted_server import Script, serve

from pycore.mcp import (
    ClientSession,
    MCPAuthRequiredError,
    MCPConnectionError,
    MCPConnectionLostError,
    MCPCORSError,
    MCPError,
    MCPPaginationError,
    MCPProtocolError,
    MCPTimeoutError,
    MCPUnsupportedVersionError,
)


def posted(script: Script, method: str) -> list[dict]:
    return [r for r in script.requests if r["method"] == "POST" and (r["body"] or {}).get("method") == method]


@pytest.mark.parametrize("answer", ["json", "sse"])
async def test_c1_json_and_sse_answers_are_the_same(answer: str) -> None:
    script = Script(answer=answer)
    with serve(script) as url:
        async with ClientSession(url) as mcp:
            out = await mcp.call_tool("echo", {})
    assert out.text() == "called echo"
    accept = posted(script, "tools/call")[0]["headers"]["accept"]
    assert "application/json" in accept and "text/event-stream" in accept
    assert posted(script, "notifications/initialized")  # a notification: answered 202, accepted


async def test_c3_tool_that_never_answers_times_out_and_is_cancelled() -> None:
    script = Script()
    with serve(script) as url:
        async with ClientSession(url) as mcp:
            with pytest.raises(MCPTimeoutError):
                await mcp.call_tool("hang", {}, timeout=0.3)
            await asyncio.sleep(0.2)
            call_id = posted(script, "tools/call")[0]["body"]["id"]
            cancelled = posted(script, "notifications/cancelled")
            assert cancelled and cancelled[0]["body"]["params"]["requestId"] == call_id
            assert (await mcp.call_tool("echo", {})).text() == "called echo"


async def test_c4_expired_session_reinitializes_without_the_header() -> None:
    script = Script(expire_once=True)
    with serve(script) as url:
        async with ClientSession(url) as mcp:
            assert (await mcp.call_tool("echo", {})).text() == "called echo"
    inits = posted(script, "initialize")
    assert len(inits) == 2 and all("mcp-session-id" not in r["headers"] for r in inits)
    assert posted(script, "tools/call")[-1]["headers"]["mcp-session-id"] == "s2"


async def test_c5_hidden_session_id_is_a_cors_error_not_a_loop() -> None:
    script = Script(session_header=False)
    with serve(script) as url:
        with pytest.raises(MCPCORSError, match="Access-Control-Expose-Headers: Mcp-Session-Id"):
            async with ClientSession(url) as mcp:
                await mcp.list_tools()
    assert script.initializes == 1


async def test_c6_protocol_version_header_and_negotiation() -> None:
    script = Script(version="2025-06-18")
    with serve(script) as url:
        async with ClientSession(url) as mcp:
            await mcp.list_tools()
    assert posted(script, "initialize")[0]["body"]["params"]["protocolVersion"] == "2025-11-25"
    later = [r for r in script.requests if (r["body"] or {}).get("method") not in ("initialize", "server/discover")]
    assert later and all(r["headers"].get("mcp-protocol-version") == "2025-06-18" for r in later)


async def test_c6_unknown_protocol_version_disconnects() -> None:
    script = Script(version="2099-01-01")
    with serve(script) as url:
        with pytest.raises(MCPUnsupportedVersionError):
            async with ClientSession(url):
                pass
    assert not posted(script, "notifications/initialized")


async def test_c7_legacy_sse_same_origin_works() -> None:
    script = Script(legacy=True)
    with serve(script) as url:
        async with ClientSession(url) as mcp:
            assert mcp.transport_kind == "sse"
            assert [t.name for t in await mcp.list_tools()] == ["echo", "content"]


async def test_c7_legacy_endpoint_on_another_origin_is_refused() -> None:
    script = Script(legacy=True, endpoint="http://evil.example/steal")
    with serve(script) as url:
        with pytest.raises(MCPProtocolError, match="another origin"):
            async with ClientSession(url, headers={"Authorization": "Bearer secret"}):
                pass
    assert all("evil" not in str(r) for r in script.requests)


async def test_c9_repeated_cursor_stops() -> None:
    script = Script(repeat_cursor=True)
    with serve(script) as url:
        async with ClientSession(url) as mcp:
            with pytest.raises(MCPPaginationError, match="repeated cursor"):
                await mcp.list_tools()
    assert script.tools_lists == 2


async def test_c10_c13_list_changed_storm_ping_and_unknown_progress() -> None:
    script = Script()
    relists: list[int] = []
    with serve(script) as url:
        async with ClientSession(url, on_tools_changed=lambda tools: relists.append(len(tools))) as mcp:
            assert (await mcp.call_tool("storm", {})).text() == "called storm"
            await asyncio.sleep(0.8)
    assert 1 <= script.tools_lists <= 2 and relists
    pongs = [r for r in script.requests if (r["body"] or {}).get("id") == "srv-1"]
    assert pongs and pongs[0]["body"]["result"] == {}


async def test_c11_content_types_mapped_nothing_fetched() -> None:
    script = Script()
    with serve(script) as url:
        async with ClientSession(url) as mcp:
            await mcp.list_tools()
            out = await mcp.call_tool("content", {})
    assert out.is_error
    assert [p["type"] for p in out.content] == ["text", "image", "text", "text", "text", "text", "text", "text"]
    assert out.schema_violation and "$.n" in out.schema_violation
    assert "not fetched" in out.content[4]["text"]
    assert not [r for r in script.requests if "passwd" in str(r["body"]) and r["method"] == "GET"]


async def test_unreachable_url() -> None:
    with pytest.raises(MCPConnectionError, match="Couldn.t reach the MCP server at 127.0.0.1:9: "):
        async with ClientSession("http://127.0.0.1:9/mcp"):
            pass


async def test_401_is_a_distinct_error() -> None:
    with serve(Script(unauthorized=True)) as url:
        with pytest.raises(MCPAuthRequiredError) as caught:
            async with ClientSession(url):
                pass
    assert caught.value.status == 401 and "resource_metadata" in (caught.value.www_authenticate or "")


async def test_malformed_json_rpc_and_server_dying_mid_call() -> None:
    with serve(Script()) as url:
        async with ClientSession(url, timeout=5) as mcp:
            with pytest.raises(MCPProtocolError, match="not JSON"):
                await mcp.call_tool("garbage", {})
            with pytest.raises(MCPConnectionLostError):
                await mcp.call_tool("die", {})
            assert (await mcp.call_tool("echo", {})).text() == "called echo"


async def test_c8_modern_refusal_retries_with_a_version_it_lists() -> None:
    refusal = {"jsonrpc": "2.0", "id": None, "error": {"code": -32022, "message": "Unsupported protocol version",
                                                       "data": {"supported": ["2026-07-28", "2025-06-18"]}}}
    script = Script(refuse_initialize=[refusal])
    with serve(script) as url:
        async with ClientSession(url) as mcp:
            assert mcp.protocol_version == "2025-06-18" and mcp.transport_kind == "streamable-http"
            await mcp.list_tools()
    versions = [r["body"]["params"]["protocolVersion"] for r in posted(script, "initialize")]
    assert versions == ["2025-11-25", "2025-06-18"]
    assert [r["method"] for r in script.requests][:2] == ["POST", "POST"]  # retried at once, no legacy GET


async def test_c8_modern_only_server_is_a_clear_version_error() -> None:
    refusal = {"jsonrpc": "2.0", "id": None, "error": {"code": -32022, "message": "Unsupported protocol version",
                                                       "data": {"supported": ["2026-07-28"]}}}
    with serve(Script(refuse_initialize=[refusal])) as url:
        with pytest.raises(MCPUnsupportedVersionError, match="only speaks MCP protocol 2026-07-28"):
            async with ClientSession(url):
                pass


async def test_c8_empty_400_falls_back_to_the_legacy_transport() -> None:
    script = Script(refuse_initialize=[None])
    with serve(script) as url:
        with pytest.raises(MCPError):  # this server has no legacy SSE either: the fallback was tried
            async with ClientSession(url):
                pass
    assert [r["method"] for r in script.requests][:3] == ["POST", "POST", "GET"]  # the probe, initialize, legacy
    assert script.requests[0]["body"]["method"] == "server/discover"


async def test_c12_clashing_spaced_and_overlong_names_are_namespaced_and_map_back() -> None:
    from pycore.agent.mcp_tools import session_tools
    from pycore.agent.tools import PORTABLE_NAME, ToolContext, ToolRegistry

    long_name = "x" * 300
    odd = [{"name": n, "inputSchema": {"type": "object"}} for n in ("search", "my tool", long_name, long_name + "y")]
    one, two = Script(tools=odd), Script(tools=[{"name": "search", "inputSchema": {"type": "object"}}])
    with serve(one) as url_one, serve(two) as url_two:
        async with ClientSession(url_one) as a, ClientSession(url_two) as b:
            await a.list_tools()
            await b.list_tools()
            registry = ToolRegistry(session_tools("one", a) + session_tools("two", b))
            names = [name for name, _ in registry.items()]
            assert len(set(names)) == 5 and all(PORTABLE_NAME.match(n) for n in names)
            searches = [n for n in names if n.endswith("search")]
            assert len(searches) == 2 and searches[0] != searches[1]
            for name in searches:
                tool = registry.resolve(name)
                assert tool is not None
                await tool.handler({}, ToolContext(call_id="c"))
    assert [r["body"]["params"]["name"] for r in posted(one, "tools/call")] == ["search"]
    assert [r["body"]["params"]["name"] for r in posted(two, "tools/call")] == ["search"]


async def test_c14_only_small_raster_data_icons_survive() -> None:
    from scripted_server import PNG

    from pycore.mcp.icons import safe_icons

    svg = "data:image/svg+xml;base64," + base64.b64encode(b"<svg onload=alert(1)></svg>").decode()
    # 4 MiB: far past an icon's 64 KiB, under the 8 MiB message cap (a 20 MB one refuses the whole list: T-Z1)
    big = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * (4 * 1024 * 1024)).decode()
    icons = [{"src": s, "mimeType": "image/png"} for s in (
        "javascript:alert(1)", "TRACKER", "https://other.example/i.png", svg, big,
        "data:image/png;base64," + PNG, "data:image/gif;base64," + PNG)]
    script = Script()
    with serve(script) as url:
        icons[1]["src"] = url.replace("/mcp", "/tracker.png")  # the server's own origin, still not loaded
        script.tools = [{"name": "iconic", "inputSchema": {"type": "object"}, "icons": icons}]
        async with ClientSession(url) as mcp:
            tools = await mcp.list_tools()
    kept = safe_icons(tools[0].icons)
    assert [icon["mimeType"] for icon in kept] == ["image/png", "image/png"]  # the "gif" is a PNG: re-labelled
    assert all(icon["src"].startswith("data:image/png;base64,") for icon in kept)
    assert not [r for r in script.requests if "path" in r]  # nothing but MCP traffic reached the server


async def test_c15_url_elicitation_is_refused_and_its_url_never_requested() -> None:
    script = Script(answer="sse")
    with serve(script) as url:
        script.elicit_url = url.replace("/mcp", "/phish?token=steal")
        async with ClientSession(url) as mcp:
            out = await mcp.call_tool("elicit", {})
    assert out.text() == "called elicit"
    answer = next(r["body"] for r in script.requests if (r["body"] or {}).get("id") == "srv-elicit")
    assert answer["error"]["code"] == -32601  # we advertise no elicitation: "method not found"
    assert not [r for r in script.requests if "phish" in r.get("path", "")]  # the URL was never requested
    initialize = posted(script, "initialize")[0]["body"]["params"]
    assert "elicitation" not in initialize["capabilities"]
