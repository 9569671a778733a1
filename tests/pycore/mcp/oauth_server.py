"""A protected MCP server on the official SDK (``mcp.server.auth``): the SDK's authorization server
routes (metadata, /authorize, /token, /register), its protected-resource metadata and bearer checks,
with an in-memory provider that approves every authorization at once (the user "clicks Allow").

Run in-process by uvicorn in a thread on loopback, so a test can read what the provider saw
(``provider.authorizations``, ``provider.token_requests``) and turn its knobs.
"""

from __future__ import annotations

import contextlib
import secrets
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp_servers import serve_asgi
from pydantic import AnyHttpUrl

SCOPES = ["mcp:read", "mcp:write"]


@dataclass
class Provider:
    """An ``OAuthAuthorizationServerProvider`` kept in memory; tokens are bound to the requested resource."""

    issuer: str
    access_lifetime: int = 3600
    send_iss: bool = True
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access: dict[str, AccessToken] = field(default_factory=dict)
    refresh: dict[str, RefreshToken] = field(default_factory=dict)
    authorizations: list[AuthorizationParams] = field(default_factory=list)
    token_requests: list[str] = field(default_factory=list)

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info  # type: ignore[index]

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.authorizations.append(params)
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id or "",
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state,
                                      iss=self.issuer if self.send_iss else None)

    async def load_authorization_code(self, client: Any, authorization_code: str) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client: Any, authorization_code: AuthorizationCode) -> OAuthToken:
        self.token_requests.append("authorization_code")
        self.codes.pop(authorization_code.code, None)
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client: Any, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: Any, refresh_token: RefreshToken, scopes: list[str]) -> OAuthToken:
        self.token_requests.append("refresh_token")
        self.refresh.pop(refresh_token.token, None)  # rotated: the old one is spent
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + self.access_lifetime
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes, expires_at=expires,
                                          resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=self.access_lifetime,
                          refresh_token=refresh, scope=" ".join(scopes))

    def expire_all(self) -> None:
        for token in self.access.values():
            token.expires_at = int(time.time()) - 1


def create_app(base: str, provider: Provider, required_scopes: list[str] | None = None) -> Any:
    settings = AuthSettings(
        issuer_url=AnyHttpUrl(base), resource_server_url=AnyHttpUrl(base + "/mcp"), validate_token_resource=True,
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES),
        required_scopes=required_scopes if required_scopes is not None else ["mcp:read"],
    )
    server = MCPServer(name="protected", auth=settings, auth_server_provider=provider)  # type: ignore[arg-type]

    @server.tool()
    def whoami() -> str:
        """Say that the caller got in."""
        return "authorized"

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return server.streamable_http_app()


@contextlib.contextmanager
def serve_protected(**knobs: Any) -> Iterator[tuple[str, Provider]]:
    """``(mcp_url, provider)`` of a protected server on ``http://127.0.0.1:PORT``."""
    required = knobs.pop("required_scopes", None)
    providers: list[Provider] = []

    def make(base: str) -> Any:
        providers.append(Provider(issuer=base + "/", **knobs))  # the SDK writes its issuer with a trailing slash
        return create_app(base, providers[0], required)

    with serve_asgi(make) as (base, _):
        yield base + "/mcp", providers[0]
