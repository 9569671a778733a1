"""OAuth against a real protected MCP server built on the SDK's ``mcp.server.auth`` (loopback).

The test plays the browser: it opens the authorization URL (the provider approves at once and
redirects), takes the redirect's URL and hands it to ``finish`` as the page would.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from oauth_server import serve_protected

from pycore.http import Request, Response, Transport
from pycore.http.httpx import HttpxTransport
from pycore.mcp import ClientSession, MCPAuthRequiredError, MCPInsufficientScopeError, OAuthCallbackError, OAuthError
from pycore.mcp.oauth import OAuthClient

APP = "http://127.0.0.1:8765/"  # the page's own URL: the redirect target (never fetched by these tests)


class Recording(Transport):
    """The real httpx transport, remembering every request it sent."""

    def __init__(self) -> None:
        self.inner = HttpxTransport()
        self.sent: list[Request] = []

    async def send(self, request: Request) -> Response:
        self.sent.append(request)
        return await self.inner.send(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def browser(authorization_url: str) -> str:
    """Follow the authorization URL like the popup would; the URL the server redirects back to."""
    async with httpx.AsyncClient(follow_redirects=False) as client:
        response = await client.get(authorization_url)
    assert response.status_code in (302, 303, 307), response.text
    return response.headers["location"]


async def authorize(oauth: OAuthClient, url: str, challenge: str | None = None) -> str:
    request = await oauth.begin(url, APP, www_authenticate=challenge)
    return await browser(request.authorization_url)


async def first_challenge(url: str) -> str:
    with pytest.raises(MCPAuthRequiredError) as caught:
        async with ClientSession(url):
            pass
    return caught.value.www_authenticate or ""


async def test_full_flow_then_tools_call_with_the_token() -> None:
    http = Recording()
    with serve_protected() as (url, provider):
        challenge = await first_challenge(url)
        assert "resource_metadata" in challenge
        oauth = OAuthClient(http)
        request = await oauth.begin(url, APP, www_authenticate=challenge)
        query = parse_qs(urlsplit(request.authorization_url).query)
        assert query["code_challenge_method"] == ["S256"] and len(query["code_challenge"][0]) == 43
        assert query["resource"] == [url] and query["state"] == [request.state]
        assert query["scope"] == ["mcp:read"] and request.registration == "dynamic"
        tokens = await oauth.finish(await browser(request.authorization_url))
        assert provider.authorizations[0].resource == url  # T-A6: resource on the authorization request ...
        token_posts = [r for r in http.sent if r.url.endswith("/token")]
        assert b"resource=" + httpx.QueryParams({"r": url}).get("r").encode().replace(b":", b"%3A").replace(
            b"/", b"%2F") in (token_posts[0].body or b"")  # ... and on the token request
        assert b"code_verifier=" in (token_posts[0].body or b"")
        async with ClientSession(url, http=oauth.transport_for(url)) as mcp:
            assert (await mcp.call_tool("whoami", {})).text() == "authorized"
        assert tokens.resource == url and tokens.refresh_token
    await http.aclose()


async def test_expired_token_is_refreshed_and_rotated() -> None:
    http = HttpxTransport()
    with serve_protected() as (url, provider):
        oauth = OAuthClient(http)
        first = await oauth.finish(await authorize(oauth, url, await first_challenge(url)))
        provider.expire_all()  # the server now refuses the token: 401 → refresh → retry
        async with ClientSession(url, http=oauth.transport_for(url)) as mcp:
            assert (await mcp.call_tool("whoami", {})).text() == "authorized"
        second = await oauth.store.get_tokens(url)
        assert second is not None and second.access_token != first.access_token
        assert second.refresh_token != first.refresh_token  # rotated
        assert provider.token_requests == ["authorization_code", "refresh_token"]
        second.expires_at = 0  # expired by our own clock: refreshed before the request is sent
        async with ClientSession(url, http=oauth.transport_for(url)) as mcp:
            await mcp.list_tools()
        assert provider.token_requests == ["authorization_code", "refresh_token", "refresh_token"]
    await http.aclose()


async def test_failed_refresh_falls_back_to_a_401() -> None:
    http = HttpxTransport()
    with serve_protected() as (url, provider):
        oauth = OAuthClient(http)
        await oauth.finish(await authorize(oauth, url, await first_challenge(url)))
        provider.expire_all()
        provider.refresh.clear()  # the refresh token is no longer valid
        with pytest.raises(MCPAuthRequiredError):
            async with ClientSession(url, http=oauth.transport_for(url)):
                pass
        assert await oauth.store.get_tokens(url) is None
    await http.aclose()


async def test_a5_wrong_missing_and_replayed_state() -> None:
    http = HttpxTransport()
    with serve_protected() as (url, _):
        oauth = OAuthClient(http)
        callback = await authorize(oauth, url, await first_challenge(url))
        forged = callback.replace("state=", "state=x")
        with pytest.raises(OAuthCallbackError, match="does not answer a request we made"):
            await oauth.finish(forged)
        with pytest.raises(OAuthCallbackError):
            await oauth.finish(callback.split("?")[0] + "?code=abc")
        await oauth.finish(callback)
        with pytest.raises(OAuthCallbackError):  # replayed
            await oauth.finish(callback)
    await http.aclose()


async def test_a5_wrong_iss_is_refused_and_its_error_text_never_shown() -> None:
    http = HttpxTransport()
    with serve_protected() as (url, _):
        oauth = OAuthClient(http)
        callback = await authorize(oauth, url, await first_challenge(url))
        state = parse_qs(urlsplit(callback).query)["state"][0]
        evil = f"{APP}?state={state}&iss=https%3A%2F%2Fevil.example&error=x&error_description=CLICK+evil.example"
        with pytest.raises(OAuthCallbackError) as caught:
            await oauth.finish(evil)
        assert "evil" not in str(caught.value) and "CLICK" not in str(caught.value)
    await http.aclose()


async def test_a5_missing_iss_when_the_server_promises_it() -> None:
    http = HttpxTransport()
    with serve_protected(send_iss=False) as (url, _):
        oauth = OAuthClient(http)
        request = await oauth.begin(url, APP, www_authenticate=await first_challenge(url))
        pending = oauth.store.pending[request.state]  # type: ignore[attr-defined]
        pending.iss_required = True  # as if the metadata said authorization_response_iss_parameter_supported
        with pytest.raises(OAuthCallbackError, match="lacks the issuer"):
            await oauth.finish(await browser(request.authorization_url))
    await http.aclose()


async def test_a7_token_never_sent_to_another_origin_or_path() -> None:
    http = Recording()
    with serve_protected() as (url, _), serve_protected() as (other, _):
        oauth = OAuthClient(http)
        tokens = await oauth.finish(await authorize(oauth, url, await first_challenge(url)))
        transport = oauth.transport_for(url)
        for target in (other, url.replace("/mcp", "/elsewhere"), url.replace("127.0.0.1", "localhost")):
            response = await transport.send(Request("GET", target, {}))
            await response.aclose()
        leaked = [r for r in http.sent if tokens.access_token in str(r.headers) + r.url]
        assert leaked == []
        with pytest.raises(MCPAuthRequiredError):  # server B never got A's token
            async with ClientSession(other, http=oauth.transport_for(other)):
                pass
        assert all(tokens.access_token not in r.url for r in http.sent)  # T-A7: never in a URL
    await http.aclose()


async def test_step_up_on_insufficient_scope_is_bounded() -> None:
    http = HttpxTransport()
    with serve_protected(required_scopes=["mcp:read", "mcp:write"]) as (url, _):
        oauth = OAuthClient(http)
        request = await oauth.begin(url, APP, www_authenticate=await first_challenge(url), scope="mcp:read")
        await oauth.finish(await browser(request.authorization_url))
        with pytest.raises(MCPInsufficientScopeError) as caught:
            async with ClientSession(url, http=oauth.transport_for(url)):
                pass
        challenge = caught.value.www_authenticate
        assert challenge and "insufficient_scope" in challenge
        for _ in range(2):
            step_up = await oauth.begin(url, APP, www_authenticate=challenge, scope="mcp:read mcp:write")
        await oauth.finish(await browser(step_up.authorization_url))
        async with ClientSession(url, http=oauth.transport_for(url)) as mcp:
            assert (await mcp.call_tool("whoami", {})).text() == "authorized"
        with pytest.raises(OAuthError, match="giving up"):  # T-A9: a third step-up for the same scope
            await oauth.begin(url, APP, www_authenticate=challenge, scope="mcp:read mcp:write")
    await http.aclose()


async def test_pre_registered_client_is_used_and_bound_to_its_issuer() -> None:
    http = Recording()
    with serve_protected() as (url, provider):
        issuer = url.rsplit("/mcp", 1)[0]
        from mcp.shared.auth import OAuthClientInformationFull

        provider.clients["fixed"] = OAuthClientInformationFull(
            client_id="fixed", client_secret="s3cret", token_endpoint_auth_method="client_secret_post",
            redirect_uris=[APP], scope="mcp:read mcp:write")  # type: ignore[list-item]
        oauth = OAuthClient(http, clients={issuer: {"client_id": "fixed", "client_secret": "s3cret",
                                                     "token_endpoint_auth_method": "client_secret_post"}})
        request = await oauth.begin(url, APP, www_authenticate=await first_challenge(url))
        assert request.client_id == "fixed" and request.registration == "pre-registered"
        await oauth.finish(await browser(request.authorization_url))
        assert not [r for r in http.sent if r.url.endswith("/register")]
        async with ClientSession(url, http=oauth.transport_for(url)) as mcp:
            assert (await mcp.call_tool("whoami", {})).text() == "authorized"
    await http.aclose()


async def test_unreachable_authorization_server_is_a_clear_error() -> None:
    http = HttpxTransport()
    with serve_protected() as (url, _):
        oauth = OAuthClient(http)
        challenge = 'Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"'
        with pytest.raises(OAuthError, match="protected resource metadata cannot be read"):
            await oauth.begin(url, APP, www_authenticate=challenge)
    await http.aclose()
