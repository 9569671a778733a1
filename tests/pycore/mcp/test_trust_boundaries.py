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
from pycore.mcp import MCPProtocolError, OAuthError
from pycore.mcp.oauth import AuthorizedTransport, ClientRegistration, MemoryOAuthStore, OAuthClient, TokenSet
from pycore.mcp.oauth_urls import check_url, resource_covers
from pycore.mcp.sse_legacy import LegacySSETransport

pytestmark = pytest.mark.pyodide
URL = "https://mcp.example.com/mcp"


class Scripted(Transport):
    """Answers each request with ``answer(request, body)``; keeps every request sent."""

    def __init__(self, answer: Callable[[Request, dict | None], Recording]) -> None:
        self.answer = answer
        self.requests: list[Request] = []

    async def send(self, request: Request) -> Response:
        self.requests.append(request)
        body = json.loads(request.body) if request.body else None
        return ReplayResponse(self.answer(request, body))


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


async def _ignore(message: object) -> None:
    return None


def _ignore_failure(request_id: object, error: object) -> None:
    return None
