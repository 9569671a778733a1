"""OAuth for protected MCP servers, page side of the redirect: ``mcp.oauth_begin``, ``mcp.oauth_finish``,
``mcp.oauth_status``, ``mcp.oauth_forget``.

The worker keeps one :class:`~pycore.mcp.oauth.OAuthClient`, installed so that every MCP session
(``mcp.connect``) sends a server its own token and refreshes it. The flow:

1. ``mcp.connect`` fails with a 401 (``MCPAuthRequiredError``) → the page calls ``mcp.oauth_begin
   {server_url, redirect_uri}`` → ``{authorization_url, state, …}`` and opens the URL in a popup
   (``web/app/oauth.js``);
2. the authorization server sends the popup back to ``redirect_uri?code&state&iss``; the popup
   posts that URL to the page, which calls ``mcp.oauth_finish {callback_url}`` → ``{resource, issuer,
   scope, expires_at}``; then ``mcp.connect`` again.

Tokens never leave the worker (SECURITY.md T-A11): every result here is non-secret status. The worker keeps
tokens and client registrations in its own vault (:mod:`pycore.mcp.oauth_vault`: in the browser, IndexedDB
encrypted under a non-extractable key), so after a reload ``mcp.connect`` finds them with no call from the
page. Pending authorizations (PKCE verifiers) stay in memory; the popup keeps the page alive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pycore.contract.params import OAuthBeginParams, OAuthFinishParams, OAuthServerParams
from pycore.contract.results import AuthorizationRequest, OAuthFinished, OAuthStatus
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.methods._state import WorkerState


@method("mcp.oauth_begin", params=OAuthBeginParams, result=AuthorizationRequest)
async def oauth_begin(params: OAuthBeginParams, emit: Emit, worker: WorkerState) -> AuthorizationRequest:
    """``{server_url, redirect_uri, www_authenticate?, scope?, client_id?, client_secret?,
    client_metadata_url?}`` → ``{authorization_url, state, issuer, resource, scope, client_id, registration}``."""
    from pycore.mcp.oauth import challenge_of
    from pycore.mcp.oauth_urls import canonical_resource

    oauth = worker.oauth()
    server_url = params.server_url
    if params.client_metadata_url:
        oauth.client_metadata_url = params.client_metadata_url
    # The 401/403 challenge: given by the page, else the one the worker saw (a 403 insufficient_scope names the
    # scope to step up to), else asked of the server afresh.
    challenge = params.www_authenticate or oauth.challenges.pop(
        canonical_resource(server_url), None) or await challenge_of(oauth.http, server_url)
    request = await oauth.begin(
        server_url, params.redirect_uri, www_authenticate=challenge,
        scope=params.scope or None, client_id=params.client_id or None, client_secret=params.client_secret or None,
    )
    return request


@method("mcp.oauth_finish", params=OAuthFinishParams, result=OAuthFinished)
async def oauth_finish(params: OAuthFinishParams, emit: Emit, worker: WorkerState) -> OAuthFinished:
    """``{callback_url}`` (the popup's URL after the redirect) → ``{resource, issuer, scope, expires_at}``: the
    grant, never its tokens (the worker keeps them)."""
    tokens = await worker.oauth().finish(params.callback_url)
    return OAuthFinished(resource=tokens.resource, issuer=tokens.issuer, scope=tokens.scope,
                         expires_at=tokens.expires_at)


@method("mcp.oauth_status", params=OAuthServerParams, result=OAuthStatus)
async def oauth_status(params: OAuthServerParams, emit: Emit, worker: WorkerState) -> OAuthStatus:
    """``{server_url}`` → ``{authorized, resource?, issuer?, scope?, expires_at?, refreshable?}`` (no secrets)."""
    tokens = await worker.oauth().tokens_for(params.server_url)
    if tokens is None:
        return OAuthStatus(authorized=False)
    return OAuthStatus(authorized=True, resource=tokens.resource, issuer=tokens.issuer, scope=tokens.scope,
                       expires_at=tokens.expires_at, refreshable=bool(tokens.refresh_token))


@method("mcp.oauth_forget", params=OAuthServerParams, result=OAuthStatus)
async def oauth_forget(params: OAuthServerParams, emit: Emit, worker: WorkerState) -> OAuthStatus:
    """``{server_url}`` → ``{authorized: false}``: drop the server's tokens (sign out), from the vault too, and
    its DPoP key, so a token bound to it that survived anywhere is useless."""
    oauth = worker.oauth()
    tokens = await oauth.tokens_for(params.server_url)
    resource = tokens.resource if tokens else params.server_url
    await oauth.store.delete_tokens(resource)
    await oauth.forget_key(resource)
    return OAuthStatus(authorized=False)
