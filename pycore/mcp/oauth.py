"""OAuth 2.1 for protected MCP servers (MCP 2025-11-25 "Authorization", with the 2026 hardening:
RFC 9207 ``iss`` checks, credentials bound to their issuer), over the :mod:`pycore.http` seam so it
runs in the browser's ``fetch`` too.

The browser half is a redirect, so the flow is two calls::

    oauth = OAuthClient(http, store)
    request = await oauth.begin("https://mcp.example.com/mcp", redirect_uri="https://app.example/")
    # the page opens request.authorization_url in a popup; the authorization server redirects the
    # popup back to redirect_uri?code=…&state=…&iss=…, and the page hands that URL back:
    tokens = await oauth.finish(callback_url)
    async with ClientSession(url, http=oauth.transport_for(url)) as mcp: ...

``begin`` discovers the protected-resource metadata (RFC 9728: the ``resource_metadata`` of the 401
challenge, else the path-inserted then the root well-known URL) and the authorization server's
metadata (RFC 8414, OpenID discovery fallbacks; its ``issuer`` must be the one we asked about),
refuses servers without PKCE S256, registers (pre-registered id → Client ID Metadata Document →
dynamic registration RFC 7591) and records the PKCE verifier, the issuer and the ``resource``
(RFC 8707) under a random single-use ``state``. ``finish`` accepts only a callback whose ``state`` is
pending and whose ``iss`` (when present, or when the server promises it) is the recorded issuer, then
redeems the code. :class:`AuthorizedTransport` puts the token on requests inside its resource only
and refreshes it when it expires or the server answers 401. Where the authorization server offers DPoP, tokens
are bound to the worker's key for the resource and each request carries a fresh proof (:mod:`pycore.mcp.dpop`).
"""

from __future__ import annotations

import base64
import json
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, ValidationError

from pycore.contract.results import AuthorizationRequest  # what the page gets: declared in the contract
from pycore.exceptions import APIConnectionError
from pycore.http import Request, Response, Transport, is_redirect, redirect_target
from pycore.mcp import dpop
from pycore.mcp.errors import OAuthCallbackError, OAuthError
from pycore.mcp.oauth_urls import (
    authorization_server_metadata_urls,
    canonical_resource,
    check_url,
    is_loopback,
    parse_www_authenticate,
    pkce_pair,
    protected_resource_metadata_urls,
    random_state,
    resource_covers,
    same_issuer,
)

PENDING_LIFETIME = 600.0  # seconds a begun authorization may wait for its callback
EXPIRY_MARGIN = 30.0  # refresh this many seconds before the access token expires
MAX_STEP_UPS = 2  # bounded re-authorizations for the same resource and scope set
METADATA_LIMIT = 256 * 1024

M = TypeVar("M", bound=BaseModel)


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ResourceMetadata(_Model):
    """RFC 9728 protected resource metadata (the fields we use)."""

    resource: str
    authorization_servers: list[str] = []
    scopes_supported: list[str] | None = None


class ServerMetadata(_Model):
    """RFC 8414 / OpenID Connect discovery metadata (the fields we use)."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: list[str] | None = None
    code_challenge_methods_supported: list[str] | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    client_id_metadata_document_supported: bool | None = None
    authorization_response_iss_parameter_supported: bool | None = None
    dpop_signing_alg_values_supported: list[str] | None = None


class ClientRegistration(_Model):
    """Client credentials, bound to the authorization server (``issuer``) that issued or accepts them."""

    issuer: str
    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str = "none"
    redirect_uri: str | None = None
    scope: str | None = None  # what a dynamic registration asked for
    how: str = "pre-registered"  # or "metadata-document", "dynamic"


class TokenSet(_Model):
    """What the token endpoint gave us, and what it may be used for: only ``resource`` (and the URLs
    under it), refreshed only at ``token_endpoint`` of ``issuer``."""

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None
    resource: str
    issuer: str
    token_endpoint: str
    client: ClientRegistration

    @property
    def dpop(self) -> bool:
        """Bound to the worker's DPoP key for ``resource``: sent with a fresh proof, useless without it."""
        return self.token_type.lower() == "dpop"

    def expired(self, now: float | None = None) -> bool:
        return self.expires_at is not None and (now or time.time()) >= self.expires_at - EXPIRY_MARGIN


