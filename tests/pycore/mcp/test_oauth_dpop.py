"""DPoP (RFC 9449) against a stand-in authorization server and MCP server on loopback that check every proof as
a DPoP-only deployment does (signature, typ, htm, htu, iat, jti, ath, the token's key thumbprint, nonces):
the token is bound to the client's key, each request carries a fresh proof, nonces get one retry, and a token
copied out of the client is refused without its key (SECURITY.md T-A12)."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from cors_apps import serve_app
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from starlette.applications import Starlette
from starlette.requests import Request as HTTPRequest
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from test_oauth import APP, Recording
from test_oauth_cases import asm, prm

from pycore.http import Request
from pycore.mcp.oauth import MemoryOAuthStore, OAuthClient, TokenSet

NONCES = {"token": "as-nonce", "mcp": "rs-nonce"}  # each place its own, though on one origin


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def thumbprint(jwk: dict[str, str]) -> str:
    canonical = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()


def checked_proof(proof: str | None, method: str, url: str) -> tuple[dict[str, Any], str]:
    """The proof's claims and key thumbprint, or ValueError saying what is wrong with it."""
    if not proof:
        raise ValueError("no DPoP proof")
    head, body, signature = proof.split(".")
    header, claims = json.loads(unb64(head)), json.loads(unb64(body))
    if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256" or "d" in header["jwk"]:
        raise ValueError("bad header")
    jwk = header["jwk"]
    key = ec.EllipticCurvePublicNumbers(int.from_bytes(unb64(jwk["x"]), "big"), int.from_bytes(unb64(jwk["y"]), "big"),
                                        ec.SECP256R1()).public_key()
    raw = unb64(signature)
    try:
        key.verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
                   f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise ValueError("bad signature") from None
    if claims.get("htm") != method or claims.get("htu") != url or abs(time.time() - claims.get("iat", 0)) > 60:
        raise ValueError("htm, htu or iat wrong")
    return claims, thumbprint(jwk)


class DPoPDeployment:
    """An authorization server that issues DPoP-bound tokens only, and the MCP server that checks them."""

    def __init__(self, *, nonces: bool = False) -> None:
        self.nonces = nonces
        self.bound: dict[str, str] = {}  # access token -> key thumbprint
        self.jtis: list[str] = []
        self.challenges = {"token": 0, "mcp": 0}
        self.refusals: list[str] = []

    def _nonce_missing(self, claims: dict[str, Any], where: str) -> bool:
        if self.nonces and claims.get("nonce") != NONCES[where]:
            self.challenges[where] += 1
            return True
        return False

    def app(self) -> Starlette:
        docs: dict[str, Any] = {}

        async def document(request: HTTPRequest) -> Response:
            base = str(request.base_url).rstrip("/")
            docs["/.well-known/oauth-protected-resource/mcp"] = prm(base)
            docs["/.well-known/oauth-authorization-server"] = asm(base, dpop_signing_alg_values_supported=["ES256"])
            found = docs.get(request.url.path)
            return Response(status_code=404) if found is None else JSONResponse(found)

        async def register(request: HTTPRequest) -> Response:
            return JSONResponse({"client_id": "dyn"})

        async def token(request: HTTPRequest) -> Response:
            try:
                claims, jkt = checked_proof(request.headers.get("dpop"), "POST", str(request.url))
            except ValueError as e:
                self.refusals.append(f"token: {e}")
                return JSONResponse({"error": "invalid_dpop_proof"}, status_code=400)
            if self._nonce_missing(claims, "token"):
                return JSONResponse({"error": "use_dpop_nonce"}, status_code=400,
                                    headers={"DPoP-Nonce": NONCES["token"]})
            issued = f"tok-{len(self.bound)}"
            self.bound[issued] = jkt
            return JSONResponse({"access_token": issued, "token_type": "DPoP", "expires_in": 3600})

        async def mcp(request: HTTPRequest) -> Response:
            scheme, _, presented = request.headers.get("authorization", "").partition(" ")
            try:
                if scheme != "DPoP" or presented not in self.bound:
                    raise ValueError(f"{scheme or 'no'} token")
                claims, jkt = checked_proof(request.headers.get("dpop"), "POST", str(request.url))
                ath = base64.urlsafe_b64encode(hashlib.sha256(presented.encode()).digest()).rstrip(b"=").decode()
                if jkt != self.bound[presented] or claims.get("ath") != ath or claims["jti"] in self.jtis:
                    raise ValueError("proof by another key, for another token, or replayed")
            except ValueError as e:
                self.refusals.append(f"mcp: {e}")
                return JSONResponse({"error": "invalid_token"}, status_code=401,
                                    headers={"WWW-Authenticate": 'DPoP error="invalid_token"'})
            self.jtis.append(claims["jti"])
            if self._nonce_missing(claims, "mcp"):
                return JSONResponse({"error": "use_dpop_nonce"}, status_code=401, headers={
                    "WWW-Authenticate": 'DPoP error="use_dpop_nonce"', "DPoP-Nonce": NONCES["mcp"]})
            return JSONResponse({"ok": True})

        return Starlette(routes=[Route("/.well-known/{rest:path}", document), Route("/register", register,
                                 methods=["POST"]), Route("/token", token, methods=["POST"]),
                                 Route("/mcp", mcp, methods=["POST"])])


