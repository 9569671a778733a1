"""SECURITY.md T-A7: each secret goes to its own host only. A whole ``chat.run`` over the wire, on real HTTP:

- a loopback vendor replays a recorded tool-call stream, then the recorded answer (tests/pycore/http/loopback.py);
- MCP server A (official SDK) wants a static bearer the user typed as a header in ``mcp.connect``;
- MCP server B (official SDK, ``mcp.server.auth``) is signed in to through the OAuth wire methods.

Both MCP servers and the vendor record every request (method, path, query, headers, body), OAuth endpoints
included. Then: the API key appears in the vendor's requests only, in its auth header only, never in a URL or
body; A's bearer only in A's requests and B's OAuth tokens only in B's, each in the ``Authorization`` header
only; none of them in what the run emitted or returned. The tool call really went to an MCP server and its
result really went back to the vendor, so the secrets were live on both sides of the loop.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from agent_helpers import KEY
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from pydantic import AnyHttpUrl

from pycore import wire
from pycore.mcp.oauth import install
from pycore.methods._state import STATE

sys.path.insert(0, str(Path(__file__).parents[1] / "http"))
sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
from loopback import BY_FILE, Handler, LoopbackServer  # noqa: E402
from mcp_servers import serve_asgi  # noqa: E402
from oauth_server import SCOPES, Provider  # noqa: E402

APP = "http://127.0.0.1:8765/"  # the page's own URL: the OAuth redirect target (never fetched)
CAPITALS = {"UK": "London", "France": "Paris"}


@dataclass
class Seen:
    """One request as it arrived."""

    host: str
    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]
    body: bytes = b""

    def places(self, secret: str) -> list[str]:
        """Where ``secret`` occurs in this request: "url", "body", or a header's name."""
        found = [name for name, value in self.headers if secret in value or secret in name]
        if secret in unquote(self.path + "?" + self.query):
            found.append("url")
        if secret.encode() in self.body or secret in unquote(self.body.decode("utf-8", "replace")):
            found.append("body")
        return found


# -- the vendor: recordings in order, every request kept ----------------------------------------------------


class VendorHandler(Handler):
    server: VendorServer

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        self._answer(self.rfile.read(int(self.headers.get("content-length") or 0)))

    def do_GET(self) -> None:  # noqa: N802
        self._answer(b"")

    def _answer(self, body: bytes) -> None:
        path, _, query = self.path.partition("?")
        headers = [(name.lower(), value) for name, value in self.headers.items()]
        self.server.seen.append(Seen("vendor", self.command, path, query, headers, body))
        fixture = BY_FILE[self.server.script.pop(0)]
        self._send(fixture.status, fixture.content_type, fixture.body(), {})


class VendorServer(LoopbackServer):
    def __init__(self, script: list[str]) -> None:
        super().__init__()
        self.RequestHandlerClass = VendorHandler
        self.script = list(script)
        self.seen: list[Seen] = []


# -- the MCP servers: official SDK apps behind a recorder -------------------------------------------------


@dataclass
class Recorder:
    """ASGI middleware keeping every request; with ``bearer``, anything else gets a 401 (A needs its token)."""

    name: str
    app: Any
    bearer: str | None = None
    seen: list[Seen] = field(default_factory=list)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        seen = Seen(self.name, scope["method"], scope["path"], scope["query_string"].decode(),
                    [(k.decode(), v.decode()) for k, v in scope["headers"]])
        self.seen.append(seen)

        async def recording_receive() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                seen.body += message.get("body", b"")
            return message

        if self.bearer and dict(seen.headers).get("authorization") != f"Bearer {self.bearer}":
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await self.app(scope, recording_receive, send)


def capitals_app() -> Any:
    server = MCPServer(name="capitals", version="1.0")

    @server.tool()
    def get_capital(country: str) -> str:
        """The capital city of a country."""
        return f"The capital of {country} is {CAPITALS.get(country, 'unknown')}."

    return server.streamable_http_app()


