"""Credentials belong to the authorization server that issued them (MCP 2026-07-28, SEP-2352; SECURITY.md
T-A14): when a server's protected-resource metadata moves to another authorization server, the client registers
there afresh, and nothing the first one issued (client id, secret, refresh token) is sent to the second."""

from __future__ import annotations

import json

from cors_apps import serve_app
from test_oauth import APP, Recording
from test_oauth_cases import Documents, asm, prm

from pycore.mcp.oauth import OAuthClient

PRM = "/.well-known/oauth-protected-resource/mcp"


def authorization_server(docs: Documents, base: str, name: str) -> None:
    """``base/name`` as an issuer: its metadata, a registration giving ``name-client`` and its tokens."""
    docs.paths[f"/.well-known/oauth-authorization-server/{name}"] = asm(f"{base}/{name}")
    docs.paths[f"/{name}/register"] = {"client_id": f"{name}-client", "client_secret": f"{name}-secret"}
    docs.paths[f"/{name}/token"] = {"access_token": f"{name}-access", "token_type": "Bearer",
                                    "refresh_token": f"{name}-refresh", "expires_in": 3600}


async def sign_in(oauth: OAuthClient, url: str) -> str:
    begun = await oauth.begin(url, APP)
    tokens = await oauth.finish({"state": begun.state, "code": "c", "iss": begun.issuer})
    return f"{begun.issuer} {begun.client_id} {tokens.access_token}"


async def test_t_a14_a_new_authorization_server_gets_a_new_registration_and_nothing_of_the_old_one() -> None:
    docs, http = Documents(), Recording()
    oauth = OAuthClient(http)
    try:
        with serve_app(docs.app()) as base:
            for name in ("as-a", "as-b"):
                authorization_server(docs, base, name)
            docs.paths[PRM] = prm(base, authorization_servers=[f"{base}/as-a"])
            assert await sign_in(oauth, base + "/mcp") == f"{base}/as-a as-a-client as-a-access"
            docs.paths[PRM] = prm(base, authorization_servers=[f"{base}/as-b"])  # the server moved
            first = len(http.sent)
            assert await sign_in(oauth, base + "/mcp") == f"{base}/as-b as-b-client as-b-access"
    finally:
        await http.aclose()
    assert "/as-b/register" in docs.seen
    to_b = [r for r in http.sent[first:] if r.url.startswith(f"{base}/as-b")]
    assert to_b and not [r for r in to_b if "as-a-" in f"{r.url} {r.headers} {r.body!r}"]


async def test_dynamic_registration_names_the_application_type_of_the_redirect() -> None:
    """MCP 2026-07-28: ``web`` for the page served from its site, ``native`` for one on this computer."""
    docs, http = Documents(), Recording()
    try:
        with serve_app(docs.app()) as base:
            authorization_server(docs, base, "as-a")
            docs.paths[PRM] = prm(base, authorization_servers=[f"{base}/as-a"])
            for redirect in ("https://app.example/orizuru/", APP):
                await OAuthClient(http).begin(base + "/mcp", redirect)
    finally:
        await http.aclose()
    sent = [json.loads(r.body or b"{}") for r in http.sent if r.url.endswith("/register")]
    assert [body["application_type"] for body in sent] == ["web", "native"]
