"""The pure parts of OAuth and the doctor: URL policy (SECURITY.md T-A3/T-A8, C21/C26), well-known URLs,
the canonical resource and token binding, the challenge parser, PKCE, the callback checks, and the
browser-mode doctor's conclusions. Runs in CPython and inside Pyodide."""

from __future__ import annotations

import base64
import hashlib
import time

import pytest

from pycore.mcp import OAuthCallbackError, OAuthError
from pycore.mcp.doctor import Outcome, browser_probes, interpret_browser
from pycore.mcp.oauth import ClientRegistration, MemoryOAuthStore, OAuthClient, PendingAuthorization, ServerMetadata
from pycore.mcp.oauth_urls import (
    authorization_server_metadata_urls,
    canonical_resource,
    check_url,
    parse_www_authenticate,
    pkce_pair,
    protected_resource_metadata_urls,
    resource_covers,
    same_issuer,
)

pytestmark = pytest.mark.pyodide
REMOTE = "https://mcp.example.com/mcp"
LOCAL = "http://127.0.0.1:8000/mcp"


@pytest.mark.parametrize("url", [
    "javascript:alert(1)", "data:text/html,<script>x</script>", "file:///etc/passwd", "vbscript:msgbox",
    "http://evil.example/authorize", "https://evil.example/a$(calc)", "https://evil.example/a`id`",
    "https://evil.example/a b", "https://evil.example/\"onload=", "https://user:pw@as.example/",
    "http://169.254.169.254/", "https://169.254.169.254/latest", "https://10.0.0.1/", "https://192.168.1.1/",
    "https://[::ffff:127.0.0.1]/", "https://0x7f.1/", "https://2130706433/", "http://127.0.0.1:6379/",
    "https://localhost/authorize", "", "https://",
])
def test_a3_a8_unsafe_urls_are_refused(url: str) -> None:
    with pytest.raises(OAuthError, match="refused"):
        check_url(url, "authorization endpoint", server_url=REMOTE)


def test_safe_urls_pass_and_loopback_only_for_a_loopback_server() -> None:
    assert check_url("https://auth.example.com/authorize?x=1", "a", server_url=REMOTE).startswith("https://auth")
    assert check_url("https://a1.example.de/x#frag", "a", server_url=REMOTE) == "https://a1.example.de/x"
    assert check_url("http://127.0.0.1:9000/token", "t", server_url=LOCAL) == "http://127.0.0.1:9000/token"
    assert check_url("http://localhost:9000/token", "t", server_url=LOCAL)
    with pytest.raises(OAuthError):
        check_url("http://example.com/token", "t", server_url=LOCAL)


def test_a1_well_known_order() -> None:
    assert protected_resource_metadata_urls("https://e.com/public/mcp") == [
        "https://e.com/.well-known/oauth-protected-resource/public/mcp",
        "https://e.com/.well-known/oauth-protected-resource"]
    assert protected_resource_metadata_urls("https://e.com/") == ["https://e.com/.well-known/oauth-protected-resource"]
    assert authorization_server_metadata_urls("https://a.com/tenant1") == [
        "https://a.com/.well-known/oauth-authorization-server/tenant1",
        "https://a.com/.well-known/openid-configuration/tenant1",
        "https://a.com/tenant1/.well-known/openid-configuration"]
    assert authorization_server_metadata_urls("https://a.com") == [
        "https://a.com/.well-known/oauth-authorization-server", "https://a.com/.well-known/openid-configuration"]


def test_canonical_resource_and_binding() -> None:
    assert canonical_resource("HTTPS://MCP.Example.COM/mcp/#x") == "https://mcp.example.com/mcp"
    assert resource_covers("https://e.com/mcp", "https://e.com/mcp")
    assert resource_covers("https://e.com", "https://e.com/any/path")
    assert resource_covers("https://e.com/mcp", "https://E.com:443/mcp/sub")
    assert not resource_covers("https://e.com/mcp", "https://e.com/mcpx")
    assert not resource_covers("https://e.com/mcp", "https://e.com/other")
    assert not resource_covers("https://e.com", "https://e.com.evil.example/")
    assert not resource_covers("https://e.com", "http://e.com/")
    assert not resource_covers("https://e.com", "https://e.com:8443/")


def test_issuer_comparison_is_exact_but_for_a_bare_slash() -> None:
    assert same_issuer("https://a.com/", "https://a.com")
    assert not same_issuer("https://a.com/tenant/", "https://a.com/tenant")
    assert not same_issuer("https://honest.example", "https://attacker.example")
    assert not same_issuer("https://A.com", "https://a.com")


def test_www_authenticate_parsing() -> None:
    header = ('Basic realm="x", Bearer error="insufficient_scope", scope="files:read files:write", '
              'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", '
              'error_description="needs \\"write\\""')
    params = parse_www_authenticate(header)
    assert params["scope"] == "files:read files:write" and params["error"] == "insufficient_scope"
    assert params["resource_metadata"].endswith("oauth-protected-resource")
    assert params["error_description"] == 'needs "write"'
    assert parse_www_authenticate('Basic realm="x"') == {}
    assert parse_www_authenticate(None) == {}
    assert parse_www_authenticate("Bearer") == {}
    assert parse_www_authenticate('bearer scope=a') == {"scope": "a"}


