"""The WebDAV bridge (``--allow-webdav``): a sync folder whose server sends no CORS headers, reached through the relay.

The folder is a real WsgiDAV server *without* CORS (tests/e2e/journeys_webdav_server.py, as the sync journeys use);
the hostile one is scripted. As for ``--allow-remote`` (test_relay_remote.py), loopback is never a legal target, so
the relay app is built in-process with an address check admitting exactly the test server's address; the command
line cannot do that (``test_cli_*`` see it refused).
"""

from __future__ import annotations

import base64
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from conftest import ROOT, relay
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from test_relay_remote import AUTH, EDGE_IP, TOKEN, only, relay_app, serve

from server.remote import CheckedBackend, RemoteConfigError
from server.webdav import WebDavBridge, parse_folders

sys.path.append(str(ROOT / "tests" / "e2e"))
from journeys_webdav_server import PASSWORD, USER, WebDav, serve_webdav  # noqa: E402

BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
DAV = AUTH | {"Remote-Authorization": BASIC}
FILE = "c-" + "a" * 64
PROPFIND = b'<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>'


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[WebDav]:
    with serve_webdav(tmp_path / "dav", cors=None) as dav:  # no CORS: the page cannot reach it by itself
        yield dav


def bridged(url: str, address: str = "127.0.0.1"):
    """The relay in-process, forwarding /webdav/sync/ to ``url`` (and able to reach only ``address``)."""
    return relay_app(parse_folders([f"sync={url}"], address_ok=only(address)),
                     CheckedBackend(address_ok=only(address)), bridge=WebDavBridge)


def dav(method: str, url: str, headers: dict[str, str] | None = None, content: bytes | None = None) -> httpx2.Response:
    return httpx2.request(method, url, headers=DAV | (headers or {}), content=content)


def test_an_allowlisted_folder_gets_every_method_sync_needs_and_nothing_of_the_relays(folder: WebDav):
    """T-Y13: the folder's login crosses as Authorization; the relay's token never does."""
    with bridged(folder.url) as base:
        listed = httpx2.get(f"{base}/api/webdav", headers=AUTH).json()
        at = f"{base}/webdav/sync/{FILE}"
        new = {"If-None-Match": "*", "Content-Type": "application/octet-stream"}
        created = dav("PUT", at, new, b"sealed-1")
        again = dav("PUT", at, new, b"sealed-other")
        listing = dav("PROPFIND", f"{base}/webdav/sync/", {"Depth": "1", "Content-Type": "application/xml"}, PROPFIND)
        read = dav("GET", at)
        stale = '"not-this-version"'
        lost = dav("PUT", at, {"If-Match": stale, "Content-Type": "application/octet-stream"}, b"sealed-lost")
        updated = dav("PUT", at, {"If-Match": created.headers["etag"], "Content-Type": "application/octet-stream"},
                      b"sealed-second")
        made = dav("MKCOL", f"{base}/webdav/sync/sub")
        deleted = dav("DELETE", at)
        gone = dav("GET", at)
        no_login = httpx2.get(at, headers=AUTH)
    assert listed == {"folders": [{"kind": "webdav", "name": "sync", "url": "/webdav/sync/", "target": folder.url,
                                   "state": "ready"}]}
    assert created.status_code == 201 and created.headers["etag"]
    assert again.status_code == 412  # compare-and-swap reaches the server: nothing is overwritten unseen
    assert listing.status_code == 207 and listing.headers["content-type"] == "application/xml"
    assert FILE in listing.text and "getetag" in listing.text
    assert read.status_code == 200 and read.content == b"sealed-1" and read.headers["etag"] == created.headers["etag"]
    assert lost.status_code == 412
    assert updated.status_code in (200, 204) and updated.headers["etag"] != created.headers["etag"]
    assert made.status_code == 201 and (folder.root / "orizuru" / "sub").is_dir()
    assert deleted.status_code == 204 and gone.status_code == 404
    assert no_login.status_code == 401 and "www-authenticate" not in no_login.headers  # no login box in the page
    heard = "\n".join(folder.heard)
    assert TOKEN not in heard  # the relay's token stays here; the folder's own login is what it gets
    assert f"'HTTP_AUTHORIZATION': '{BASIC}'" in heard and "REMOTE_AUTHORIZATION" not in heard


