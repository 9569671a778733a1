"""A WebDAV folder whose server sends no CORS headers, synced through the relay (#34, ``--allow-webdav``).

The folder is a real WsgiDAV server started without CORS. The doctor says so; on a page opened from a relay that
does not forward to the folder, it shows the line that makes it do so; on one that does, "Sync through the relay"
turns sync on through it, and a second browser gets the conversation the same way.

The relay is the real app (server/app.py) serving the built site, built in this process: the command line forwards
only to public addresses (server/remote.py), and this folder is on loopback, so the address check given here admits
exactly 127.0.0.1 (as tests/server/test_relay_webdav.py does).
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from conftest import DIST
from journeys import REPLY_TIMEOUT_MS, configure, open_app, open_settings
from journeys_webdav_server import serve_webdav
from playwright.sync_api import Browser, Page, expect
from sync_steps import status, turn_on_sync
from test_journeys_sync import FIRST, KEY, MARKER, ask, open_conversation
from vendor_replay import VendorReplay

from server.app import create_app
from server.remote import CheckedBackend
from server.security import Policy
from server.sessions import Relay
from server.webdav import WebDavBridge, parse_folders

pytestmark = pytest.mark.e2e

LOOPBACK = ipaddress.ip_address("127.0.0.1")


@contextmanager
def relay_forwarding(*folders: str) -> Iterator[str]:
    """The relay serving dist/ and forwarding ``--allow-webdav`` ``folders``; yields the URL it would print."""
    def only_loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        return address == LOOPBACK

    webdav = WebDavBridge(parse_folders(folders, address_ok=only_loopback),
                          backend=CheckedBackend(address_ok=only_loopback))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()  # as `python -m server` does: the page's first request waits in the queue until uvicorn runs
    port, token = sock.getsockname()[1], secrets.token_urlsafe(32)
    app = create_app(DIST, Relay({}), Policy.for_port(port, token), webdav=webdav)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/#token={token}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()


def told_no_cors(page: Page) -> None:
    expect(status(page)).to_contain_text("Could not reach", timeout=REPLY_TIMEOUT_MS)
    expect(page.locator("#sync-doctor")).to_contain_text("without Access-Control-Allow-Origin for this site",
                                                         timeout=REPLY_TIMEOUT_MS)


def test_a_folder_without_cors_syncs_through_the_relay_and_a_second_browser_gets_the_conversation(
        browser: Browser, vendor: VendorReplay, tmp_path: Path):
    with serve_webdav(tmp_path / "dav", cors=None) as dav:
        with relay_forwarding() as unlisted:  # a relay that does not forward to this folder: the line to add
            page = open_app(browser, unlisted)
            turn_on_sync(page, dav)
            told_no_cors(page)
            doctor = page.locator("#sync-doctor")
            expect(doctor.locator("code")).to_have_text(f"python3 build.py serve --allow-webdav sync={dav.url}")
            expect(doctor.get_by_role("button", name="Sync through the relay")).to_have_count(0)
            page.context.close()

        with relay_forwarding(f"sync={dav.url}") as url:
            a = open_app(browser, url)
            configure(a, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
            ask(a, vendor, f"{MARKER} through the relay", FIRST)
            turn_on_sync(a, dav)
            told_no_cors(a)
            a.get_by_role("button", name="Sync through the relay").click()
            expect(status(a)).to_contain_text("0 received, 3 sent", timeout=REPLY_TIMEOUT_MS)
            expect(a.locator("#sync-settings")).to_contain_text(f"Syncing with {dav.url} through the relay")

            b = open_app(browser, url)  # the second device: the same folder, the same relay
            turn_on_sync(b, dav)
            told_no_cors(b)
            b.get_by_role("button", name="Sync through the relay").click()
            expect(status(b)).to_contain_text("3 received", timeout=REPLY_TIMEOUT_MS)
            b.get_by_role("button", name="Close").click()
            open_conversation(b, f"{MARKER} through the relay")
            expect(b.locator(".transcript li.msg.user .content")).to_have_text(f"{MARKER} through the relay")
            token = url.split("#token=")[1]

        open_settings(b).get_by_role("button", name="Sync now").click()  # the relay has stopped: said, not silent
        expect(status(b)).to_contain_text(f"The relay that carries sync to 127.0.0.1:{dav.port} does not answer",
                                          timeout=REPLY_TIMEOUT_MS)
        heard = "\n".join(dav.heard)
        assert token not in heard  # T-Y13: the relay's token never reached the folder
        assert not any(MARKER.encode() in data for data in dav.files().values())
