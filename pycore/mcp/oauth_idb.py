"""The worker's OAuth vault in the browser: ``web/oauth_vault.js``, which ``web/worker.js`` registers as the
JavaScript module ``orizuru_oauth_vault`` before the core starts. It keeps each record AES-GCM-encrypted in
IndexedDB under a non-extractable key the worker generated (SECURITY.md T-A11), and the DPoP signing keys (one
ECDSA P-256 key per server, generated non-extractable, kept there too: SECURITY.md T-A12).
:func:`default_vault` and :func:`default_dpop_keys` choose them where the worker registered that module, and
memory elsewhere (CPython, Pyodide under Node)."""

from __future__ import annotations

import base64
import json

from pycore.mcp.dpop import DPoPKeys, default_keys
from pycore.mcp.oauth_vault import MemoryVault, Vault

MODULE = "orizuru_oauth_vault"


def default_vault() -> Vault:
    """The vault of the runtime we are in: the worker's IndexedDB in the browser, memory elsewhere."""
    return IndexedDBVault() if available() else MemoryVault()


def default_dpop_keys() -> DPoPKeys | None:
    """The worker's WebCrypto keys in the browser; elsewhere ``cryptography``'s, or none (Bearer only)."""
    return BrowserDPoPKeys() if available() else default_keys()


def available() -> bool:
    try:
        __import__(MODULE)
    except ImportError:
        return False  # Pyodide without our worker (tests/pyodide under Node): tokens stay in memory
    return True


class IndexedDBVault(Vault):
    def __init__(self) -> None:
        self.js = __import__(MODULE)

    async def read(self, name: str) -> str | None:
        text = await self.js.read(name)
        return text if isinstance(text, str) else None  # undefined: absent, or it did not decrypt

    async def write(self, name: str, text: str) -> None:
        await self.js.write(name, text)

    async def delete(self, name: str) -> None:
        await self.js.remove(name)


class BrowserDPoPKeys(DPoPKeys):
    """The worker's DPoP keys: the private half never reaches Python, only signatures do."""

    def __init__(self) -> None:
        self.js = __import__(MODULE)

    async def public_jwk(self, name: str) -> dict[str, str]:
        jwk = json.loads(await self.js.dpopPublicJwk(name))
        return {field: str(jwk[field]) for field in ("kty", "crv", "x", "y")}

    async def sign(self, name: str, data: bytes) -> bytes:
        signature = await self.js.dpopSign(name, data.decode("ascii"))  # a JWS signing input is ASCII
        return base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))

    async def forget(self, name: str) -> None:
        await self.js.dpopForget(name)
