"""The worker's OAuth vault in the browser: ``web/oauth_vault.js``, which ``web/worker.js`` registers as the
JavaScript module ``orizuru_oauth_vault`` before the core starts. It keeps each record AES-GCM-encrypted in
IndexedDB under a non-extractable key the worker generated (SECURITY.md T-A11). :func:`default_vault` chooses it
where the worker registered that module, and memory elsewhere (CPython, Pyodide under Node)."""

from __future__ import annotations

from pycore.mcp.oauth_vault import MemoryVault, Vault

MODULE = "orizuru_oauth_vault"


def default_vault() -> Vault:
    """The vault of the runtime we are in: the worker's IndexedDB in the browser, memory elsewhere."""
    return IndexedDBVault() if available() else MemoryVault()


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
