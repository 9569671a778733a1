"""Sync through a real WebDAV folder (WsgiDAV, journeys_webdav_server.py), end-to-end encrypted (#34).

Two browsers turn sync on with the same passphrase; the second gets the first's conversation. The folder goes
away (killed mid-use), each browser writes to the same conversation, and when the folder is back both keep
what they wrote, as two branches of the same question. The folder's files hold no plaintext; a wrong
passphrase is refused with a sentence, and writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from journeys import REPLY_TIMEOUT_MS, configure, last_reply, open_app, open_settings, send, wait_idle
from journeys_webdav_server import CORS, WebDav, serve_webdav
from playwright.sync_api import Browser, Page, expect
from sync_steps import PASSPHRASE, dav, status, sync_now, turn_on_sync
from vendor_replay import VendorReplay, expected

pytestmark = pytest.mark.e2e
__all__ = ["dav"]  # the fixture, used by name

KEY = "sk-test-sync-0d1e2f3a4b5c6d7e"
MARKER = "MARKER-5c1e"
FIRST = "openai/chat-stream-text-usage"
SECOND = "openai/chat-stream-azure-content-filter"


def open_conversation(page: Page, title: str) -> None:
    page.get_by_role("complementary", name="Conversations").get_by_role("button", name=title, exact=True).click()


def ask(page: Page, vendor: VendorReplay, text: str, recording: str) -> None:
    vendor.script(recording)
    send(page, text)
    expect(last_reply(page).locator(".content")).to_have_text(expected(recording)["text"], timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)


def test_two_browsers_write_offline_to_one_conversation_and_both_keep_what_they_wrote(
        browser: Browser, site_url: str, vendor: VendorReplay, dav: WebDav):
    a = open_app(browser, site_url)
    configure(a, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    ask(a, vendor, f"{MARKER} where shall we go?", FIRST)
    turn_on_sync(a, dav)
    expect(status(a)).to_contain_text("Synced at", timeout=REPLY_TIMEOUT_MS)
    expect(status(a)).to_contain_text("0 received, 3 sent")  # the conversation, the question, the reply
    a.get_by_role("button", name="Close").click()

    b = open_app(browser, site_url)
    turn_on_sync(b, dav)
    expect(status(b)).to_contain_text("3 received", timeout=REPLY_TIMEOUT_MS)
    configure(b, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    open_conversation(b, f"{MARKER} where shall we go?")
    expect(b.locator(".transcript li.msg.user .content")).to_have_text(f"{MARKER} where shall we go?")

    dav.stop()  # the folder goes away: both go on writing
    ask(a, vendor, "From A while the folder was away", FIRST)
    ask(b, vendor, "From B while the folder was away", SECOND)
    open_settings(a)
    expect(status(a)).to_contain_text("Could not reach", timeout=REPLY_TIMEOUT_MS)  # said, not silent
    a.get_by_role("button", name="Close").click()

    dav.start()
    sync_now(a)
    sync_now(b)
    sync_now(a)
    for page in (a, b):
        page.reload()
        open_conversation(page, f"{MARKER} where shall we go?")
        users = page.locator(".transcript li.msg.user")
        expect(users).to_have_count(2)
        expect(users.last.locator(".branch-pos")).to_have_text("2/2")
        shown = users.last.locator(".content").inner_text()
        users.last.get_by_role("button", name="Previous version").click()
        other = users.last.locator(".content").inner_text()
        assert {shown, other} == {"From A while the folder was away", "From B while the folder was away"}

    stored = dav.files()
    assert "header.json" in stored and len(stored) >= 8
    for name, data in stored.items():
        assert MARKER.encode() not in data and b"From A" not in data and b"where shall" not in data, name
        assert MARKER not in name


def test_a_wrong_passphrase_is_refused_with_a_sentence_and_writes_nothing(
        browser: Browser, site_url: str, dav: WebDav):
    a = open_app(browser, site_url)
    turn_on_sync(a, dav)
    expect(status(a)).to_contain_text("Synced at", timeout=REPLY_TIMEOUT_MS)
    before = dav.files()
    c = open_app(browser, site_url)
    turn_on_sync(c, dav, passphrase="not the passphrase")
    expect(status(c)).to_have_text("This passphrase does not open the sync folder: use the one you chose on your "
                                   "first device. Nothing was changed.", timeout=REPLY_TIMEOUT_MS)
    expect(c.get_by_role("button", name="Turn on sync")).to_be_visible()  # still off, the form kept
    assert dav.files() == before


# The operating system's folder picker cannot be clicked in a headless browser: it hands the page a folder of the
# browser's own file system (OPFS), which has the same FileSystemDirectoryHandle API a chosen folder has.
PICKER = """window.showDirectoryPicker = async () => {
    const root = await navigator.storage.getDirectory();
    return root.getDirectoryHandle("Dropbox-orizuru", {create: true});
};"""
FOLDER_FILES = """async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle("Dropbox-orizuru", {create: true});
    const out = {};
    for await (const [name, handle] of dir.entries()) {
        out[name] = Array.from(new Uint8Array(await (await handle.getFile()).arrayBuffer()));
    }
    return out;
}"""
PUT_FILES = """async (files) => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle("Dropbox-orizuru", {create: true});
    for (const [name, bytes] of Object.entries(files)) {
        const writable = await (await dir.getFileHandle(name, {create: true})).createWritable();
        await writable.write(new Uint8Array(bytes));
        await writable.close();
    }
}"""


def turn_on_folder_sync(page: Page) -> None:
    dialog = open_settings(page)
    dialog.get_by_label("Sync passphrase").fill(PASSPHRASE)
    dialog.get_by_role("button", name="Use a folder on this computer…").click()


def test_a_folder_on_this_computer_carried_to_another_device_brings_the_conversation(
        browser: Browser, site_url: str, vendor: VendorReplay):
    first = browser.new_context()
    first.add_init_script(PICKER)
    a = open_app(browser, site_url, context=first)
    configure(a, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    ask(a, vendor, f"{MARKER} packing list", FIRST)
    turn_on_folder_sync(a)
    expect(status(a)).to_contain_text("0 received, 3 sent", timeout=REPLY_TIMEOUT_MS)
    expect(a.get_by_role("dialog", name="Settings")).to_contain_text("the folder Dropbox-orizuru on this computer")
    files = a.evaluate(FOLDER_FILES)
    assert "header.json" in files and len([n for n in files if n[:2] in ("c-", "m-")]) == 3  # s-: its settings
    assert not any(MARKER.encode() in bytes(data) for data in files.values())

    second = browser.new_context()  # another computer, whose Dropbox app has brought the folder over
    second.add_init_script(PICKER)
    b = open_app(browser, site_url, context=second)
    b.evaluate(PUT_FILES, files)
    turn_on_folder_sync(b)
    expect(status(b)).to_contain_text("3 received, 0 sent", timeout=REPLY_TIMEOUT_MS)
    b.get_by_role("button", name="Close").click()
    open_conversation(b, f"{MARKER} packing list")
    expect(b.locator(".transcript li.msg.user .content")).to_have_text(f"{MARKER} packing list")
    first.close()
    second.close()


NO_DEPTH = {**CORS, "allow_headers": ["Authorization", "If-Match", "If-None-Match", "Content-Type"]}
NO_PROPFIND = {**CORS, "allow_methods": ["GET", "PUT", "OPTIONS"]}
NO_PUT = {**CORS, "allow_methods": ["GET", "PROPFIND", "OPTIONS"]}


@pytest.mark.parametrize(("cors", "says"), [
    (None, ["answers, but without Access-Control-Allow-Origin for this site: send Access-Control-Allow-Origin: http"]),
    (NO_DEPTH, ["does not allow the request header Depth: add Depth to Access-Control-Allow-Headers."]),
    (NO_PROPFIND, ["does not allow the method PROPFIND: add PROPFIND to Access-Control-Allow-Methods."]),
    (NO_PUT, ["does not allow the method PUT: add PUT to Access-Control-Allow-Methods."]),
], ids=["no-cors", "no-depth", "no-propfind", "no-put"])
def test_a_webdav_server_without_the_cors_sync_needs_is_told_what_to_set(
        browser: Browser, site_url: str, tmp_path: Path, cors: dict[str, Any] | None, says: list[str]):
    with serve_webdav(tmp_path / "dav", cors=cors) as server:
        page = open_app(browser, site_url)
        turn_on_sync(page, server)
        expect(status(page)).to_contain_text("Could not reach", timeout=REPLY_TIMEOUT_MS)
        doctor = page.locator("#sync-doctor")
        for text in says:
            expect(doctor).to_contain_text(text, timeout=REPLY_TIMEOUT_MS)
        expect(doctor.locator("li")).to_have_count(1)
        assert set(server.files()) <= {"header.json"}  # the doctor's probes wrote nothing
