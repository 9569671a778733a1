"""The WebDAV bridge: ``/webdav/{name}/`` forwards to one sync folder named by ``--allow-webdav``.

A WebDAV server that sends no CORS headers cannot be a sync target for the page (web/sync/webdav.js); the relay
can reach it, the way it reaches a remote MCP server without CORS (server/remote.py, whose rules all hold here:
only listed URLs, only public addresses checked at connect, no redirects followed, the same front door, bounded
and streamed). What differs is what a sync folder needs:

- **A folder, one level deep.** ``--allow-webdav [NAME=]URL`` names a folder (its URL ends in ``/``; no query).
  A request chooses the name and at most one file name directly in it (``/webdav/NAME/FILE``: letters, digits,
  ``_ . -``, not starting with a dot), never a sub-path, a ``..``, a host or a query.
- **Only what sync does.** PROPFIND (``Depth`` 0 or 1: never a whole tree), GET, PUT, DELETE and MKCOL; anything
  else (MOVE, COPY, PROPPATCH, LOCK, POST...) is refused (405) with the list. The request headers that cross are
  ``Depth``, ``If-Match``, ``If-None-Match`` and ``Content-Type``; the folder's login travels in
  ``Remote-Authorization`` and is sent on as ``Authorization`` (the relay's own token never leaves).
- **Only bytes and listings come back.** A GET's body crosses as ``application/octet-stream`` and a PROPFIND's
  207 as ``application/xml`` (anything else: 502), whatever type the server claimed; of the server's headers only
  a well-formed ``ETag`` crosses (sync's compare-and-swap needs it), under ``nosniff`` and ``CSP: sandbox``. Any
  other answer keeps its status with a JSON reason in place of its body; never ``WWW-Authenticate`` (the page
  would pop a login box for the server), ``Set-Cookie``, ``Location`` or the server's own CORS headers.
- **Sealed files are big.** Bodies up to 64 MiB each way (an attachment is sealed whole).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote

import httpcore
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import Scope

from server.remote import (
    SANDBOX_HEADERS,
    AddressCheck,
    RemoteBridge,
    RemoteConfigError,
    RemoteLimits,
    RemoteTarget,
    _header,
    _refuse,
    _request_headers,
    is_public,
    parse_targets,
)

FLAG = "--allow-webdav"
PREFIX = "/webdav"
METHODS = ("PROPFIND", "GET", "PUT", "DELETE", "MKCOL")
WITH_BODY = ("PROPFIND", "PUT")
FILE_PATTERN = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$")
# What sync sends besides its login (web/sync/webdav.js); Depth is checked, the others pass as they are.
FORWARD_REQUEST_HEADERS = ("depth", "if-match", "if-none-match", "content-type")
ETAG = re.compile(r"^[\x21-\x7e]{1,200}$")
XML_TYPES = ("application/xml", "text/xml")
MAX_BYTES = 64 * 1024 * 1024


def parse_folders(values: Iterable[str], address_ok: AddressCheck = is_public) -> dict[str, RemoteTarget]:
    """``--allow-webdav [NAME=]URL`` values, read as ``--allow-remote``'s (NAME defaults to the host): folders."""
    folders = parse_targets(values, address_ok, FLAG, PREFIX)
    for folder in folders.values():
        if "?" in folder.url:
            raise RemoteConfigError(f"{FLAG} {folder.url!r}: a folder's URL has no ?query")
    return {name: RemoteTarget(name, f.url if f.url.endswith("/") else f"{f.url}/", PREFIX)
            for name, f in folders.items()}


def webdav_limits(max_bytes: int = MAX_BYTES) -> RemoteLimits:
    return RemoteLimits(max_body_bytes=max_bytes, max_response_bytes=max_bytes, read_timeout=120.0)


class WebDavBridge(RemoteBridge):
    """Forwards ``/webdav/{name}/`` and ``/webdav/{name}/{file}`` to their allowlisted folder (see the module)."""

    kind = "webdav"
    flag = FLAG

    def __init__(self, targets: dict[str, RemoteTarget], limits: RemoteLimits | None = None,
                 backend: httpcore.AsyncNetworkBackend | None = None) -> None:
        super().__init__(targets, limits or webdav_limits(), backend)

    def describe(self) -> list[dict[str, object]]:
        return [entry | {"url": f"{entry['url']}/"} for entry in super().describe()]

    def _refusal(self, scope: Scope) -> Response | None:
        method = scope["method"]
        if method not in METHODS:
            return _refuse(405, f"Method Not Allowed: the relay passes only PROPFIND, GET, PUT, DELETE and MKCOL "
                                f"to a WebDAV folder, not {method[:20]}")
        name = scope["path_params"].get("file", "")
        if name and not FILE_PATTERN.fullmatch(name):
            return refuse_path()
        if method == "PROPFIND" and Headers(scope=scope).get("depth") not in ("0", "1"):
            return _refuse(400, "Bad Request: Depth must be 0 or 1 (the relay never lists a whole tree)")
        return None

    def _outgoing(self, target: RemoteTarget, scope: Scope, body: bytes) -> tuple[str, list[tuple[bytes, bytes]],
                                                                                   bytes | None]:
        carries = scope["method"] in WITH_BODY
        outgoing = _request_headers(Headers(scope=scope), len(body) if carries else None, FORWARD_REQUEST_HEADERS)
        return target.url + quote(scope["path_params"].get("file", "")), outgoing, body if carries else None

    def _head(self, target: RemoteTarget, scope: Scope,
              response: httpcore.Response) -> Response | list[tuple[bytes, bytes]]:
        etag = _header(response.headers, b"etag")
        kept = [(b"etag", etag.encode("latin-1"))] if etag is not None and ETAG.fullmatch(etag) else []
        method, status = scope["method"], response.status
        if method == "GET" and 200 <= status < 300:
            length = _header(response.headers, b"content-length")
            sized = [(b"content-length", length.encode())] if length is not None and length.isdigit() else []
            return [(b"content-type", b"application/octet-stream"), *sized, *kept, *SANDBOX_HEADERS]
        if method == "PROPFIND" and status == 207:
            media = (_header(response.headers, b"content-type") or "").split(";")[0].strip().lower()
            if media not in XML_TYPES:
                return _refuse(502, f"Bad Gateway: {target.url} answered PROPFIND with {media[:100] or 'no type'}, "
                                    "not XML")
            return [(b"content-type", b"application/xml"), *kept, *SANDBOX_HEADERS]
        if status < 400:  # a PUT's 201/204, a DELETE's 204, a MKCOL's 201: their bodies are never needed
            answer = Response(status_code=status)
            answer.raw_headers += [*kept, *SANDBOX_HEADERS]
            return answer
        return _refuse(status, f"HTTP {status} from the WebDAV folder {target.url}")


def refuse_path() -> Response:
    return _refuse(403, "Forbidden: the relay reaches only the folder itself or a file directly in the folder "
                        "(no sub-folder, no '..', no name starting with a dot)")