def test_anything_else_is_refused_with_its_reason_before_the_folder_hears_of_it(folder: WebDav):
    """T-Y11: not an open proxy: one listed folder, the files directly in it, sync's methods."""
    with bridged(folder.url) as base:
        asked = {
            "unlisted": dav("GET", f"{base}/webdav/other/{FILE}"),
            "move": dav("MOVE", f"{base}/webdav/sync/{FILE}", {"Destination": f"{base}/webdav/sync/x"}),
            "post": dav("POST", f"{base}/webdav/sync/{FILE}", content=b"x"),
            "proppatch": dav("PROPPATCH", f"{base}/webdav/sync/", content=b"<x/>"),
            "depth": dav("PROPFIND", f"{base}/webdav/sync/", {"Depth": "infinity"}),
            "no-depth": dav("PROPFIND", f"{base}/webdav/sync/"),
            "dot-dot": dav("GET", f"{base}/webdav/sync/%2e%2e"),
            "deeper": dav("GET", f"{base}/webdav/sync/sub%2F{FILE}"),
            "hidden": dav("GET", f"{base}/webdav/sync/.htaccess"),
            "no-token": httpx2.get(f"{base}/webdav/sync/{FILE}", headers={"Remote-Authorization": BASIC}),
            "foreign": dav("PUT", f"{base}/webdav/sync/{FILE}", {"Origin": "http://evil.example"}, b"x"),
            "rebound": dav("GET", f"{base}/webdav/sync/{FILE}", {"Host": "evil.example"}),
        }
        preflight = httpx2.options(f"{base}/webdav/sync/{FILE}", headers={
            "Origin": base, "Access-Control-Request-Method": "PROPFIND",
            "Access-Control-Request-Headers": "remote-authorization, depth, if-match, if-none-match"})
    status = {name: r.status_code for name, r in asked.items()}
    assert status == {"unlisted": 403, "move": 405, "post": 405, "proppatch": 405, "depth": 400, "no-depth": 400,
                      "dot-dot": 403, "deeper": 403, "hidden": 403, "no-token": 401, "foreign": 403, "rebound": 421}
    reason = {name: r.json()["error"]["message"] for name, r in asked.items()}
    assert "no --allow-webdav URL has that name" in reason["unlisted"]
    assert "only PROPFIND, GET, PUT, DELETE and MKCOL" in reason["move"]
    assert "Depth must be 0 or 1" in reason["depth"]
    assert "a file directly in the folder" in reason["deeper"] and "a file directly in the folder" in reason["dot-dot"]
    assert preflight.status_code == 204
    for allowed in ("PROPFIND", "PUT", "MKCOL"):
        assert allowed in preflight.headers["access-control-allow-methods"]
    for allowed in ("Depth", "If-Match", "If-None-Match", "Remote-Authorization"):
        assert allowed in preflight.headers["access-control-allow-headers"]
    assert "ETag" in preflight.headers["access-control-expose-headers"]
    assert folder.heard == []  # none of them reached the folder


HOSTILE_HEADERS = {"Set-Cookie": "sid=leak; Path=/", "Access-Control-Allow-Origin": "*", "X-Internal": "secret",
                   "WWW-Authenticate": 'Basic realm="steal"', "Content-Security-Policy": "default-src *",
                   "Refresh": "0; url=http://evil.example/", "Link": "<http://evil.example/x.js>; rel=preload",
                   "ETag": '"v1"'}


def hostile_folder() -> Starlette:
    """A WebDAV server that answers with a page, a script and every header a page could be attacked with."""

    async def file(request: Request) -> Response:
        if request.method == "PUT":
            return RedirectResponse("http://127.0.0.3/elsewhere", status_code=307)
        if request.path_params["name"] == "broken":
            return Response("<h1>oops</h1><script>alert(1)</script>", 500, media_type="text/html")
        return Response("<script>fetch('/api/servers')</script>", media_type="text/html", headers=HOSTILE_HEADERS)

    async def listing(request: Request) -> Response:
        return Response("<html><script>alert(1)</script></html>", 207, media_type="text/html", headers=HOSTILE_HEADERS)

    return Starlette(routes=[Route("/dav/", listing, methods=["PROPFIND"]),
                             Route("/dav/{name}", file, methods=["GET", "PUT"])])


