"""A tiny HTTP/1.1 server on 127.0.0.1 that replays recorded vendor responses (test helper, CPython).

Routes (the last path part is a fixture file, e.g. ``anthropic/stream-text.sse``):

- ``/replay/<file>``: status and content type from the manifest, body sent in chunked encoding, 64 bytes a chunk;
- ``/flaky/<n>/<file>``: the first ``n`` requests get a 503 (``retry-after-ms: 1``), then the recording;
- ``/cut/<bytes>/<file>``: sends that many body bytes, then drops the connection (no final chunk);
- ``/slow/<file>``: 30 ms between chunks, so a client can Stop in the middle;
- ``/stall/<bytes>/<file>``: sends that many body bytes, then nothing more for up to 3 s (a stalled stream);
- ``/redirect/<port>/<rest>``: a 307 to ``/<rest>`` on ``127.0.0.1:<port>`` (another server).
"""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections import Counter
from typing import Any

from vendor_fixtures import BY_FILE


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: LoopbackServer

    def log_message(self, *args: Any) -> None:  # quiet
        return None

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        length = int(self.headers.get("content-length") or 0)
        self.server.bodies.append(self.rfile.read(length))
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802
        route, *rest = self.path.strip("/").split("/", 2)
        self.server.hits[self.path] += 1
        if route == "redirect":
            self.send_response(307)
            self.send_header("location", f"http://127.0.0.1:{rest[0]}/{rest[1] if len(rest) > 1 else ''}")
            self.send_header("content-length", "0")
            self.end_headers()
            return None
        if route == "flaky" and self.server.hits[self.path] <= int(rest[0]):
            return self._send(
                503, "application/json", b'{"error":{"type":"overloaded","message":"busy"}}', {"retry-after-ms": "1"}
            )
        fixture = BY_FILE["/".join(rest[1:] if route in ("flaky", "cut", "stall") else rest)]
        cut = int(rest[0]) if route in ("cut", "stall") else None
        self._send(
            fixture.status, fixture.content_type, fixture.body(), {}, cut=cut, pause=0.03 if route == "slow" else 0,
            stall=route == "stall",
        )

    def _send(
        self,
        status: int,
        ctype: str,
        body: bytes,
        headers: dict[str, str],
        *,
        cut: int | None = None,
        pause: float = 0,
        stall: bool = False,
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("transfer-encoding", "chunked")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        limit = len(body) if cut is None else cut
        try:
            for start in range(0, limit, 64):
                piece = body[start : min(start + 64, limit)]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
                if pause:
                    time.sleep(pause)
            if stall:
                self.server.release.wait(3.0)  # until the test is done with it (bounded)
                self.close_connection = True
                return
            if cut is not None:
                self.connection.shutdown(socket.SHUT_RDWR)  # dropped mid-stream
                self.close_connection = True
                return
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.server.aborted.set()  # the client went away (Stop)
            self.close_connection = True


class LoopbackServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.hits: Counter[str] = Counter()
        self.bodies: list[bytes] = []
        self.aborted = threading.Event()
        self.release = threading.Event()  # ends /stall/ responses

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> LoopbackServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
