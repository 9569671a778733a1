"""DPoP (RFC 9449): tokens bound to a key that never leaves the worker, so a copied token is useless.

An authorization server that announces ES256 in ``dpop_signing_alg_values_supported`` gets a proof with each
token request and issues a token bound to the proof's key (``cnf.jkt``); every request that then carries the
token carries a fresh proof signed by that key (``htm``, ``htu``, ``iat``, a random ``jti``, and ``ath``, the
token's hash). Whoever copies the token out of the worker has no key to sign with: the server refuses it
(SECURITY.md T-A12).

One key per protected resource (an MCP server), made on first use:

    BrowserDPoPKeys  (pycore.mcp.oauth_idb)  the worker's WebCrypto ECDSA P-256 key, generated non-extractable and
                                             kept in its IndexedDB: script can sign with it, never read it
    CryptographyDPoPKeys                     CPython (the CLI, tests): the ``cryptography`` package, in memory
    None                                     no DPoP: Bearer tokens as before

A server's nonce (``DPoP-Nonce``; RFC 9449 §8, §9) is remembered per origin and put in the next proofs; a
``use_dpop_nonce`` refusal is answered by one retry with the nonce it brought.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from abc import ABC, abstractmethod
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ALGORITHM = "ES256"
NONCE_ERROR = "use_dpop_nonce"


class DPoPKeys(ABC):
    """Signing keys by name (the resource they bind tokens to); a key is made on its first use."""

    @abstractmethod
    async def public_jwk(self, name: str) -> dict[str, str]:
        """The public half of ``name``'s P-256 key as a JWK (``kty``, ``crv``, ``x``, ``y``)."""

    @abstractmethod
    async def sign(self, name: str, data: bytes) -> bytes:
        """An ES256 signature of ``data`` by ``name``'s key: r and s, 32 bytes each (JWS form)."""

    @abstractmethod
    async def forget(self, name: str) -> None:
        """Drop ``name``'s key (its tokens are useless afterwards)."""


class CryptographyDPoPKeys(DPoPKeys):
    """P-256 keys of the ``cryptography`` package, held by this process only."""

    def __init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec

        self._ec = ec
        self._keys: dict[str, ec.EllipticCurvePrivateKey] = {}

    def _key(self, name: str) -> Any:
        if name not in self._keys:
            self._keys[name] = self._ec.generate_private_key(self._ec.SECP256R1())
        return self._keys[name]

    async def public_jwk(self, name: str) -> dict[str, str]:
        numbers = self._key(name).public_key().public_numbers()
        return {"kty": "EC", "crv": "P-256", "x": b64url(numbers.x.to_bytes(32, "big")),
                "y": b64url(numbers.y.to_bytes(32, "big"))}

    async def sign(self, name: str, data: bytes) -> bytes:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

        r, s = decode_dss_signature(self._key(name).sign(data, self._ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    async def forget(self, name: str) -> None:
        self._keys.pop(name, None)


def default_keys() -> DPoPKeys | None:
    """CPython's keys when ``cryptography`` is installed, else none (Bearer only)."""
    try:
        return CryptographyDPoPKeys()
    except ImportError:
        return None


async def proof(keys: DPoPKeys, name: str, method: str, url: str, *, access_token: str | None = None,
                nonce: str | None = None) -> str:
    """A DPoP proof JWT for one request (RFC 9449 §4.2): ``htu`` without query and fragment, ``ath`` when the
    request carries ``access_token``, ``nonce`` when the server gave one."""
    header = {"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": await keys.public_jwk(name)}
    claims: dict[str, Any] = {"jti": secrets.token_urlsafe(16), "htm": method.upper(), "htu": htu(url),
                              "iat": int(time.time())}
    if access_token is not None:
        claims["ath"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest())
    if nonce:
        claims["nonce"] = nonce
    signing_input = f"{_segment(header)}.{_segment(claims)}"
    return f"{signing_input}.{b64url(await keys.sign(name, signing_input.encode('ascii')))}"


def htu(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def supports(metadata_algorithms: list[str] | None) -> bool:
    return ALGORITHM in (metadata_algorithms or [])


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _segment(value: dict[str, Any]) -> str:
    return b64url(json.dumps(value, separators=(",", ":")).encode())


__all__ = ["CryptographyDPoPKeys", "DPoPKeys", "default_keys", "proof", "supports"]
