"""The journeys' returning visitor: each browser context a journey opens gets the core's memory snapshot that an
earlier context of the same site made (web/snapshot.js), as the site's second visit finds it in Cache Storage.

A fresh context has an empty Cache Storage, so without this every journey paid a cold Pyodide boot (about 8.5 s of
CPU, issue 36 item 4); with it, the first journey of each site (each test module serves its own) boots fresh and
keeps the snapshot, and the others restore it. First visits stay tested: `open_app(..., first_visit=True)` and
every test that opens its own context without `open_app` (test_boot.py, test_snapshot_boot.py, …), and every
journey with `ORIZURU_FIRST_VISITS=1`.

The snapshot crosses from one context to the next through a loopback shelf (the page's policy lets it reach
`http://127.0.0.1:*`): the first context posts its bytes there, the next ones fetch them into their own cache,
under their own origin, before the app's page is opened. One site's snapshot is kept at a time.
"""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from playwright.sync_api import BrowserContext, Page

CACHE = "pycore-snapshot"  # web/snapshot.js
HANDLES = "x-orizuru-dlopen-handles"
KEEP_TIMEOUT_S = 60
# Every journey a first visit, as before the shelf (to test that path everywhere, or to measure what it saves).
FIRST_VISITS = os.environ.get("ORIZURU_FIRST_VISITS") == "1"


def kept(page: Page) -> list[str]:
    """The URLs of the snapshots in the page's Cache Storage (its origin's)."""
    return page.evaluate(f"caches.open({CACHE!r}).then((c) => c.keys()).then((k) => k.map((r) => r.url))")


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class _Shelf(ThreadingHTTPServer):
    daemon_threads = True
    body = b""


class _Handler(BaseHTTPRequestHandler):
    server: _Shelf

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        self.server.body = self.rfile.read(int(self.headers["Content-Length"]))
        self._answer(b"")

    def do_GET(self) -> None:  # noqa: N802
        self._answer(self.server.body)

    def _answer(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class SnapshotShelf:
    def __init__(self) -> None:
        self.server: _Shelf | None = None
        self.origin = ""  # whose snapshot is on the shelf
        self.key = ""
        self.handles = ""

    @property
    def url(self) -> str:
        if self.server is None:
            self.server = _Shelf(("127.0.0.1", 0), _Handler)
            threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/snapshot"

    def give(self, context: BrowserContext, site: str) -> None:
        """Put the site's snapshot, if the shelf has it, into the context's Cache Storage."""
        if self.origin != origin_of(site) or FIRST_VISITS:
            return
        page = context.new_page()
        try:
            page.goto(f"{self.origin}/favicon.svg")
            page.evaluate(
                """async ([shelf, cache, key, header, handles]) => {
                     const bytes = await (await fetch(shelf)).arrayBuffer();
                     await (await caches.open(cache)).put(key, new Response(bytes, { headers: { [header]: handles } }));
                   }""", [self.url, CACHE, self.key, HANDLES, self.handles])
        finally:
            page.close()

    def keep(self, page: Page, site: str) -> None:
        """Once the core is ready in a page of a site the shelf has nothing of: keep its snapshot."""
        if self.origin == origin_of(site):
            return
        deadline = time.monotonic() + KEEP_TIMEOUT_S
        while not (keys := kept(page)):
            if time.monotonic() > deadline:
                return  # none was made (e.g. a test that holds the wheels): the next journey boots fresh too
            time.sleep(0.2)
        handles = page.evaluate(
            """async ([shelf, cache, key, header]) => {
                 const response = await (await caches.open(cache)).match(key);
                 await fetch(shelf, { method: "POST", body: await response.arrayBuffer() });
                 return response.headers.get(header);
               }""", [self.url, CACHE, keys[0], HANDLES])
        self.origin, self.key, self.handles = origin_of(site), keys[0], json.dumps(json.loads(handles))


SHELF = SnapshotShelf()
