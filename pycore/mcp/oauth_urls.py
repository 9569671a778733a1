"""The pure parts of MCP authorization (2025-11-25 "Authorization"): which URLs we may talk to, where
metadata lives, the canonical resource, the ``WWW-Authenticate`` challenge, PKCE. No I/O.

URL policy (SECURITY.md C21/C26, T-A3/T-A8, T-U2/T-U3): every URL a server hands us (metadata, endpoints)
must be ``https:`` — or ``http:`` on a loopback host, and only when the MCP server itself is on loopback (a
local dev setup); private, link-local and reserved addresses are refused, also inside IPv6 (IPv4-mapped,
6to4, Teredo); no credentials in the URL, no characters a shell or an HTML attribute would treat
specially. Hosts are read by :mod:`pycore.http.origin`, as the browser reads them: a form the browser could
read otherwise (``127.0.0.1.``, ``localhost%2e``, ``0x7f000001``, ``017700000001``, ``2852039166``, a
backslash, userinfo) is refused outright, so no encoding of a loopback or link-local host gets through. A
refused URL is never fetched or opened.

The resource a token is for, and whether a URL lies inside it (:func:`resource_covers`), are judged by the
same reader: same origin as the browser sees it, and a path inside the resource's path without ``.`` or
``..`` segments (which the browser removes before sending).
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import re
import secrets
from urllib.parse import urlsplit, urlunsplit

from pycore.http.origin import AmbiguousURLError, Origin, split
from pycore.mcp.errors import OAuthError

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_UNSAFE_CHARS = re.compile(r"[\s\x00-\x1f\x7f\"'<>\\^`{|}$;]")
_PATH = re.compile(r"[^?#]*")
_IPV6_LOOPBACK = ipaddress.IPv6Address("::1")
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
    origin = _strict(url, what)
    if _is_loopback(origin):
        if not _is_local(server_url):
            raise OAuthError(f"the {what} URL {url!r:.120} points at this machine, but the MCP server does not; "
                             "refused")
        return url.partition("#")[0]
    if origin.scheme != "https":
        raise OAuthError(f"the {what} URL {url!r:.120} uses plain http; only https is allowed (http only on "
                         "loopback); refused")
    if origin.ip is not None and not _public(origin.ip):
        raise OAuthError(f"the {what} URL {url!r:.120} points at a private, link-local or reserved address; "
                         "refused")
    return url.partition("#")[0]


def _strict(url: str, what: str) -> Origin:
    try:
        return split(url)[0]
    except AmbiguousURLError as e:
        raise OAuthError(f"the {what} URL {url!r:.120} is refused: {e.reason}") from None


def _is_loopback(origin: Origin) -> bool:
    """Loopback in canonical form only: ``localhost``, ``*.localhost``, 127.0.0.0/8, ``[::1]`` (every other
    spelling is refused before this is asked; an IPv4-mapped ``[::ffff:127.0.0.1]`` is not "loopback" here,
    so it meets the private-address check and is refused). Spelled out, not ``is_loopback`` alone: from
    Python 3.13 (Pyodide's) that is also true of IPv4-mapped addresses."""
    ip = origin.ip
    if isinstance(ip, ipaddress.IPv6Address):
        return ip == _IPV6_LOOPBACK
    if ip is not None:
        return ip.is_loopback
    return origin.host == "localhost" or origin.host.endswith(".localhost")


def _is_local(server_url: str) -> bool:
    try:
        return _is_loopback(split(server_url)[0])
    except AmbiguousURLError:
        return False


def _public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = [ip.ipv4_mapped, ip.sixtofour, ip.teredo[1] if ip.teredo else None]
        if ip.is_reserved or any(inner is not None and not _public(inner) for inner in embedded):
            return False
    return ip.is_global and not ip.is_multicast


def canonical_resource(url: str) -> str:
    """The canonical MCP server URI (RFC 8707 / MCP "Canonical Server URI"): the origin as the browser writes
    it (lower-case scheme and host, no default port), the path without a trailing slash; no query, no
    fragment. A URL the browser may read otherwise is refused (:class:`OAuthError`)."""
    origin = _strict(url, "resource")
    return f"{origin}{_path(split(url)[1])}"


def resource_covers(resource: str, url: str) -> bool:
    """Whether a token issued for ``resource`` may be sent to ``url``: the same origin as the browser reads
    both, and a path inside the resource's (no ``.``/``..`` segments, which the browser would resolve)."""
    try:
        (r_origin, r_rest), (u_origin, u_rest) = split(resource), split(url)
    except AmbiguousURLError:
        return False
    r_path, u_path = _path(r_rest), _path(u_rest)
    if r_origin != u_origin or _dot_segments(r_path) or _dot_segments(u_path):
        return False
    return not r_path or u_path == r_path or u_path.startswith(r_path + "/")


def _path(rest: str) -> str:
    """The path of what :func:`~pycore.http.origin.split` leaves after the host, without a trailing slash."""
    match = _PATH.match(rest)
    return (match[0] if match else "").rstrip("/")


def _dot_segments(path: str) -> bool:
    return any(segment.lower().replace("%2e", ".") in (".", "..") for segment in path.split("/"))


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
    """The parameters of a ``Bearer`` or ``DPoP`` challenge (RFC 6750 §3, RFC 9449 §7.1): ``resource_metadata``,
    ``scope``, ``error`` … Other schemes' parameters are ignored; an absent or unparsable header gives ``{}``."""
    if not value:
        return {}
    found = re.search(r"(?:^|,)\s*(?:Bearer|DPoP)(?:\s+|$)", value, re.IGNORECASE)
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
