"""SECURITY.md T-A1..T-A10 against a scripted metadata server on loopback (fake PRM / AS documents):
every refusal happens before anything is fetched from or opened at the refused URL."""

from __future__ import annotations

from typing import Any

import pytest
from cors_apps import serve_app
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from test_oauth import APP, Recording

from pycore.mcp import OAuthError
from pycore.mcp.oauth import OAuthClient


class Documents:
    """What the scripted server serves at each path (absent: 404); ``seen`` records every path asked for."""

    def __init__(self) -> None:
        self.paths: dict[str, Any] = {}
        self.seen: list[str] = []

    def app(self) -> Starlette:
        async def any_path(request: Request) -> Response:
            self.seen.append(request.url.path)
            body = self.paths.get(request.url.path)
            return Response(status_code=404) if body is None else JSONResponse(body)

        return Starlette(routes=[Route("/{path:path}", any_path, methods=["GET", "POST"])])


def prm(base: str, **extra: Any) -> dict[str, Any]:
    return {"resource": base + "/mcp", "authorization_servers": [base], **extra}


def asm(base: str, **extra: Any) -> dict[str, Any]:
    return {"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
            "registration_endpoint": base + "/register", "code_challenge_methods_supported": ["S256"], **extra}


async def begin(docs: Documents, challenge: str | None = None, **asm_extra: Any) -> tuple[str, Recording, Any]:
    http = Recording()
    try:
        with serve_app(docs.app()) as base:
            docs.paths.setdefault("/.well-known/oauth-protected-resource/mcp", prm(base))
            docs.paths["/.well-known/oauth-authorization-server"] = asm(base, **asm_extra)
            docs.paths["/register"] = {"client_id": "dyn"}
            try:
                result: Any = await OAuthClient(http).begin(base + "/mcp", APP, www_authenticate=challenge)
            except OAuthError as e:
                result = e
    finally:
        await http.aclose()
    return base, http, result


async def test_a1_without_a_challenge_path_inserted_then_root() -> None:
    docs = Documents()
    await begin(docs)
    assert docs.seen[0] == "/.well-known/oauth-protected-resource/mcp"
    docs = Documents()
    docs.paths["/.well-known/oauth-protected-resource/mcp"] = None
    base, _, result = await begin(docs)
    assert docs.seen[:2] == ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]


async def test_a1_an_unreadable_challenge_url_has_no_fallback() -> None:
    _, http, result = await begin(Documents(), 'Bearer resource_metadata="http://127.0.0.1:9/prm"')
    assert isinstance(result, OAuthError) and "cannot be read" in str(result)


async def test_a1_resource_metadata_from_the_challenge_is_used() -> None:
    docs = Documents()
    http = Recording()
    with serve_app(docs.app()) as base:
        docs.paths["/meta/prm"] = prm(base)
        docs.paths["/.well-known/oauth-authorization-server"] = asm(base)
        docs.paths["/register"] = {"client_id": "dyn"}
        request = await OAuthClient(http).begin(base + "/mcp", APP,
                                                www_authenticate=f'Bearer resource_metadata="{base}/meta/prm"')
    await http.aclose()
    assert docs.seen[0] == "/meta/prm" and "/.well-known/oauth-protected-resource/mcp" not in docs.seen
    assert request.authorization_url.startswith(base + "/authorize?")


async def test_a2_no_pkce_announced_refuses() -> None:
    _, http, result = await begin(Documents(), code_challenge_methods_supported=None)
    assert isinstance(result, OAuthError) and "PKCE" in str(result)
    assert not [r for r in http.sent if r.url.endswith(("/register", "/authorize"))]
    _, _, plain_only = await begin(Documents(), code_challenge_methods_supported=["plain"])
    assert isinstance(plain_only, OAuthError)


@pytest.mark.parametrize("endpoint", ["javascript:alert(1)", "data:text/html,<script>1</script>", "file:///etc/passwd",
                                      "http://evil.example/authorize", "https://evil.example/$(touch /tmp/x)"])
async def test_a3_unsafe_authorization_endpoint_refused(endpoint: str) -> None:
    _, http, result = await begin(Documents(), authorization_endpoint=endpoint)
    assert isinstance(result, OAuthError) and "refused" in str(result)
    assert not [r for r in http.sent if "evil" in r.url or r.url.endswith("/register")]


async def test_a4_metadata_claiming_another_issuer_is_rejected() -> None:
    _, _, result = await begin(Documents(), issuer="https://honest.example")
    assert isinstance(result, OAuthError) and "claims issuer" in str(result)


async def test_metadata_describing_another_resource_is_rejected() -> None:
    docs = Documents()
    docs.paths["/.well-known/oauth-protected-resource/mcp"] = {"resource": "https://other.example/mcp",
                                                               "authorization_servers": ["https://other.example"]}
    _, http, result = await begin(docs)
    assert isinstance(result, OAuthError) and "not http" in str(result)
    assert all("other.example" not in r.url for r in http.sent)


@pytest.mark.parametrize("server", ["http://169.254.169.254/", "https://169.254.169.254/", "http://evil.example",
                                    "https://10.1.2.3", "http://localhost.evil.example"])
async def test_a8_authorization_server_on_internal_or_plain_http_host_is_blocked(server: str) -> None:
    docs = Documents()
    http = Recording()
    with serve_app(docs.app()) as base:
        docs.paths["/.well-known/oauth-protected-resource/mcp"] = prm(base, authorization_servers=[server])
        with pytest.raises(OAuthError, match="refused"):
            await OAuthClient(http).begin(base + "/mcp", APP)
    await http.aclose()
    assert all(server.split("//")[1].rstrip("/") not in r.url for r in http.sent)


async def test_a10_discovery_moves_on_then_says_what_it_tried() -> None:
    docs = Documents()
    docs.paths["/.well-known/oauth-protected-resource/mcp"] = None  # no resource metadata at all: a 2025-03-26
    _, http, result = await begin(docs)                              # server, its own origin is the AS
    assert docs.seen[:3] == ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource",
                             "/.well-known/oauth-authorization-server"]
    assert not isinstance(result, OAuthError)
    assert all(set(r.headers) <= {"accept"} for r in http.sent if r.method == "GET")  # no preflight needed
    http = Recording()
    with pytest.raises(OAuthError, match="no metadata found.*oauth-authorization-server.*openid-configuration"):
        await OAuthClient(http).begin("http://127.0.0.1:9/mcp", APP)  # nothing answers: each URL tried, then said
    await http.aclose()
    assert [r.url.split(":9")[1] for r in http.sent] == [
        "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]