def weather_app(base: str, provider: Provider) -> Any:
    settings = AuthSettings(
        issuer_url=AnyHttpUrl(base), resource_server_url=AnyHttpUrl(base + "/mcp"), validate_token_resource=True,
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES),
        required_scopes=["mcp:read"],
    )
    server = MCPServer(name="weather", auth=settings, auth_server_provider=provider)  # type: ignore[arg-type]

    @server.tool()
    def get_weather(location: str = "", city: str = "", units: str = "c") -> str:
        """Current weather at a place."""
        return f"Sunny at {location or city}, 21 degrees ({units})."

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return server.streamable_http_app()


@contextlib.contextmanager
def serve(make: Callable[[str], Recorder]) -> Iterator[tuple[str, Recorder]]:
    with serve_asgi(make) as (base, recorder):
        yield base + "/mcp", recorder


@dataclass
class McpSide:
    a_url: str
    a: Recorder
    a_bearer: str
    b_url: str
    b: Recorder
    provider: Provider

    def b_tokens(self) -> list[str]:
        return [*self.provider.access, *self.provider.refresh]


@pytest.fixture(scope="module")
def mcp_side() -> Iterator[McpSide]:
    bearer = "mcp-A-" + secrets.token_urlsafe(16)
    holder: dict[str, Provider] = {}

    def make_b(base: str) -> Recorder:
        holder["provider"] = Provider(issuer=base + "/")
        return Recorder("B", weather_app(base, holder["provider"]))

    with serve(lambda base: Recorder("A", capitals_app(), bearer)) as (a_url, a), serve(make_b) as (b_url, b):
        yield McpSide(a_url, a, bearer, b_url, b, holder["provider"])


# -- the wire, as the page drives it ----------------------------------------------------------------------


async def call(name: str, params: dict[str, Any], emitted: list[str] | None = None) -> dict[str, Any]:
    result = await wire.start(name, json.dumps(params), (emitted if emitted is not None else []).append)
    if emitted is not None:
        emitted.append(result)
    return json.loads(result)


async def forget_oauth() -> None:
    """A fresh worker's OAuth client (as after a reload)."""
    await STATE.forget_oauth()
    install(None)


async def sign_in(url: str) -> None:
    """mcp.oauth_begin, the popup (the SDK's /authorize approves at once), mcp.oauth_finish."""
    begun = await call("mcp.oauth_begin", {"server_url": url, "redirect_uri": APP})
    async with httpx.AsyncClient(follow_redirects=False) as client:
        response = await client.get(begun["authorization_url"])
    assert response.status_code in (302, 303, 307), response.text
    await call("mcp.oauth_finish", {"callback_url": response.headers["location"]})


# vendor: (base path the user would type, recordings in order, the header that must carry the key, its value,
#          the tool the recording calls)
VENDORS = {
    "openai": ("/v1", ["openai/chat-stream-tool-call.sse", "openai/chat-stream-text-usage.sse"],
               "authorization", f"Bearer {KEY}", "get_capital"),
    "openai-compatible": ("/v1", ["openai/chat-stream-tool-call.sse", "openai/chat-stream-text-usage.sse"],
                          "authorization", f"Bearer {KEY}", "get_capital"),
    # No recorded plain answer from the Responses API: the tool call twice, and the run stops at two steps.
    "openai-responses": ("/v1", ["openai/responses-stream-function-call.sse"] * 2,
                         "authorization", f"Bearer {KEY}", "get_capital"),
    "anthropic": ("", ["anthropic/stream-tool-use.sse", "anthropic/stream-text.sse"],
                  "x-api-key", KEY, "get_weather"),
    "gemini": ("/v1beta", ["gemini/stream-function-call.sse", "gemini/stream-text.sse"],
               "x-goog-api-key", KEY, "get_capital"),
    "ollama": ("", ["ollama/chat-stream-tool-call-docs.ndjson", "ollama/chat-stream-text.ndjson"],
               "authorization", f"Bearer {KEY}", "get_weather"),
}


