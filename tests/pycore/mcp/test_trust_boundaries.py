"""Issue 17 items 4 and 6, the pure half (SECURITY.md T-U1, T-U2, T-U3, T-Z1): over a scripted transport, so
they run in CPython and inside Pyodide. The same cases against real loopback servers: test_trust_loopback.py.

- T-U1: no MCP or OAuth request asks the transport to follow a redirect (the browser's fetch would, with
  every header); a redirect answer is an error naming where it pointed (or saying the browser hides it).
- T-U2: the legacy ``endpoint``, the OAuth resource and the token's binding are judged as the browser reads
  the URL; what the readings could disagree on is refused.
- T-U3: OAuth metadata naming loopback or link-local hosts in any encoding is refused.
- T-Z1: an answer past the message cap (a JSON body, an SSE event) is refused, naming the server and the cap.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from pycore.http import Request, Response, Transport
from pycore.http.replay import Recording, ReplayResponse
from pycore.mcp import ClientSession, MCPError, MCPHTTPError, MCPProtocolError, OAuthError, _base
from pycore.mcp.oauth import AuthorizedTransport, ClientRegistration, MemoryOAuthStore, OAuthClient, TokenSet
from pycore.mcp.oauth_urls import check_url, resource_covers
from pycore.mcp.sse_legacy import LegacySSETransport

pytestmark = pytest.mark.pyodide
URL = "https://mcp.example.com/mcp"
SECRET = {"x-api-key": "user-secret"}
CAP = 8 * 1024 * 1024  # pycore.mcp._base.MAX_MESSAGE_BYTES


class Scripted(Transport):
    """Answers each request with ``answer(request, body)``; keeps every request sent."""

    def __init__(self, answer: Callable[[Request, dict | None], Recording]) -> None:
        self.answer = answer
        self.requests: list[Request] = []

    async def send(self, request: Request) -> Response:
        self.requests.append(request)
        try:
            body = json.loads(request.body) if request.body else None
        except ValueError:
            body = None  # a form (OAuth)
        return ReplayResponse(self.answer(request, body))


def mcp_server(tools_list: Callable[[dict], Recording] | None = None) -> Callable[[Request, dict | None], Recording]:
    """A well-behaved streamable HTTP server; ``tools_list`` answers tools/list instead."""

    def answer(request: Request, body: dict | None) -> Recording:
        if request.method != "POST":
            return Recording(b"", status=405)
        if body is None or "id" not in body:
            return Recording(b"", status=202)
        if body["method"] == "tools/list" and tools_list is not None:
            return tools_list(body)
        result = {"tools": []}
        if body["method"] == "initialize":
            result = {"protocolVersion": body["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "fake", "version": "1"}}
        return Recording(json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}).encode(),
                         headers={"mcp-session-id": "s1"})

    return answer


def redirect(location: str | None, status: int = 307) -> Callable[[Request, dict | None], Recording]:
    headers = {"location": location} if location else {}
    return lambda request, body: Recording(b"", status=status, headers=headers, content_type="text/plain")


# -- T-U1: never follow a redirect --------------------------------------------------------------------------


async def test_u1_no_mcp_request_asks_to_follow_redirects() -> None:
    http = Scripted(mcp_server())
    async with ClientSession(URL, http=http, headers=SECRET) as mcp:
        await mcp.list_tools()
    assert {r.method for r in http.requests} >= {"POST", "GET", "DELETE"}
    assert [r for r in http.requests if r.follow_redirects] == []


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_u1_a_redirect_is_an_error_naming_its_target(status: int) -> None:
    http = Scripted(redirect("https://evil.example/collect", status))
    with pytest.raises(MCPError, match="https://evil.example/collect") as caught:
        async with ClientSession(URL, http=http, headers=SECRET):
            pass
    assert type(caught.value).__name__ == "MCPRedirectError"
    assert isinstance(caught.value, MCPHTTPError) and caught.value.status == status
    assert "not followed" in str(caught.value) and URL in str(caught.value)
    assert caught.value.location == "https://evil.example/collect"
    assert len(http.requests) == 1  # the initialize, nothing after it
    assert "user-secret" not in str(caught.value)


async def test_u1_a_redirect_the_browser_hides_is_an_error_too() -> None:
    """In a browser, ``redirect: "manual"`` gives status 0 ("opaqueredirect"), its target hidden."""
    http = Scripted(redirect(None, status=0))
    with pytest.raises(MCPError, match="the browser does not show where") as caught:
        async with ClientSession(URL, http=http, headers=SECRET):
            pass
    assert caught.value.location is None and len(http.requests) == 1


async def test_u1_a_same_origin_redirect_says_which_url_to_use() -> None:
    http = Scripted(redirect("/mcp/"))
    with pytest.raises(MCPError, match="connect to https://mcp.example.com/mcp/ instead"):
        async with ClientSession(URL, http=http):
            pass


async def test_u1_legacy_sse_stream_redirected() -> None:
    http = Scripted(redirect("https://evil.example/sse"))
    transport = LegacySSETransport(URL, http, _ignore, _ignore_failure, headers=SECRET)
    with pytest.raises(MCPError, match="https://evil.example/sse"):
        await transport.start()
    assert [r.follow_redirects for r in http.requests] == [False]


async def test_u1_oauth_requests_never_follow_and_name_the_target() -> None:
    http = Scripted(redirect("https://evil.example/token"))
    oauth = OAuthClient(http)
    with pytest.raises(OAuthError, match="https://evil.example/token"):
        await oauth._post("https://as.example/token", b"code=c&client_secret=s", "application/x-www-form-urlencoded",
                          "token")
    problems: list[str] = []
    assert await oauth._get_json("https://as.example/.well-known/oauth-authorization-server", problems) is None
    assert "redirected to https://evil.example/token" in problems[0] and "not followed" in problems[0]
    assert [r.follow_redirects for r in http.requests] == [False, False]


# -- T-U2: origins read as the browser reads them ------------------------------------------------------------

LEGACY = "http://127.0.0.1:5000/sse"


def legacy_server(endpoint: str) -> Callable[[Request, dict | None], Recording]:
    def answer(request: Request, body: dict | None) -> Recording:
        if request.method == "GET":
            return Recording(f"event: endpoint\ndata: {endpoint}\n\n".encode(), content_type="text/event-stream")
        return Recording(b"", status=202)

    return answer


@pytest.mark.parametrize("endpoint", [
    "/\\evil.example/messages", "\\\\evil.example\\messages", "http:\\\\evil.example/messages",
    "///evil.example/messages", "http://evil.example\\@127.0.0.1:5000/messages", "/\t/evil.example/messages",
    "//evil.example/messages", "https:evil.example/messages", "http://127.0.0.1:5000@evil.example/messages",
    "http://0x7f.1:5000/messages", "http://127.0.0.1.:5000/messages", "http://127.0.0.1:5001/messages",
])
async def test_u2_legacy_endpoint_elsewhere_or_ambiguous_is_refused(endpoint: str) -> None:
    http = Scripted(legacy_server(endpoint))
    transport = LegacySSETransport(LEGACY, http, _ignore, _ignore_failure, headers={"authorization": "Bearer t"})
    with pytest.raises(MCPProtocolError, match="refused") as caught:
        await transport.start()
    await transport.aclose()
    assert transport.endpoint is None and [r.method for r in http.requests] == ["GET"]
    assert LEGACY in str(caught.value)


@pytest.mark.parametrize("endpoint, expected", [
    ("/messages?session_id=abc", "http://127.0.0.1:5000/messages?session_id=abc"),
    ("messages/", "http://127.0.0.1:5000/messages/"),
    ("http://127.0.0.1:5000/messages", "http://127.0.0.1:5000/messages"),
    ("HTTP://127.0.0.1:5000/m", "http://127.0.0.1:5000/m"),
])
async def test_u2_legacy_endpoint_on_the_same_origin_is_used(endpoint: str, expected: str) -> None:
    transport = LegacySSETransport(LEGACY, Scripted(legacy_server(endpoint)), _ignore, _ignore_failure)
    await transport.start()
    assert transport.endpoint == expected
    await transport.aclose()


def _tokens(resource: str) -> TokenSet:
    client = ClientRegistration(issuer="https://as.example", client_id="c")
    return TokenSet(access_token="secret-token", resource=resource, issuer="https://as.example",
                    token_endpoint="https://as.example/token", client=client)


@pytest.mark.parametrize("url", [
    "https://evil.example\\@mcp.example.com/mcp", "https://evil.example%2f@mcp.example.com/mcp",
    "https://mcp.example.com./mcp", "https://mcp.example.com\t/mcp", "http://mcp.example.com/mcp",
])
async def test_u2_token_never_goes_where_the_browser_would_send_it_elsewhere(url: str) -> None:
    store = MemoryOAuthStore()
    await store.set_tokens(_tokens("https://mcp.example.com"))
    http = Scripted(lambda request, body: Recording(b"{}"))
    transport = AuthorizedTransport(http, OAuthClient(http, store), URL)
    await (await transport.send(Request("POST", url, {}, b"{}"))).aclose()
    assert "authorization" not in http.requests[0].headers
    await (await transport.send(Request("POST", "https://MCP.example.com:443/mcp", {}, b"{}"))).aclose()
    assert http.requests[1].headers["authorization"] == "Bearer secret-token"  # the same origin, canonicalised


@pytest.mark.parametrize("resource, url, covered", [
    ("https://mcp.example.com", "https://evil.example\\@mcp.example.com/x", False),
    ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp/../admin", False),
    ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp/%2e%2E/admin", False),
    ("https://mcp.example.com", "https://mcp.example.com%2f@evil.example/", False),
    ("https://mcp.example.com\\@evil.example", "https://evil.example/", False),
    ("https://mcp.example.com/mcp", "https://mcp.example.com/mcpx", False),
    ("https://mcp.example.com", "https://MCP.example.com:443/x", True),
    ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp/sub?q#f", True),
])
def test_u2_resource_coverage_follows_the_browser(resource: str, url: str, covered: bool) -> None:
    assert resource_covers(resource, url) is covered


async def test_u2_resource_metadata_naming_an_ambiguous_resource_is_refused() -> None:
    metadata = {"resource": "https://evil.example\\@mcp.example.com/mcp", "authorization_servers": ["https://as.example"]}
    http = Scripted(lambda request, body: Recording(json.dumps(metadata).encode()))
    with pytest.raises(OAuthError, match="refused"):
        await OAuthClient(http).discover(URL)


# -- T-U3: loopback and link-local hosts in any encoding -----------------------------------------------------

REMOTE, LOCAL = URL, "http://127.0.0.1:8000/mcp"
ENCODED = [
    "https://127.0.0.1./", "https://0x7f000001/", "https://017700000001/", "https://2130706433/", "https://0x7f.1/",
    "https://127.1/", "https://[::ffff:127.0.0.1]/", "https://[::ffff:7f00:1]/", "https://localhost./",
    "https://LOCALHOST./", "https://foo.localhost./", "https://localhost%2e/", "https://%6cocalhost/",
    "https://127.0.0.1%2e/", "https://%31%32%37.0.0.1/", "https://2852039166/", "https://0xa9fea9fe/",
    "https://0251.0376.0251.0376/", "https://169.254.169.254./", "https://169.254.169.%32%35%34/",
    "https://[::ffff:169.254.169.254]/", "https://[fe80::1]/", "https://0xa9.254.169.254/",
    "http://127.0.0.1.:9000/token", "http://localhost.:9000/token", "http://0x7f.1:9000/token",
    "http://[::ffff:127.0.0.1]:9000/token", "http://localhost%2e:9000/token", "https://evil.example\\@127.0.0.1/",
]


@pytest.mark.parametrize("server", [REMOTE, LOCAL])
@pytest.mark.parametrize("url", ENCODED)
def test_u3_encoded_loopback_and_link_local_hosts_are_refused(url: str, server: str) -> None:
    with pytest.raises(OAuthError, match="refused"):
        check_url(url, "token endpoint", server_url=server)


@pytest.mark.parametrize("url", ["https://LOCALHOST/", "https://127.0.0.1/", "https://[::1]/", "https://a.localhost/"])
def test_u3_loopback_in_canonical_form_only_for_a_loopback_server(url: str) -> None:
    with pytest.raises(OAuthError, match="points at this machine"):
        check_url(url, "token endpoint", server_url=REMOTE)
    assert check_url(url + "token", "token endpoint", server_url=LOCAL) == url + "token"


def test_u3_a_loopback_server_written_ambiguously_is_not_local() -> None:
    with pytest.raises(OAuthError, match="refused"):
        check_url("http://127.0.0.1:9000/token", "token endpoint", server_url="http://0x7f.1:8000/mcp")


# -- T-Z1: hostile sizes -------------------------------------------------------------------------------------


def huge_tools(body: dict, size: int = CAP + 100_000, *, sse: bool = False,
               declared: bool = True) -> Recording:
    """A tools/list answer of about ``size`` bytes."""
    tool = {"name": "t0000", "description": "x" * 1000, "inputSchema": {"type": "object"}}
    tools = [dict(tool, name=f"t{i:04}") for i in range(size // (len(json.dumps(tool)) + 2))]
    message = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": tools}})
    if sse:
        return Recording(f"event: message\ndata: {message}\n\n".encode(), content_type="text/event-stream",
                         chunk_size=64 * 1024)
    headers = {"content-length": str(len(message))} if declared else {}
    return Recording(message.encode(), headers=headers, chunk_size=64 * 1024)


@pytest.mark.parametrize("how", ["declared", "chunked", "sse"])
async def test_z1_an_answer_past_the_cap_is_refused_naming_server_and_cap(how: str) -> None:
    answer = mcp_server(lambda body: huge_tools(body, sse=how == "sse", declared=how == "declared"))
    http = Scripted(answer)
    async with ClientSession(URL, http=http) as mcp:
        with pytest.raises(MCPError, match="8 MiB") as caught:
            await mcp.list_tools()
    assert URL in str(caught.value) and type(caught.value).__name__ == "MCPTooLargeError"


async def test_z1_an_answer_just_under_the_cap_is_read() -> None:
    http = Scripted(mcp_server(lambda body: huge_tools(body, CAP - 200_000)))
    async with ClientSession(URL, http=http) as mcp:
        assert len(await mcp.list_tools()) > 7000


def test_z1_the_cap_is_a_named_constant() -> None:
    assert _base.MAX_MESSAGE_BYTES == CAP


async def _ignore(message: object) -> None:
    return None


def _ignore_failure(request_id: object, error: object) -> None:
    return None


async def test_u1_the_doctor_names_a_redirect_instead_of_blaming_cors() -> None:
    from pycore.mcp.doctor import Outcome, diagnose_direct, interpret_browser

    browser = interpret_browser(URL, "https://app.example", {"simple": Outcome(ok=True, status=0),
                                                            "json": Outcome(ok=False)}, True)
    assert browser.codes() == ["redirect"] and "browser hides" in browser.findings[0].message
    http = Scripted(redirect("https://mcp.example.com/mcp/"))
    direct = await diagnose_direct(http, URL, "https://app.example", SECRET)
    assert direct.codes() == ["redirect"] and "to https://mcp.example.com/mcp/" in direct.findings[0].message
    assert [r.follow_redirects for r in http.requests] == [False]