def test_a_hostile_folder_cannot_put_headers_or_a_page_under_the_relays_origin():
    """T-Y12: only bytes, XML listings and an ETag come back, sandboxed."""
    with serve(hostile_folder(), EDGE_IP) as port, bridged(f"http://{EDGE_IP}:{port}/dav/", EDGE_IP) as base:
        read = dav("GET", f"{base}/webdav/sync/{FILE}", {"Origin": base})
        listing = dav("PROPFIND", f"{base}/webdav/sync/", {"Depth": "1"})
        broken = dav("GET", f"{base}/webdav/sync/broken")
        moved = dav("PUT", f"{base}/webdav/sync/{FILE}", {"If-None-Match": "*"}, b"x")
    assert read.status_code == 200 and read.content == b"<script>fetch('/api/servers')</script>"
    assert read.headers["content-type"] == "application/octet-stream"  # bytes, never a page
    assert read.headers["etag"] == '"v1"' and read.headers["access-control-allow-origin"] == base
    for r in (read, listing, broken, moved):
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["content-security-policy"] == "sandbox"
        assert not {"set-cookie", "x-internal", "www-authenticate", "refresh", "link", "location"} & set(r.headers)
        assert r.headers.get("access-control-allow-origin") in (None, base)
    assert listing.status_code == 502 and "not XML" in listing.json()["error"]["message"]
    assert broken.status_code == 500 and "<script" not in broken.text and "HTTP 500" in broken.text
    assert moved.status_code == 502 and "redirects are not followed" in moved.json()["error"]["message"]


# ---- the command line ------------------------------------------------------------------------------
@pytest.mark.parametrize(("url", "says"), [
    ("http://127.0.0.1:9/dav/", "not a public address"), ("http://192.168.1.10/dav/", "not a public address"),
    ("https://dav.example/files/?user=me", "no ?query"), ("ftp://dav.example/files/", "expected an http(s) URL"),
])
def test_cli_refuses_a_folder_it_must_never_forward_to(dist: Path, url: str, says: str):
    """T-Y11: a loopback or private folder, a query, another scheme: the relay does not start."""
    run = subprocess.run([sys.executable, "-m", "server", "--dist", str(dist), "--port", "0", "--allow-webdav", url],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and says in run.stderr and "Orizuru is running" not in run.stdout


def test_parse_folders_names_them_and_ends_each_in_a_slash():
    folders = parse_folders(["https://Cloud.Example/remote.php/dav/files/me/orizuru", "home=https://nas.example:5006/s/"])
    assert {n: (t.url, t.route) for n, t in folders.items()} == {
        "cloud.example": ("https://cloud.example/remote.php/dav/files/me/orizuru/", "/webdav/cloud.example"),
        "home": ("https://nas.example:5006/s/", "/webdav/home"),
    }
    with pytest.raises(RemoteConfigError, match="--allow-webdav name 'a b'"):
        parse_folders(["a b=https://x.example/"])


def test_cli_relay_lists_its_folders_and_keeps_the_token_and_the_folders_login_out_of_its_log(dist: Path,
                                                                                           tmp_path: Path):
    """T-Y11, T-Y13: ``localhost`` passes the startup check (a name) and is refused on connect; neither secret is
    logged or put in the refusal."""
    with relay(dist, tmp_path, None, "--allow-webdav", "lh=http://localhost:9/dav/") as r:
        listed = httpx2.get(r.base + "/api/webdav", headers=r.auth).json()["folders"]
        answer = httpx2.get(f"{r.base}/webdav/lh/{FILE}", headers=r.auth | {"Remote-Authorization": BASIC})
        log = r.log
    assert listed == [{"kind": "webdav", "name": "lh", "url": "/webdav/lh/", "target": "http://localhost:9/dav/",
                       "state": "ready"}]
    assert answer.status_code == 403 and "which is not a public address" in answer.json()["error"]["message"]
    assert BASIC not in answer.text
    assert r.token not in log.read_text() and BASIC.split()[1] not in log.read_text()