@pytest.mark.parametrize("vendor", list(VENDORS))
async def test_each_secret_reaches_its_own_host_only(vendor: str, mcp_side: McpSide) -> None:
    base_path, script, key_header, key_value, tool = VENDORS[vendor]
    emitted: list[str] = []
    a_before, b_before = len(mcp_side.a.seen), len(mcp_side.b.seen)
    await forget_oauth()
    with VendorServer(script) as model:
        try:
            await call("mcp.connect", {"id": "a", "url": mcp_side.a_url,
                                       "headers": {"Authorization": f"Bearer {mcp_side.a_bearer}"}}, emitted)
            await sign_in(mcp_side.b_url)
            await call("mcp.connect", {"id": "b", "url": mcp_side.b_url}, emitted)
            allowed = [{"source": f"mcp:{server['id']}", "tool": t["original_name"], "policy": "allow",
                        "fingerprint": t["fingerprint"]}
                       for server in (await call("mcp.list", {}))["servers"] for t in server["tools"]
                       if t["original_name"] in ("get_capital", "get_weather")]
            result = await call("chat.run", {
                "provider": {"vendor": vendor, "api_key": KEY, "base_url": model.url + base_path},
                "model": "m", "messages": [{"role": "user", "parts": [{"type": "text", "text": "go"}]}],
                "tools": {"mcp": ["a", "b"]}, "policy": allowed,
                "limits": {"max_steps": 2},
            }, emitted)
        finally:
            for server_id in ("a", "b"):
                if server_id in STATE.connections:
                    await call("mcp.disconnect", {"id": server_id})
            await forget_oauth()
    a_seen, b_seen = mcp_side.a.seen[a_before:], mcp_side.b.seen[b_before:]

    # The loop ran both ways: the recorded call reached its MCP server, whose answer went back to the vendor.
    assert result["stop_reason"] in ("end_turn", "max_steps"), result
    ends = [e for e in map(json.loads, emitted[:-1]) if e.get("type") == "tool_end" and e["step"] == 1]
    assert [(e["name"], e["is_error"]) for e in ends] == [(tool, False)]
    served_by = a_seen if tool == "get_capital" else b_seen
    assert any(b'"tools/call"' in s.body and tool.encode() in s.body for s in served_by)
    answer = ends[0]["content"][0]["text"]
    assert len(model.seen) == 2 and answer.encode() in model.seen[1].body
    assert [s.method for s in model.seen] == ["POST", "POST"]

    # The API key: in every vendor request, in its auth header only; nowhere on the MCP side.
    for request in model.seen:
        assert request.places(KEY) == [key_header], (request.path, request.places(KEY))
        assert dict(request.headers)[key_header] == key_value
    for request in a_seen + b_seen:
        assert request.places(KEY) == [], (request.host, request.path)

    # A's bearer: on every request to A (A refuses any other), in Authorization only; never to B or the vendor.
    assert len(a_seen) >= 3  # initialize, initialized, tools/list at least
    for request in a_seen:
        assert request.places(mcp_side.a_bearer) == ["authorization"], (request.path, request.method)
    for request in b_seen + model.seen:
        assert request.places(mcp_side.a_bearer) == [], (request.host, request.path)

    # B's OAuth tokens: carried to B's MCP endpoint in Authorization only; never to A or the vendor.
    tokens = mcp_side.b_tokens()
    assert tokens
    b_mcp = [s for s in b_seen if s.path == "/mcp"]
    assert any(s.places(t) == ["authorization"] for s in b_mcp for t in tokens)
    for request in b_mcp:
        assert all(request.places(t) in ([], ["authorization"]) for t in tokens), request.path
    for request in a_seen + model.seen:
        assert all(request.places(t) == [] for t in tokens), (request.host, request.path)

    # Nothing the page received carries the key or a bearer (the OAuth store is the page's, on purpose, and is
    # not part of a run).
    run_output = "".join(emitted)
    assert KEY not in run_output and mcp_side.a_bearer not in run_output
    assert all(t not in run_output for t in tokens)


def test_the_checks_would_see_a_leak() -> None:
    """Guards the test above: a secret in a URL, a body or another header is found where it is."""
    leaky = Seen("x", "POST", "/v1/chat", f"key={KEY}", [("x-api-key", KEY), ("x-extra", f"k {KEY}")],
                 json.dumps({"note": KEY}).encode())
    assert leaky.places(KEY) == ["x-api-key", "x-extra", "url", "body"]
    assert Seen("x", "GET", "/a%2Fb", "", [], b"").places("a/b") == ["url"]
