"""The pure parts of MCP authorization (2025-11-25 "Authorization"): which URLs we may talk to, where
metadata lives, the canonical resource, the ``WWW-Authenticate`` challenge, PKCE. No I/O.

URL policy (SECURITY.md C21/C26, T-A3/T-A8): every URL a server hands us (metadata, endpoints) must be
``https:`` — or ``http:`` on a loopback host, and only when the MCP server itself is on loopback (a
local dev setup); private, link-local and numeric-trick hosts are refused; no credentials in the URL,
no characters a shell or an HTML attribute would treat specially. A refused URL is never fetched or
opened.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import re
import secrets
from urllib.parse import urlsplit, urlunsplit

from pycore.mcp.errors import OAuthError

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_UNSAFE_CHARS = re.compile(r"[\s\x00-\x1f\x7f\"'<>\\^`{|}$;]")
_NUMBER_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$", re.IGNORECASE)  # WHATWG "ends in a number"
_AUTH_PARAM = re.compile(r'([A-Za-z0-9_\-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))')


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str, what: str, *, server_url: str) -> str:
    """``url`` if we may fetch or open it for the MCP server at ``server_url``; else :class:`OAuthError`."""
    if not isinstance(url, str) or not url or len(url) > 2048 or _UNSAFE_CHARS.search(url):
        raise OAuthError(f"the {what} URL {url!r:.120} contains characters a URL must not have; refused")
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises on a malformed port
    except ValueError as e:
        raise OAuthError(f"the {what} URL {url!r:.120} is not a valid URL; refused") from e
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in ("https", "http") or not host:
        raise OAuthError(f"the {what} URL {url!r:.120} is not an https URL; refused")
    if parts.username is not None or parts.password is not None:
        raise OAuthError(f"the {what} URL {url!r:.120} carries credentials; refused")
    local_server = is_loopback(urlsplit(server_url).hostname)
    if is_loopback(host):
        if not local_server:
            raise OAuthError(f"the {what} URL {url!r:.120} points at this machine, but the MCP server does not; "
                             "refused")
        return urlunsplit((scheme, parts.netloc, parts.path, parts.query, ""))
    if scheme != "https":
        raise OAuthError(f"the {what} URL {url!r:.120} uses plain http; only https is allowed (http only on "
                         "loopback); refused")
    _check_public_host(host, url, what)
    return urlunsplit((scheme, parts.netloc, parts.path, parts.query, ""))


def _check_public_host(host: str, url: str, what: str) -> None:
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        if _NUMBER_LABEL.match(host.rstrip(".").rsplit(".", 1)[-1]):
            raise OAuthError(f"the {what} URL {url!r:.120} has a numeric host that is not an address; "
                             "refused") from None
        return
    mapped = getattr(address, "ipv4_mapped", None) or address
    if not mapped.is_global:
        raise OAuthError(f"the {what} URL {url!r:.120} points at a private or link-local address; refused")


def canonical_resource(url: str) -> str:
    """The canonical MCP server URI (RFC 8707 / MCP "Canonical Server URI"): lower-case scheme and host,
    no fragment, no query, no trailing slash."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    netloc = parts.netloc.lower() if "@" not in parts.netloc else parts.netloc.rsplit("@", 1)[1].lower()
    return urlunsplit((parts.scheme.lower(), netloc, path, "", ""))


def resource_covers(resource: str, url: str) -> bool:
    """Whether a token issued for ``resource`` may be sent to ``url``: same origin, path within it."""
    r, u = urlsplit(canonical_resource(resource)), urlsplit(canonical_resource(url))
    if (r.scheme, r.hostname, _port(r)) != (u.scheme, u.hostname, _port(u)):
        return False
    return u.path == r.path or u.path.startswith(r.path.rstrip("/") + "/") or not r.path


def _port(parts: object) -> int | None:
    port = parts.port  # type: ignore[attr-defined]
    return port if port is not None else {"http": 80, "https": 443}.get(parts.scheme)  # type: ignore[attr-defined]


def protected_resource_metadata_urls(server_url: str) -> list[str]:
    """RFC 9728 well-known URLs in the order MCP 2025-11-25 mandates: path-inserted, then root."""
    parts = urlsplit(server_url)
    root = urlunsplit((parts.scheme, parts.netloc, "/.well-known/oauth-protected-resource", "", ""))
    path = parts.path.rstrip("/")
    return [root + path, root] if path else [root]


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """RFC 8414 / OpenID Connect discovery URLs for ``issuer``, in MCP's priority order."""
    parts = urlsplit(issuer)
    base = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    path = parts.path.rstrip("/")
    if not path:
        return [f"{base}/.well-known/oauth-authorization-server", f"{base}/.well-known/openid-configuration"]
    return [f"{base}/.well-known/oauth-authorization-server{path}", f"{base}/.well-known/openid-configuration{path}",
            f"{base}{path}/.well-known/openid-configuration"]


def same_issuer(claimed: str, expected: str) -> bool:
    """RFC 8414 §3.3: the metadata's ``issuer`` is the issuer we asked about. Exact, except that a path-less
    issuer may be written with or without its ``/`` (URL libraries disagree on that one character)."""
    if claimed == expected:
        return True
    return urlsplit(expected).path in ("", "/") and claimed.rstrip("/") == expected.rstrip("/")


def parse_www_authenticate(value: str | None) -> dict[str, str]:
    """The parameters of a ``Bearer`` challenge (RFC 6750 §3): ``resource_metadata``, ``scope``, ``error`` …
    Other schemes' parameters are ignored; an absent or unparsable header gives ``{}``."""
    if not value:
        return {}
    found = re.search(r"(?:^|,)\s*Bearer(?:\s+|$)", value, re.IGNORECASE)
    if found is None:
        return {}
    rest = value[found.end():]
    other = re.search(r",\s*[A-Za-z][A-Za-z0-9_\-]*\s+[A-Za-z0-9_\-]+\s*=", rest)  # the next scheme's start
    if other is not None:
        rest = rest[: other.start()]
    params: dict[str, str] = {}
    for name, quoted, token in _AUTH_PARAM.findall(rest):
        params.setdefault(name.lower(), re.sub(r"\\(.)", r"\1", quoted) if quoted else token)
    return params


def pkce_pair() -> tuple[str, str]:
    """A PKCE code verifier (43 chars, 256 bits) and its S256 challenge (RFC 7636 §4)."""
    verifier = secrets.token_urlsafe(32)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def random_state() -> str:
    return secrets.token_urlsafe(32)
