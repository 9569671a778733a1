"""A real WebDAV folder for the sync journeys: WsgiDAV (pinned in requirements.lock) serving a temporary
directory on loopback, behind a user name and password, with the CORS headers a browser client needs (the
page's origin, Authorization and the conditional headers allowed, ETag exposed), as a user sets up on a
Nextcloud or any WebDAV server.

    with serve_webdav(root) as dav:
        dav.url            # http://127.0.0.1:PORT/orizuru/   (the folder sync is given)
        dav.files()        # {name: bytes} of the folder, as the server keeps them
        dav.opened(passphrase)   # {name: plaintext} of every record, opened as the page seals them (crypto.js)
        dav.stop(); dav.start()   # the server killed and brought back on the same port, its files kept
        dav.heard          # every request line and header the server received, as text (what a server could log)

A shared link's file (`shared-<32 hex>`) is also served without the password, as a user makes one file public
(a Nextcloud share link): read-only, any origin.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import re
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from wsgidav.wsgidav_app import WsgiDAVApp

USER, PASSWORD = "me", "app-password-1"
# What a user sets on their server for sync (web/sync/webdav.js); a test may give less, to see the doctor say so.
CORS: dict[str, Any] = {"allow_origin": "*", "allow_methods": ["GET", "PUT", "PROPFIND", "DELETE", "OPTIONS"],
                        "allow_headers": ["Authorization", "Depth", "If-Match", "If-None-Match", "Content-Type"],
                        "expose_headers": ["ETag"]}


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class _Threading(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


def _known_length(app: Any) -> Any:
    """WsgiDAV reads a PUT's body until the end of its input, as servers it runs on (cheroot) bound the input to
    Content-Length; wsgiref hands over the socket, so the body is read here, exactly as long as announced."""

    def bounded(environ: dict[str, Any], start_response: Any) -> Any:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        environ["wsgi.input"] = io.BytesIO(environ["wsgi.input"].read(length) if length > 0 else b"")
        return app(environ, start_response)

    return bounded


_SHARED = re.compile(r"^/orizuru/shared-[0-9a-f]{32}$")


def _public_shares(app: Any, root: Path, heard: list[str]) -> Any:
    """Every request noted (line and headers); a GET of a shared link's file answered without the password."""

    def serve(environ: dict[str, Any], start_response: Any) -> Any:
        headers = {k: v for k, v in environ.items() if k.startswith("HTTP_")}
        path = environ.get("PATH_INFO", "")
        heard.append(f"{environ['REQUEST_METHOD']} {path}?{environ.get('QUERY_STRING', '')} {headers}")
        if environ["REQUEST_METHOD"] == "GET" and _SHARED.match(path):
            file = root / path.lstrip("/")
            if not file.is_file():
                start_response("404 Not Found", [("Access-Control-Allow-Origin", "*")])
                return [b""]
            start_response("200 OK", [("Content-Type", "application/octet-stream"),
                                      ("Access-Control-Allow-Origin", "*")])
            return [file.read_bytes()]
        return app(environ, start_response)

    return serve


class WebDav:
    def __init__(self, root: Path, cors: dict[str, Any] | None = CORS) -> None:
        self.root = root
        self.cors = cors
        (root / "orizuru").mkdir(parents=True, exist_ok=True)
        self.port = 0
        self.heard: list[str] = []
        self.server: WSGIServer | None = None
        self.start()

    def app(self) -> WsgiDAVApp:
        return WsgiDAVApp({
            "provider_mapping": {"/": str(self.root)},
            "simple_dc": {"user_mapping": {"*": {USER: {"password": PASSWORD}}}},
            "http_authenticator": {"accept_basic": True, "accept_digest": False, "default_to_digest": False},
            **({"cors": self.cors} if self.cors else {}),
            "verbose": 0, "logging": {"enable": False}, "property_manager": True, "lock_storage": True,
        })

    def start(self) -> None:
        app = _public_shares(_known_length(self.app()), self.root, self.heard)
        self.server = make_server("127.0.0.1", self.port, app, server_class=_Threading, handler_class=_Quiet)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/orizuru/"

    def files(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in (self.root / "orizuru").iterdir() if p.is_file()}

    def opened(self, passphrase: str) -> dict[str, str]:
        """Every record of the folder decrypted with the passphrase, the way web/sync/crypto.js seals it: the key
        is PBKDF2-SHA-256 over the header's salt (the first 32 of 64 bytes), each file a 12-byte IV and AES-GCM
        with its own name as additional data. A test greps these for what must never be synced."""
        files = self.files()
        header = json.loads(files.pop("header.json"))
        bits = hashlib.pbkdf2_hmac("sha256", passphrase.encode(), base64.b64decode(header["salt"]),
                                   int(header["kdf"]["iterations"]), 64)
        aes = AESGCM(bits[:32])
        return {name: aes.decrypt(data[:12], data[12:], name.encode()).decode() for name, data in files.items()}


@contextlib.contextmanager
def serve_webdav(root: Path, cors: dict[str, Any] | None = CORS) -> Iterator[WebDav]:
    dav = WebDav(root, cors)
    try:
        yield dav
    finally:
        dav.stop()