class PendingAuthorization(_Model):
    """Everything ``finish`` needs, recorded before the redirect (kept by the store, keyed by ``state``)."""

    state: str
    code_verifier: str
    issuer: str
    iss_required: bool
    resource: str
    server_url: str
    redirect_uri: str
    scope: str | None
    metadata: ServerMetadata
    client: ClientRegistration
    created_at: float


# -- the store ------------------------------------------------------------------------------------


class OAuthStore(ABC):
    """Where tokens, client registrations and pending authorizations live. The worker keeps tokens and
    registrations in its vault (:mod:`pycore.mcp.oauth_vault`, SECURITY.md T-A11), never handing them to the
    page; pending ones only need to outlive the popup."""

    @abstractmethod
    async def get_tokens(self, resource: str) -> TokenSet | None: ...

    @abstractmethod
    async def set_tokens(self, tokens: TokenSet) -> None: ...

    @abstractmethod
    async def delete_tokens(self, resource: str) -> None: ...

    @abstractmethod
    async def get_client(self, issuer: str, redirect_uri: str) -> ClientRegistration | None: ...

    @abstractmethod
    async def set_client(self, client: ClientRegistration) -> None: ...

    @abstractmethod
    async def add_pending(self, pending: PendingAuthorization) -> None: ...

    @abstractmethod
    async def take_pending(self, state: str) -> PendingAuthorization | None:
        """The pending authorization for ``state``, removed: a state is good for one callback only."""


class MemoryOAuthStore(OAuthStore):
    """In memory, for one process (the CLI, tests). The worker's store is
    :class:`~pycore.mcp.oauth_vault.VaultOAuthStore`."""

    def __init__(self) -> None:
        self.tokens: dict[str, TokenSet] = {}
        self.clients: dict[tuple[str, str], ClientRegistration] = {}
        self.pending: dict[str, PendingAuthorization] = {}

    async def get_tokens(self, resource: str) -> TokenSet | None:
        return self.tokens.get(canonical_resource(resource))

    async def set_tokens(self, tokens: TokenSet) -> None:
        self.tokens[canonical_resource(tokens.resource)] = tokens

    async def delete_tokens(self, resource: str) -> None:
        self.tokens.pop(canonical_resource(resource), None)

    async def get_client(self, issuer: str, redirect_uri: str) -> ClientRegistration | None:
        return self.clients.get((issuer, redirect_uri))

    async def set_client(self, client: ClientRegistration) -> None:
        self.clients[(client.issuer, client.redirect_uri or "")] = client

    async def add_pending(self, pending: PendingAuthorization) -> None:
        now = time.time()
        self.pending = {k: p for k, p in self.pending.items() if now - p.created_at < PENDING_LIFETIME}
        self.pending[pending.state] = pending

    async def take_pending(self, state: str) -> PendingAuthorization | None:
        pending = self.pending.pop(state, None)
        if pending is None or time.time() - pending.created_at >= PENDING_LIFETIME:
            return None
        return pending


# -- the flow -------------------------------------------------------------------------------------


