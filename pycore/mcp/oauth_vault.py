"""Where the worker keeps OAuth tokens and client registrations across page reloads, so that they never
leave the worker (SECURITY.md T-A11): no method result, event or log carries them to the page.

:class:`VaultOAuthStore` is the worker's :class:`~pycore.mcp.oauth.OAuthStore`. Tokens and registrations go
to a :class:`Vault`, one named record each (``tokens <resource>``, ``client <issuer> <redirect_uri>``), read
afresh on every use, so a token another tab of the app refreshed (and its server rotated) is the one sent.
Pending authorizations (PKCE verifiers) stay in memory: they only need to outlive the popup.

Vaults::

    MemoryVault()        # CPython and tests: a dict (a "reload" keeps it, a new MemoryVault is a new profile)
    pycore.mcp.oauth_idb.default_vault()   # in the browser, the worker's IndexedDB vault, else MemoryVault

The browser's vault (``web/oauth_vault.js``, reached through :mod:`pycore.mcp.oauth_idb`) encrypts each record
with AES-GCM under a non-extractable key the worker generated and keeps in IndexedDB; the record's name is the
additional data, so a record copied under another name does not decrypt.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TypeVar

from pydantic import ValidationError

from pycore.mcp.errors import OAuthError
from pycore.mcp.oauth import ClientRegistration, MemoryOAuthStore, TokenSet
from pycore.mcp.oauth_urls import canonical_resource

Saved = TypeVar("Saved", TokenSet, ClientRegistration)


class Vault(ABC):
    """Named text records that outlive the worker. ``read`` gives ``None`` for a record that is absent or
    cannot be opened (another key's, or tampered with)."""

    @abstractmethod
    async def read(self, name: str) -> str | None: ...

    @abstractmethod
    async def write(self, name: str, text: str) -> None: ...

    @abstractmethod
    async def delete(self, name: str) -> None: ...


class MemoryVault(Vault):
    def __init__(self) -> None:
        self.records: dict[str, str] = {}

    async def read(self, name: str) -> str | None:
        return self.records.get(name)

    async def write(self, name: str, text: str) -> None:
        self.records[name] = text

    async def delete(self, name: str) -> None:
        self.records.pop(name, None)


class VaultOAuthStore(MemoryOAuthStore):
    """Tokens and registrations in ``vault``; pending authorizations in memory, as :class:`MemoryOAuthStore`."""

    def __init__(self, vault: Vault) -> None:
        super().__init__()
        self.vault = vault

    async def get_tokens(self, resource: str) -> TokenSet | None:
        try:
            name = _tokens_name(resource)
        except OAuthError:
            return None  # a resource no token is ever sent to
        tokens = await self._load(name, TokenSet)
        return tokens if tokens is not None and _tokens_name(tokens.resource) == name else None

    async def set_tokens(self, tokens: TokenSet) -> None:
        await self.vault.write(_tokens_name(tokens.resource), tokens.model_dump_json())

    async def delete_tokens(self, resource: str) -> None:
        try:
            await self.vault.delete(_tokens_name(resource))
        except OAuthError:
            return

    async def get_client(self, issuer: str, redirect_uri: str) -> ClientRegistration | None:
        client = await self._load(_client_name(issuer, redirect_uri), ClientRegistration)
        return client if client is not None and (client.issuer, client.redirect_uri or "") == (issuer, redirect_uri) \
            else None

    async def set_client(self, client: ClientRegistration) -> None:
        await self.vault.write(_client_name(client.issuer, client.redirect_uri or ""), client.model_dump_json())

    async def _load(self, name: str, model: type[Saved]) -> Saved | None:
        text = await self.vault.read(name)
        if text is None:
            return None
        try:
            return model.model_validate_json(text)
        except ValidationError:
            await self.vault.delete(name)  # saved by an older version in another shape: sign in again
            return None


def _tokens_name(resource: str) -> str:
    return f"tokens {canonical_resource(resource)}"


def _client_name(issuer: str, redirect_uri: str) -> str:
    return f"client {issuer} {redirect_uri}"


__all__ = ["MemoryVault", "Vault", "VaultOAuthStore"]