@asynccontextmanager
async def signed_in(*, nonces: bool = False) -> AsyncIterator[tuple[str, DPoPDeployment, OAuthClient]]:
    """Our client signed in to a fresh deployment (the popup's redirect played by hand)."""
    deployment = DPoPDeployment(nonces=nonces)
    oauth = OAuthClient(Recording())
    try:
        with serve_app(deployment.app()) as base:
            begun = await oauth.begin(base + "/mcp", APP)
            await oauth.finish({"state": begun.state, "code": "c"})
            yield base, deployment, oauth
    finally:
        await oauth.http.aclose()


async def post(oauth: OAuthClient, url: str) -> int:
    response = await oauth.transport_for(url).send(Request("POST", url, {"content-type": "application/json"}, b"{}"))
    await response.aclose()
    return response.status


async def test_the_token_is_dpop_bound_and_every_request_carries_a_fresh_proof() -> None:
    async with signed_in() as (base, deployment, oauth):
        tokens = await oauth.store.get_tokens(base + "/mcp")
        assert tokens is not None and tokens.token_type == "DPoP"
        assert [await post(oauth, base + "/mcp") for _ in range(3)] == [200, 200, 200], deployment.refusals
        assert len(set(deployment.jtis)) == 3


async def test_server_nonces_are_taken_with_one_retry_each() -> None:
    async with signed_in(nonces=True) as (base, deployment, oauth):
        assert [await post(oauth, base + "/mcp") for _ in range(2)] == [200, 200], deployment.refusals
        assert deployment.challenges == {"token": 1, "mcp": 1}  # the nonce is remembered: asked once per server


async def test_t_a12_a_token_copied_out_of_the_client_is_useless_elsewhere() -> None:
    async with signed_in() as (base, deployment, oauth):
        copied = await oauth.store.get_tokens(base + "/mcp")
        assert isinstance(copied, TokenSet)
        elsewhere = OAuthClient(oauth.http, MemoryOAuthStore())  # another program, its own DPoP keys
        await elsewhere.store.set_tokens(copied)
        assert await post(elsewhere, base + "/mcp") == 401
        as_bearer = OAuthClient(oauth.http, MemoryOAuthStore(), dpop_keys=False)
        await as_bearer.store.set_tokens(copied)
        assert await post(as_bearer, base + "/mcp") == 401
        assert deployment.refusals == ["mcp: proof by another key, for another token, or replayed", "mcp: Bearer token"]
        assert await post(oauth, base + "/mcp") == 200  # the worker that holds the key still can