class OAuthClient:
    """Discovery, registration, authorization, code exchange and refresh for MCP servers.

    ``clients`` holds pre-registered credentials by issuer (``{"https://as.example": {"client_id": …}}``);
    ``client_metadata_url`` is our Client ID Metadata Document (an https URL with a path), used when an
    authorization server supports it. Requests for metadata and tokens carry no custom headers, so the
    browser sends them without a CORS preflight; none follows a redirect (a followed redirect would escape the
    URL checks and carry the code and client credentials along).
    """

    def __init__(
        self, http: Transport, store: OAuthStore | None = None, *, client_name: str = "Orizuru",
        clients: Mapping[str, Mapping[str, str]] | None = None, client_metadata_url: str | None = None,
        timeout: float = 30.0, dpop_keys: dpop.DPoPKeys | None | bool = True,
    ) -> None:
        self.http = http
        self.store = store or MemoryOAuthStore()
        self.client_name = client_name
        self.clients = {issuer: dict(value) for issuer, value in (clients or {}).items()}
        self.client_metadata_url = client_metadata_url
        self.timeout = timeout
        # True: this runtime's default keys (CPython's ``cryptography``); the worker passes its WebCrypto keys.
        self.dpop_keys = dpop.default_keys() if dpop_keys is True else dpop_keys or None
        self.dpop_nonces: dict[str, str] = {}  # the last DPoP-Nonce each origin gave
        self._step_ups: dict[tuple[str, str], int] = {}
        self.challenges: dict[str, str] = {}  # the last 401/403 challenge seen per server URL (for begin)

    # -- discovery ---------------------------------------------------------------------------------

    async def discover(self, server_url: str, www_authenticate: str | None = None) -> tuple[ResourceMetadata, str]:
        """The protected resource metadata and the ``resource`` to ask tokens for."""
        canonical_resource(server_url)  # an MCP server URL the browser may read otherwise is refused here
        challenge = parse_www_authenticate(www_authenticate)
        if challenge.get("resource_metadata"):
            candidates = [check_url(challenge["resource_metadata"], "resource metadata", server_url=server_url)]
        else:
            candidates = protected_resource_metadata_urls(server_url)
        problems: list[str] = []
        async for url, metadata in self._documents(candidates, ResourceMetadata, "protected resource metadata",
                                                   problems):
            try:
                resource = canonical_resource(metadata.resource)
            except OAuthError as e:
                raise OAuthError(f"the metadata at {url} names an unusable resource: {e.message}", url=url) from None
            if not resource_covers(resource, server_url):
                raise OAuthError(f"the metadata at {url} describes {metadata.resource!r}, not {server_url}; refused",
                                 url=url)
            if not metadata.authorization_servers:
                raise OAuthError(f"the metadata at {url} names no authorization server", url=url)
            return metadata, resource
        if challenge.get("resource_metadata"):
            raise OAuthError(f"{server_url} wants authorization but its protected resource metadata cannot be read "
                             f"({'; '.join(problems)})", url=server_url)
        # MCP 2025-03-26 servers publish no resource metadata: their own origin is the authorization server.
        resource = canonical_resource(server_url)
        origin = urlunsplit(urlsplit(resource)[:2] + ("", "", ""))
        return ResourceMetadata(resource=server_url, authorization_servers=[origin]), resource

    async def server_metadata(self, issuer: str, server_url: str) -> ServerMetadata:
        """The authorization server's metadata: its ``issuer`` must be ``issuer``, its endpoints safe, PKCE S256."""
        check_url(issuer, "authorization server", server_url=server_url)
        problems: list[str] = []
        async for url, metadata in self._documents(authorization_server_metadata_urls(issuer), ServerMetadata,
                                                   "authorization server metadata", problems):
            if not same_issuer(metadata.issuer, issuer):
                raise OAuthError(f"the metadata at {url} claims issuer {metadata.issuer!r}, not {issuer!r}; refused",
                                 url=url)
            if "S256" not in (metadata.code_challenge_methods_supported or []):
                raise OAuthError(f"the authorization server {issuer} does not announce PKCE S256 "
                                 "(code_challenge_methods_supported); refusing to authorize", url=url)
            for field in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
                value = getattr(metadata, field)
                if value is not None:
                    setattr(metadata, field, check_url(value, field.replace("_", " "), server_url=server_url))
            return metadata
        raise OAuthError(f"no metadata found for the authorization server {issuer} ({'; '.join(problems)})",
                         url=issuer)

    async def _documents(
        self, urls: list[str], model: type[M], what: str, problems: list[str]
    ) -> AsyncIterator[tuple[str, M]]:
        """Each of ``urls`` that answers with a valid ``model``, in order; why the others did not goes
        into ``problems``."""
        for url in urls:
            raw = await self._get_json(url, problems)
            if raw is None:
                continue
            try:
                metadata = model.model_validate(raw)
            except ValidationError as e:
                problems.append(f"{url}: not {what} ({e.error_count()} problems)")
                continue
            yield url, metadata

    async def _get_json(self, url: str, problems: list[str]) -> Any:
        try:
            response = await self.http.send(Request("GET", url, {"accept": "application/json"}, None,
                                                    timeout=self.timeout))
        except APIConnectionError as e:
            problems.append(f"{url}: unreachable from here ({e}); in a browser this is often missing CORS")
            return None
        try:
            if is_redirect(response):
                where = redirect_target(url, response) or "another address (the browser does not show where)"
                problems.append(f"{url}: redirected to {where:.300}; not followed")
                return None
            if response.status != 200:
                problems.append(f"{url}: HTTP {response.status}")
                return None
            body = await _read_limited(response)
        finally:
            await response.aclose()
        try:
            return json.loads(body)
        except ValueError:
            problems.append(f"{url}: not JSON")
            return None

    # -- begin -------------------------------------------------------------------------------------

    async def begin(
        self, server_url: str, redirect_uri: str, *, www_authenticate: str | None = None, scope: str | None = None,
        client_id: str | None = None, client_secret: str | None = None,
    ) -> AuthorizationRequest:
        """Discover, register, and build the authorization URL for the page to open."""
        _check_redirect_uri(redirect_uri)
        resource_metadata, resource = await self.discover(server_url, www_authenticate)
        issuer = resource_metadata.authorization_servers[0]
        metadata = await self.server_metadata(issuer, server_url)
        challenge = parse_www_authenticate(www_authenticate)
        scope = scope or challenge.get("scope") or _joined(resource_metadata.scopes_supported)
        if challenge.get("error") == "insufficient_scope":
            self._count_step_up(resource, scope)
        client = await self._client(metadata, redirect_uri, scope, client_id, client_secret)
        verifier, challenge_s256 = pkce_pair()
        state = random_state()
        await self.store.add_pending(PendingAuthorization(
            state=state, code_verifier=verifier, issuer=metadata.issuer,
            iss_required=bool(metadata.authorization_response_iss_parameter_supported), resource=resource,
            server_url=server_url, redirect_uri=redirect_uri, scope=scope, metadata=metadata, client=client,
            created_at=time.time(),
        ))
        params = {"response_type": "code", "client_id": client.client_id, "redirect_uri": redirect_uri,
                  "state": state, "code_challenge": challenge_s256, "code_challenge_method": "S256",
                  "resource": resource}
        if scope:
            params["scope"] = scope
        return AuthorizationRequest(
            authorization_url=_with_query(metadata.authorization_endpoint, params), state=state,
            issuer=metadata.issuer, resource=resource, scope=scope, client_id=client.client_id, registration=client.how,
        )

    def _count_step_up(self, resource: str, scope: str | None) -> None:
        key = (resource, scope or "")
        self._step_ups[key] = self._step_ups.get(key, 0) + 1
        if self._step_ups[key] > MAX_STEP_UPS:
            raise OAuthError(f"{resource} still refuses the scope {scope!r} after {MAX_STEP_UPS} authorizations; "
                             "giving up (the account may lack that permission)", url=resource)

    async def _client(
        self, metadata: ServerMetadata, redirect_uri: str, scope: str | None, client_id: str | None,
        client_secret: str | None,
    ) -> ClientRegistration:
        issuer = metadata.issuer
        if client_id:  # entered by the user for this server
            client = ClientRegistration(issuer=issuer, client_id=client_id, client_secret=client_secret,
                                        token_endpoint_auth_method=_secret_method(metadata, client_secret),
                                        redirect_uri=redirect_uri)
            await self.store.set_client(client)
            return client
        known = next((value for key, value in self.clients.items() if same_issuer(issuer, key)), None)
        if known:
            secret = known.get("client_secret")
            return ClientRegistration(issuer=issuer, client_id=known["client_id"], client_secret=secret,
                                      token_endpoint_auth_method=known.get("token_endpoint_auth_method")
                                      or _secret_method(metadata, secret), redirect_uri=redirect_uri)
        stored = await self.store.get_client(issuer, redirect_uri)
        if stored is not None and stored.issuer == issuer and _covers_scope(stored, scope):
            return stored
        if self.client_metadata_url and metadata.client_id_metadata_document_supported:
            return ClientRegistration(issuer=issuer, client_id=self.client_metadata_url, redirect_uri=redirect_uri,
                                      how="metadata-document")
        if metadata.registration_endpoint:
            client = await self._register(metadata, redirect_uri, scope)
            await self.store.set_client(client)
            return client
        raise OAuthError(f"the authorization server {issuer} offers no way to register this app (no metadata "
                         "document support, no registration endpoint): enter a client id registered there",
                         url=issuer, code="registration_required")

    async def _register(self, metadata: ServerMetadata, redirect_uri: str, scope: str | None) -> ClientRegistration:
        """RFC 7591 dynamic registration as a public client (a browser app keeps no secret)."""
        body: dict[str, Any] = {
            "client_name": self.client_name, "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native" if is_loopback(urlsplit(redirect_uri).hostname) else "web",
        }
        if scope:
            body["scope"] = scope
        assert metadata.registration_endpoint is not None
        raw = await self._post(metadata.registration_endpoint, json.dumps(body).encode(), "application/json",
                               "registration")
        client_id = raw.get("client_id")
        if not isinstance(client_id, str) or not client_id:
            raise OAuthError(f"{metadata.registration_endpoint} answered the registration without a client_id",
                             url=metadata.registration_endpoint)
        secret = raw.get("client_secret") if isinstance(raw.get("client_secret"), str) else None
        method = raw.get("token_endpoint_auth_method") or ("client_secret_post" if secret else "none")
        return ClientRegistration(issuer=metadata.issuer, client_id=client_id, client_secret=secret,
                                  token_endpoint_auth_method=method, redirect_uri=redirect_uri, scope=scope,
                                  how="dynamic")

    # -- finish ------------------------------------------------------------------------------------

    async def finish(self, callback: str | Mapping[str, str]) -> TokenSet:
        """Validate the redirect (``state``, then ``iss``) and redeem its code. Anything else is refused
        with :class:`OAuthCallbackError`, whose message never repeats what the callback said."""
        params = _callback_params(callback)
        state = params.get("state")
        pending = await self.store.take_pending(state) if state else None
        if pending is None:
            raise OAuthCallbackError("this authorization response does not answer a request we made (unknown, "
                                     "expired or already used state); discarded", code="invalid_state")
        iss = params.get("iss")
        if iss is not None and iss != pending.issuer:
            raise OAuthCallbackError("this authorization response comes from another issuer than the one we "
                                     "asked; discarded", url=pending.issuer, code="invalid_issuer")
        if iss is None and pending.iss_required:
            raise OAuthCallbackError("this authorization response lacks the issuer its server promised to "
                                     "send (RFC 9207 iss); discarded", url=pending.issuer, code="invalid_issuer")
        if "error" in params:
            detail = params.get("error_description", "")[:200]
            raise OAuthError(f"the authorization server refused: {params['error'][:64]}"
                             + (f" ({detail})" if detail else ""), url=pending.issuer, code=params["error"][:64])
        code = params.get("code")
        if not code:
            raise OAuthError("the authorization response carries no code", url=pending.issuer, code="invalid_request")
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": pending.redirect_uri,
                "code_verifier": pending.code_verifier, "resource": pending.resource}
        tokens = await self._token_request(pending.metadata.token_endpoint, pending.client, form,
                                           resource=pending.resource, scope=pending.scope,
                                           dpop_bound=dpop.supports(pending.metadata.dpop_signing_alg_values_supported))
        await self.store.set_tokens(tokens)
        return tokens

    async def refresh(self, tokens: TokenSet) -> TokenSet:
        """A fresh access token from the refresh token (rotated when the server rotates it)."""
        if not tokens.refresh_token:
            raise OAuthError(f"the token for {tokens.resource} expired and cannot be refreshed: authorize again",
                             url=tokens.resource, code="invalid_grant")
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "resource": tokens.resource}
        fresh = await self._token_request(tokens.token_endpoint, tokens.client, form, resource=tokens.resource,
                                          scope=tokens.scope, dpop_bound=tokens.dpop)
        if fresh.refresh_token is None:
            fresh.refresh_token = tokens.refresh_token
        await self.store.set_tokens(fresh)
        return fresh

    async def _token_request(self, endpoint: str, client: ClientRegistration, form: dict[str, str], *,
                             resource: str, scope: str | None, dpop_bound: bool = False) -> TokenSet:
        headers: dict[str, str] = {}
        form = {**form, "client_id": client.client_id}
        if client.client_secret and client.token_endpoint_auth_method == "client_secret_basic":
            pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
            headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
            form.pop("client_id")
        elif client.client_secret:
            form["client_secret"] = client.client_secret
        dpop_key = canonical_resource(resource) if dpop_bound and self.dpop_keys else None
        raw = await self._post(endpoint, urlencode(form).encode(), "application/x-www-form-urlencoded", "token",
                               headers, dpop_key=dpop_key)
        access = raw.get("access_token")
        if not isinstance(access, str) or not access:
            raise OAuthError(f"{endpoint} answered without an access_token", url=endpoint)
        token_type = str(raw.get("token_type", "Bearer"))
        if token_type.lower() not in (("bearer", "dpop") if dpop_key else ("bearer",)):
            raise OAuthError(f"{endpoint} issued a {token_type[:32]!r} token; only Bearer"
                             f"{' and DPoP' if dpop_key else ''} are supported", url=endpoint)
        expires_in = raw.get("expires_in")
        return TokenSet(
            access_token=access, token_type="DPoP" if token_type.lower() == "dpop" else "Bearer",
            refresh_token=raw.get("refresh_token") or None,
            expires_at=time.time() + float(expires_in) if isinstance(expires_in, int | float) else None,
            scope=raw.get("scope") or scope, resource=resource, issuer=client.issuer, token_endpoint=endpoint,
            client=client,
        )

    async def _post(self, url: str, body: bytes, content_type: str, what: str,
                    headers: dict[str, str] | None = None, *, dpop_key: str | None = None) -> dict[str, Any]:
        """POST and read the JSON answer; with ``dpop_key``, a DPoP proof by that key goes along, and a
        ``use_dpop_nonce`` refusal is tried once more with the nonce it gave (RFC 9449 §8)."""
        headers = {"content-type": content_type, "accept": "application/json", **(headers or {})}
        for attempt in range(2):
            if dpop_key is not None and self.dpop_keys is not None:
                headers["dpop"] = await dpop.proof(self.dpop_keys, dpop_key, "POST", url,
                                                   nonce=self.dpop_nonces.get(dpop.origin(url)))
            try:
                response = await self.http.send(Request("POST", url, headers, body, timeout=self.timeout))
            except APIConnectionError as e:
                raise OAuthError(f"could not reach the {what} endpoint {url} ({e}); in a browser this is often "
                                 "missing CORS on the authorization server: connect through the local relay",
                                 url=url) from e
            if not (dpop_key and self.note_nonce(url, response) and response.status == 400 and attempt == 0):
                break
            await response.aclose()  # a nonce refusal (or a 400 that brought a nonce): once more, with it
        if is_redirect(response):
            await response.aclose()
            where = redirect_target(url, response) or "another address (the browser does not show where)"
            raise OAuthError(f"the {what} endpoint {url} redirected the request to {where:.300}; not followed, so "
                             "the code and the client's credentials never go to another address", url=url)
        try:
            text = (await _read_limited(response)).decode("utf-8", "replace")
        finally:
            await response.aclose()
        try:
            raw = json.loads(text)
        except ValueError:
            raw = None
        if response.status >= 400 or not isinstance(raw, dict):
            error = raw.get("error") if isinstance(raw, dict) else None
            detail = raw.get("error_description") if isinstance(raw, dict) else None
            raise OAuthError(f"the {what} endpoint {url} refused (HTTP {response.status}"
                             f"{', ' + str(error)[:64] if error else ''}{': ' + str(detail)[:200] if detail else ''})",
                             url=url, code=str(error)[:64] if error else None)
        return raw

    # -- using tokens ------------------------------------------------------------------------------

    async def tokens_for(self, url: str) -> TokenSet | None:
        """The tokens that may be sent to ``url`` (refreshed first if they expired), or ``None``: looked up
        by the URL, then by each of its parent paths, so only a resource that covers ``url`` matches."""
        tokens = None
        try:
            candidates = _resource_candidates(url)
        except OAuthError:
            return None  # a URL the browser may read otherwise gets no token
        for resource in candidates:
            tokens = await self.store.get_tokens(resource)
            if tokens is not None:
                break
        if tokens is None or not resource_covers(tokens.resource, url):
            return None
        if tokens.expired():
            try:
                tokens = await self.refresh(tokens)
            except OAuthError:
                await self.store.delete_tokens(tokens.resource)
                return None  # the request goes without a token; its 401 asks the user to authorize again
        return tokens

    async def forget_key(self, resource: str) -> None:
        """Drop the DPoP key of ``resource`` (signing out): the next sign-in binds its tokens to a new one."""
        try:
            name = canonical_resource(resource)
        except OAuthError:
            return  # no token, so no key, for such a URL
        if self.dpop_keys is not None:
            await self.dpop_keys.forget(name)

    def note_nonce(self, url: str, response: Response) -> bool:
        """Remember the ``DPoP-Nonce`` ``response`` brought for its origin; whether it brought a new one."""
        nonce = response.headers.get("dpop-nonce")
        if not nonce or len(nonce) > 512 or self.dpop_nonces.get(dpop.origin(url)) == nonce:
            return False
        self.dpop_nonces[dpop.origin(url)] = nonce
        return True

    async def authorize_request(self, request: Request, tokens: TokenSet) -> Request:
        """``request`` carrying ``tokens``: ``Authorization: Bearer``, or for a DPoP-bound token
        ``Authorization: DPoP`` with a fresh proof of the worker's key for the token's resource."""
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("authorization", "dpop")}
        if tokens.dpop and self.dpop_keys is not None:
            headers["authorization"] = f"DPoP {tokens.access_token}"
            headers["dpop"] = await dpop.proof(self.dpop_keys, canonical_resource(tokens.resource), request.method,
                                               request.url, access_token=tokens.access_token,
                                               nonce=self.dpop_nonces.get(dpop.origin(request.url)))
        else:
            headers["authorization"] = f"Bearer {tokens.access_token}"
        return replace(request, headers=headers)

    def transport_for(self, server_url: str, inner: Transport | None = None) -> AuthorizedTransport:
        return AuthorizedTransport(inner or self.http, self, server_url)


