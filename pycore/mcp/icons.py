"""Icons servers attach to themselves, tools, resources and prompts (MCP 2025-11-25 ``icons``), made safe to show.

An icon is untrusted input that the page would *load*: a remote ``src`` is a request to a host the user
did not choose (a tracking pixel, a probe of the intranet), an SVG is executable content, and a huge
image is a denial of service. SECURITY.md C14/T-C14. What we keep:

- ``data:`` URLs of raster images only (PNG, JPEG, GIF, WebP) whose bytes really are that format
  (magic numbers, not the declared type) and at most :data:`MAX_ICON_BYTES` decoded;
- nothing else: no ``javascript:``, no ``http(s):`` (not even the server's own origin: the page's CSP
  allows only ``data:``/``blob:`` images, and fetching would reveal the user to the server again), no SVG.

The core never fetches an icon; this only decides which ``data:`` URLs the page may render.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from typing import Any

MAX_ICON_BYTES = 64 * 1024
_MAGIC = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}


def sniff(data: bytes) -> str | None:
    """The raster type ``data`` really is, by its first bytes; ``None`` for anything else (SVG included)."""
    for mime, prefixes in _MAGIC.items():
        if any(data.startswith(p) for p in prefixes) and (mime != "image/webp" or data[8:12] == b"WEBP"):
            return mime
    return None


def safe_icon_src(src: str) -> str | None:
    """``src`` rebuilt as a ``data:`` URL of the type its bytes have, or ``None`` if it must not be shown."""
    if not isinstance(src, str) or not src[:5].lower() == "data:":
        return None
    header, comma, payload = src[5:].partition(",")
    if not comma or ";base64" not in header.lower():
        return None  # non-base64 data URLs are how SVG markup arrives
    if len(payload) > (MAX_ICON_BYTES * 4) // 3 + 4:
        return None
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return None
    mime = sniff(data)
    if mime is None or len(data) > MAX_ICON_BYTES:
        return None
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def safe_icons(icons: Iterable[Any] | None) -> list[dict[str, Any]]:
    """The icons the page may show, as ``{"src", "mimeType", "sizes"?, "theme"?}``; accepts ``mcp_types.Icon``
    models or their JSON form."""
    kept: list[dict[str, Any]] = []
    for icon in icons or ():
        raw = icon.model_dump(by_alias=True, exclude_none=True) if hasattr(icon, "model_dump") else dict(icon)
        src = safe_icon_src(raw.get("src", ""))
        if src is None:
            continue
        entry: dict[str, Any] = {"src": src, "mimeType": src[5:].split(";", 1)[0]}
        for key in ("sizes", "theme"):
            if raw.get(key) is not None:
                entry[key] = raw[key]
        kept.append(entry)
    return kept


__all__ = ["MAX_ICON_BYTES", "safe_icon_src", "safe_icons", "sniff"]
