"""Steps of the sync journeys (test_journeys_sync*.py, test_journeys_share.py): a WebDAV folder started for the
test, and Settings → Sync as a user fills it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from journeys import REPLY_TIMEOUT_MS, open_settings
from journeys_webdav_server import PASSWORD, USER, WebDav, serve_webdav
from playwright.sync_api import Page, expect

PASSPHRASE = "plum kettle orbit 42"


@pytest.fixture
def dav(tmp_path: Path) -> Iterator[WebDav]:
    with serve_webdav(tmp_path / "dav") as server:
        yield server


def status(page: Page):
    return page.locator("#sync-status")


def turn_on_sync(page: Page, dav: WebDav, passphrase: str = PASSPHRASE) -> None:
    dialog = open_settings(page)
    dialog.get_by_label("WebDAV folder URL").fill(dav.url)
    dialog.get_by_label("User name").fill(USER)
    dialog.get_by_label("Password (an app password where the server offers one)").fill(PASSWORD)
    dialog.get_by_label("Sync passphrase").fill(passphrase)
    dialog.get_by_role("button", name="Turn on sync").click()


def sync_now(page: Page) -> None:
    """Sync now, and wait for that sync's own "Synced at" (the line is cleared first: the last one may say it too)."""
    dialog = open_settings(page)
    status(page).evaluate("line => line.textContent = ''")
    dialog.get_by_role("button", name="Sync now").click()
    expect(status(page)).to_contain_text("Synced at", timeout=REPLY_TIMEOUT_MS)
    dialog.get_by_role("button", name="Close").click()