async def challenge_of(http: Transport, server_url: str) -> str | None:
    """The ``WWW-Authenticate`` challenge ``server_url`` answers an unauthenticated ``initialize`` with (``None``
    when it does not answer 401, or the browser hides the header: discovery then uses the well-known URLs)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "orizuru", "version": "0"}}})
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    try:
        response = await http.send(Request("POST", server_url, headers, body.encode(), timeout=30.0))
    except APIConnectionError:
        return None
    await response.aclose()
    return response.headers.get("www-authenticate") if response.status == 401 else None


_installed: OAuthClient | None = None


def install(oauth: OAuthClient | None) -> None:
    """Make ``oauth`` the token source of every :class:`~pycore.mcp.ClientSession` created without its own
    ``http`` transport (the worker has one user, one token store). ``None`` uninstalls."""
    global _installed
    _installed = oauth


def installed() -> OAuthClient | None:
    return _installed


class AuthorizedTransport(Transport):
    """Adds ``Authorization: Bearer`` (or ``DPoP`` with its proof) to requests inside the token's resource —
    never to another origin or path — and, on a 401 to a request that carried a token, refreshes once and sends
    it again."""

    def __init__(self, inner: Transport, oauth: OAuthClient, server_url: str) -> None:
        self.inner = inner
        self.oauth = oauth
        self.server_url = server_url

    async def send(self, request: Request) -> Response:
        tokens = await self.oauth.tokens_for(request.url)
        if tokens is None:
            return self._remember(request, await self.inner.send(request))
        response = await self._send_with(request, tokens)
        if response.status != 401 or not tokens.refresh_token:
            return response
        await response.aclose()
        try:
            tokens = await self.oauth.refresh(tokens)
        except OAuthError:
            await self.oauth.store.delete_tokens(tokens.resource)
            return await self.inner.send(request)  # its 401 (with the challenge) tells the caller to authorize
        return await self._send_with(request, tokens)

    async def _send_with(self, request: Request, tokens: TokenSet) -> Response:
        """``request`` with the token; a DPoP ``use_dpop_nonce`` refusal is tried once more with the server's
        nonce (RFC 9449 §9)."""
        response = await self.inner.send(await self.oauth.authorize_request(request, tokens))
        fresh_nonce = self.oauth.note_nonce(request.url, response)
        challenge = parse_www_authenticate(response.headers.get("www-authenticate"))
        if tokens.dpop and fresh_nonce and response.status == 401 and challenge.get("error") == dpop.NONCE_ERROR:
            await response.aclose()
            response = await self.inner.send(await self.oauth.authorize_request(request, tokens))
            self.oauth.note_nonce(request.url, response)
        return self._remember(request, response)

    def _remember(self, request: Request, response: Response) -> Response:
        """Keep the challenge of a 401/403 so ``begin`` can use it when the page cannot read the header."""
        challenge = response.headers.get("www-authenticate")
        if response.status in (401, 403) and challenge:
            try:
                self.oauth.challenges[canonical_resource(request.url)] = challenge
            except OAuthError:
                pass  # no token is ever sent to that URL: nothing to authorize
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


# -- helpers ----------------------------------------------------------------------------------------


async def _read_limited(response: Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > METADATA_LIMIT:
            raise OAuthError("an OAuth response was larger than 256 KiB; refused")
        chunks.append(chunk)
    return b"".join(chunks)


def _check_redirect_uri(redirect_uri: str) -> None:
    parts = urlsplit(redirect_uri)
    if parts.fragment or parts.scheme not in ("https", "http"):
        raise OAuthError(f"the redirect URI {redirect_uri!r:.120} must be an https URL without a fragment")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise OAuthError(f"the redirect URI {redirect_uri!r:.120} must be https (http only on loopback)")


def _with_query(endpoint: str, params: dict[str, str]) -> str:
    parts = urlsplit(endpoint)
    query = urlencode([*parse_qsl(parts.query, keep_blank_values=True), *params.items()])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _callback_params(callback: str | Mapping[str, str]) -> dict[str, str]:
    if isinstance(callback, Mapping):
        return {str(k): str(v) for k, v in callback.items()}
    parts = urlsplit(callback)
    query = parts.query or (parts.fragment if "state=" in parts.fragment else "")
    return dict(parse_qsl(query, keep_blank_values=True))


def _joined(scopes: list[str] | None) -> str | None:
    return " ".join(scopes) if scopes else None


def _secret_method(metadata: ServerMetadata, secret: str | None) -> str:
    if not secret:
        return "none"
    methods = metadata.token_endpoint_auth_methods_supported or ["client_secret_basic"]
    return "client_secret_basic" if "client_secret_basic" in methods else "client_secret_post"


def _covers_scope(client: ClientRegistration, scope: str | None) -> bool:
    """A dynamic registration made for fewer scopes is made again (servers check scopes per client)."""
    if client.how != "dynamic" or not scope:
        return True
    return set(scope.split()) <= set((client.scope or "").split())


def _resource_candidates(url: str) -> list[str]:
    parts = urlsplit(canonical_resource(url))
    segments = parts.path.split("/")
    paths = ["/".join(segments[:i]) for i in range(len(segments), 0, -1)]
    return [urlunsplit((parts.scheme, parts.netloc, path, "", "")) for path in paths]


__all__ = [
    "AuthorizationRequest", "AuthorizedTransport", "ClientRegistration", "MemoryOAuthStore", "OAuthClient",
    "OAuthStore", "PendingAuthorization", "ResourceMetadata", "ServerMetadata", "TokenSet", "install", "installed",
]