def test_pkce_s256() -> None:
    verifier, challenge = pkce_pair()
    assert 43 <= len(verifier) <= 128
    expected = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert challenge == expected and pkce_pair()[0] != verifier


def pending(state: str = "s1", **overrides: object) -> PendingAuthorization:
    metadata = ServerMetadata(issuer="https://as.example", authorization_endpoint="https://as.example/a",
                              token_endpoint="https://as.example/t", code_challenge_methods_supported=["S256"])
    values: dict[str, object] = {
        "state": state, "code_verifier": "v" * 43, "issuer": "https://as.example", "iss_required": False,
        "resource": REMOTE, "server_url": REMOTE, "redirect_uri": "https://app.example/", "scope": None,
        "metadata": metadata, "client": ClientRegistration(issuer="https://as.example", client_id="c"),
        "created_at": time.time(), **overrides}
    return PendingAuthorization.model_validate(values)


class NoNetwork:
    async def send(self, request: object) -> object:
        raise AssertionError("no request may be sent for a refused callback")

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize("callback, reason", [
    ("https://app.example/?code=c", "does not answer"),
    ("https://app.example/?code=c&state=other", "does not answer"),
    ("https://app.example/?code=c&state=s1&iss=https%3A%2F%2Fevil.example", "another issuer"),
    ("https://app.example/?code=c&state=s1&iss=https%3A%2F%2Fas.example%2F", "another issuer"),  # no normalising
])
async def test_a5_callbacks_that_are_not_ours(callback: str, reason: str) -> None:
    store = MemoryOAuthStore()
    await store.add_pending(pending())
    oauth = OAuthClient(NoNetwork(), store)  # type: ignore[arg-type]
    with pytest.raises(OAuthCallbackError, match=reason):
        await oauth.finish(callback)


async def test_a5_iss_required_and_expired_state() -> None:
    store = MemoryOAuthStore()
    await store.add_pending(pending(iss_required=True))
    await store.add_pending(pending("old", created_at=time.time() - 3600))
    oauth = OAuthClient(NoNetwork(), store)  # type: ignore[arg-type]
    with pytest.raises(OAuthCallbackError, match="lacks the issuer"):
        await oauth.finish({"code": "c", "state": "s1"})
    with pytest.raises(OAuthCallbackError, match="does not answer"):
        await oauth.finish({"code": "c", "state": "old"})


async def test_an_error_callback_from_the_right_issuer_is_reported() -> None:
    store = MemoryOAuthStore()
    await store.add_pending(pending())
    oauth = OAuthClient(NoNetwork(), store)  # type: ignore[arg-type]
    with pytest.raises(OAuthError, match="access_denied") as caught:
        await oauth.finish("https://app.example/?error=access_denied&state=s1&iss=https%3A%2F%2Fas.example")
    assert not isinstance(caught.value, OAuthCallbackError) and caught.value.code == "access_denied"


def ok(status: int = 200, headers: dict[str, str] | None = None, body: str = "") -> Outcome:
    return Outcome(ok=True, status=status, headers=headers or {}, body=body)


def test_browser_doctor_conclusions() -> None:
    names = [p.name for p in browser_probes({"X-Api-Key": "k"})]
    assert names[:2] == ["simple", "json"] and "x-api-key" in names and names[-1] == "after-initialize"
    url, origin = "https://mcp.example.com/mcp", "https://app.example"
    assert interpret_browser(url, origin, {}, False).codes() == ["unreachable"]
    hidden = {"simple": Outcome(ok=False), "json": Outcome(ok=False)}
    assert interpret_browser(url, origin, hidden, True).codes() == ["no_allow_origin"]
    ollama = interpret_browser("http://localhost:11434/v1/chat/completions", origin, hidden, True)
    assert ollama.codes() == ["ollama_origins"] and "OLLAMA_ORIGINS=https://app.example" in ollama.findings[0].fix
    refused = {"simple": ok(405), "json": Outcome(ok=False)}
    assert interpret_browser(url, origin, refused, True).codes() == ["preflight_refused"]
    session = {"simple": ok(405), "json": ok(400), "mcp-protocol-version": Outcome(ok=False), "initialize": ok(200),
               "after-initialize": ok(400, body='{"error": {"message": "Bad Request: Missing session ID"}}')}
    found = interpret_browser(url, origin, session, True)
    assert found.codes() == ["header_not_allowed", "session_id_not_exposed"]
    assert "MCP-Protocol-Version" in found.findings[0].message and "relay" in found.relay_hint
    visible = {**session, "mcp-protocol-version": ok(400), "initialize": ok(200, {"mcp-session-id": "s"})}
    assert interpret_browser(url, origin, visible, True).codes() == []
