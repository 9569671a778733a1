"""Issue 17 items 4 and 6 against real loopback servers (CPython; the pure half is test_trust_boundaries.py).

- T-U1: an MCP server that answers 307 to another origin (another loopback port) ⇒ the client stops with an
  error naming the target; the other server never sees a request, a user header or a token.
- T-Z1: a 40 MB ``tools/list`` (JSON, with or without Content-Length, or as one SSE event) and an SSE event
  that never ends ⇒ refused past the 8 MiB message cap, naming the server and the cap, without reading on.
"""

from __future__ import annotations

import time

import pytest
from scripted_server import Script, serve

from pycore.http.httpx import HttpxTransport
from pycore.mcp import ClientSession, MCPError
from pycore.mcp.oauth import ClientRegistration, MemoryOAuthStore, OAuthClient, TokenSet

SECRET = {"x-api-key": "user-secret"}
MIB = 1024 * 1024


def posted(script: Script, method: str) -> list[dict]:
    return [r for r in script.requests if r["method"] == "POST" and (r["body"] or {}).get("method") == method]


async def test_u1_initialize_redirected_to_another_origin_goes_no_further() -> None:
    elsewhere = Script()
    with serve(elsewhere) as target:
        home = Script(redirect={"*": target})
        with serve(home) as url:
            with pytest.raises(MCPError) as caught:
                async with ClientSession(url, headers=SECRET):
                    pass
    assert type(caught.value).__name__ == "MCPRedirectError" and caught.value.status == 307
    assert f"redirected the request to {target}" in str(caught.value) and "not followed" in str(caught.value)
    assert elsewhere.requests == []
    assert [r["headers"]["x-api-key"] for r in home.requests] == ["user-secret"]


async def test_u1_a_redirect_mid_session_keeps_the_token_and_headers_home() -> None:
    elsewhere = Script()
    with serve(elsewhere) as target:
        home = Script(redirect={"tools/call": target})
        with serve(home) as url:
            store = MemoryOAuthStore()
            client = ClientRegistration(issuer="https://as.example", client_id="c")
            await store.set_tokens(TokenSet(access_token="secret-token", resource=url, issuer="https://as.example",
                                            token_endpoint="https://as.example/token", client=client))
            http = OAuthClient(HttpxTransport(), store).transport_for(url, HttpxTransport())
            async with ClientSession(url, http=http, headers=SECRET) as mcp:
                with pytest.raises(MCPError, match=f"redirected the request to {target}") as caught:
                    await mcp.call_tool("echo", {})
                assert [t.name for t in await mcp.list_tools()] == ["echo", "content"]  # the session goes on
            await http.aclose()
    assert type(caught.value).__name__ == "MCPRedirectError"
    assert elsewhere.requests == []
    call = posted(home, "tools/call")[0]["headers"]
    assert call["authorization"] == "Bearer secret-token" and call["x-api-key"] == "user-secret"


async def test_u1_legacy_sse_stream_redirected_to_another_origin() -> None:
    elsewhere = Script(legacy=True)
    with serve(elsewhere) as target:
        home = Script(legacy=True, redirect={"GET": target})
        with serve(home) as url:
            with pytest.raises(MCPError, match=f"redirected the request to {target}"):
                async with ClientSession(url, headers=SECRET):
                    pass
    assert elsewhere.requests == []


def huge_tools(size: int) -> list[dict]:
    tool = {"name": "t00000", "description": "x" * 1000, "inputSchema": {"type": "object"}}
    return [dict(tool, name=f"t{i:05}") for i in range(size // 1060)]


@pytest.mark.parametrize("answer", ["json", "sse"])
async def test_z1_a_40_mb_tools_list_is_refused_past_the_cap(answer: str) -> None:
    script = Script(answer=answer, tools=huge_tools(40 * MIB))
    with serve(script) as url:
        async with ClientSession(url) as mcp:
            started = time.monotonic()
            with pytest.raises(MCPError, match="8 MiB") as caught:
                await mcp.list_tools()
            took = time.monotonic() - started
            assert (await mcp.call_tool("echo", {})).text() == "called echo"  # the session goes on
    assert type(caught.value).__name__ == "MCPTooLargeError" and url in str(caught.value)
    assert took < 10, took


async def test_z1_an_sse_event_that_never_ends_is_cut_off() -> None:
    script = Script()
    with serve(script) as url:
        async with ClientSession(url) as mcp:
            with pytest.raises(MCPError, match="8 MiB") as caught:
                await mcp.call_tool("endless", {}, timeout=30)
    assert type(caught.value).__name__ == "MCPTooLargeError" and url in str(caught.value)
    assert script.endless_sent < 40 * MIB  # the client hung up long before the server would have stopped
