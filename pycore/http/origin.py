"""Origins read the way the browser reads them, or refused: the one check of where a header, a token or a
message may go (SECURITY.md T-U2, T-U3).

The browser's ``fetch`` goes wherever the WHATWG URL parser says a URL points, and ``urllib.parse`` reads
some URLs differently: ``https://evil.example\\@mcp.example.com/`` is mcp.example.com to urllib and
evil.example to the browser; ``127.0.0.1%2e``, ``0x7f.1`` and ``2130706433`` are loopback to the browser
and mere names to urllib. An origin check made with urllib can therefore pass a URL that the browser sends
somewhere else. Rather than reimplement all of WHATWG (and in Pyodide only :mod:`pycore.http.fetch` may
reach the browser's own ``URL``), :func:`origin_of` reads a URL strictly and refuses, with
:class:`AmbiguousURLError` saying why, every form on which the two readings could differ:

- anything but ``http://`` or ``https://`` followed by a host (``http:example.com``, ``http:///example.com``:
  the browser adds or skips the slashes);
- a backslash (the browser reads it as ``/``), whitespace or a control character anywhere (the browser
  drops tabs and newlines and trims the ends);
- userinfo (``user:pw@``: which ``@`` starts the host is where parsers disagree);
- a ``%`` in the host (the browser decodes it), a host that is not ASCII (the browser maps it through
  IDNA/UTS 46: write it in its ``xn--`` form), an empty label or a trailing dot (``localhost.`` is another
  origin than ``localhost`` to the browser, the same host to DNS);
- a host whose last label is a number but that is not a plain dotted quad (``0x7f.1``, ``2130706433``,
  ``0177.0.0.1``, ``127.1``: the browser reads each as an IPv4 address);
- an IPv6 address the ``ipaddress`` module does not take, or with a zone;
- a port that is not a number from 0 to 65535.

What is left is read as the browser reads it: scheme and host lower-cased, IPv6 in the browser's
compressed form, the default port dropped (or the browser refuses it outright, as it does an ``xn--``
label that is not valid Punycode: then nothing is sent anywhere). ``tests/pycore/http/test_origin.py``
holds the table of tricky URLs and checks every accepted URL against the browser's own parser.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import urljoin

DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_START = re.compile(r"(https?)://([^/?#]*)", re.IGNORECASE)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_UNSAFE = re.compile(r"[\x00-\x20\x7f\\]")
_LABEL = re.compile(r"[a-z0-9_\-]+")
_NUMBER = re.compile(r"0x[0-9a-f]*|[0-9]+")  # WHATWG "ends in a number": the host is then read as IPv4
_OCTET = re.compile(r"0|[1-9][0-9]{0,2}")


class AmbiguousURLError(ValueError):
    """A URL the browser may read differently from us (or not at all): nothing is sent to it."""

    def __init__(self, url: object, reason: str) -> None:
        super().__init__(f"{url!r:.160} is refused: {reason}")
        self.url = url
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Origin:
    scheme: str  # "http" or "https"
    host: str  # lower-case ASCII; an IPv6 address in brackets, compressed as the browser writes it
    port: int  # the port requests go to: 80 or 443 when the URL names none

    def __str__(self) -> str:
        """As the browser serializes it (``location.origin``): no default port."""
        port = "" if DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}"
        return f"{self.scheme}://{self.host}{port}"

    @property
    def ip(self) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
        """The address when the host is one (a domain name gives ``None``)."""
        try:
            return ipaddress.ip_address(self.host.strip("[]"))
        except ValueError:
            return None


def origin_of(url: str) -> Origin:
    """The origin ``url`` points at, as the browser reads it; :class:`AmbiguousURLError` when it might not."""
    return split(url)[0]


def split(url: str) -> tuple[Origin, str]:
    """The origin of ``url`` (see :func:`origin_of`) and what follows the host and port: path, query, fragment."""
    if not isinstance(url, str) or not url:
        raise AmbiguousURLError(url, "it is empty")
    _check_characters(url)
    start = _START.match(url)
    if start is None:
        raise AmbiguousURLError(url, "it is not an http:// or https:// URL")
    scheme, authority = start[1].lower(), start[2]
    if not authority:
        raise AmbiguousURLError(url, "it names no host")
    if "@" in authority:
        raise AmbiguousURLError(url, "it carries userinfo (user@ or user:password@ before the host): which '@' "
                                "starts the host is where URL parsers disagree")
    if authority.startswith("["):
        host, port = _ipv6(url, authority)
    else:
        name, colon, port = authority.partition(":")
        host, port = _host(url, name), port if colon else ""
    if not port:
        return Origin(scheme, host, DEFAULT_PORTS[scheme]), url[start.end():]
    if not (port.isascii() and port.isdigit()) or int(port) > 65535:
        raise AmbiguousURLError(url, "its port is not a number from 0 to 65535")
    return Origin(scheme, host, int(port)), url[start.end():]


def same_origin(a: str, b: str) -> bool:
    """Whether the browser sends ``a`` and ``b`` to the same origin; False when either is ambiguous."""
    try:
        return origin_of(a) == origin_of(b)
    except AmbiguousURLError:
        return False


def resolve(base: str, reference: str) -> str:
    """``reference`` (as a server may name a URL: absolute, ``//host/…``, ``/path``, ``path``, ``?query``)
    resolved against ``base`` as the browser resolves it; :class:`AmbiguousURLError` when the browser might
    resolve it elsewhere (``/\\evil.example``, ``///evil.example``, ``http:evil.example`` …). The result may
    have another origin than ``base``: comparing them is the caller's business."""
    base_origin = origin_of(base)
    if not isinstance(reference, str) or not reference:
        raise AmbiguousURLError(reference, "it is empty")
    _check_characters(reference)
    absolute = reference.startswith("//") or _SCHEME.match(reference) is not None
    if absolute:  # must read as a whole URL: scheme (or the base's), "//", a host
        origin_of(reference if not reference.startswith("//") else f"{base_origin.scheme}:{reference}")
    resolved = urljoin(base, reference)
    if origin_of(resolved) != base_origin and not absolute:
        raise AmbiguousURLError(reference, "it does not resolve on the base URL's origin")
    return resolved


def _check_characters(url: str) -> None:
    bad = _UNSAFE.search(url)
    if bad is None:
        return
    char = bad.group()
    if char == "\\":
        raise AmbiguousURLError(url, "it contains a backslash, which the browser reads as '/' and other parsers "
                                "do not")
    if char in " \t\n\r\f":
        raise AmbiguousURLError(url, "it contains whitespace, which the browser drops or trims and other parsers "
                                "keep")
    raise AmbiguousURLError(url, f"it contains the control character {char!r}")


def _host(url: str, host: str) -> str:
    if not host:
        raise AmbiguousURLError(url, "it names no host")
    if "%" in host:
        raise AmbiguousURLError(url, "its host is percent-encoded, which the browser decodes first")
    if not host.isascii():
        raise AmbiguousURLError(url, "its host has non-ASCII characters, which the browser maps through IDNA: "
                                "write it in its xn-- form")
    host = host.lower()
    labels = host.split(".")
    if len(labels) > 1 and not labels[-1]:
        raise AmbiguousURLError(url, "its host ends with a trailing dot: another origin to the browser, the same "
                                "host to DNS")
    if "" in labels:
        raise AmbiguousURLError(url, "its host has an empty label")
    if not all(_LABEL.fullmatch(label) for label in labels):
        raise AmbiguousURLError(url, "its host has a character a host name may not have")
    if _NUMBER.fullmatch(labels[-1]) and not (
        len(labels) == 4 and all(_OCTET.fullmatch(label) and int(label) <= 255 for label in labels)
    ):
        raise AmbiguousURLError(url, "its host is an IPv4 address written otherwise than a.b.c.d in decimal (the "
                                "browser reads 0x7f.1, 2130706433, 0177.0.0.1 or 127.1 as addresses)")
    return host


def _ipv6(url: str, authority: str) -> tuple[str, str]:
    """The bracketed host, as the browser writes it, and the port text after it."""
    end = authority.find("]")
    literal, rest = authority[1:end], authority[end + 1:]
    if end < 0 or (rest and not rest.startswith(":")):
        raise AmbiguousURLError(url, "its host is not an IPv6 address in brackets")
    if "%" in literal:
        raise AmbiguousURLError(url, "its IPv6 host has a zone or is percent-encoded")
    try:
        address = ipaddress.IPv6Address(literal)
    except ValueError:
        raise AmbiguousURLError(url, "its host is not a valid IPv6 address") from None
    return f"[{_compressed(address)}]", rest[1:]


def _compressed(address: ipaddress.IPv6Address) -> str:
    """WHATWG's IPv6 serializer: hex pieces, the first longest run of two or more zero pieces as ``::``, never
    the dotted IPv4 tail that ``str()`` gives an IPv4-mapped address in newer Pythons."""
    pieces = [int.from_bytes(address.packed[i:i + 2], "big") for i in range(0, 16, 2)]
    best, best_length, i = -1, 1, 0
    while i < 8:
        j = i
        while j < 8 and pieces[j] == 0:
            j += 1
        if j - i > best_length:
            best, best_length = i, j - i
        i = max(j, i + 1)
    if best < 0:
        return ":".join(f"{p:x}" for p in pieces)
    head, tail = pieces[:best], pieces[best + best_length:]
    return ":".join(f"{p:x}" for p in head) + "::" + ":".join(f"{p:x}" for p in tail)


__all__ = ["AmbiguousURLError", "DEFAULT_PORTS", "Origin", "origin_of", "resolve", "same_origin", "split"]
