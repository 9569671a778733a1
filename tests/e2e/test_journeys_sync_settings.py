"""Sync of what is not a conversation (#34): provider profiles, assistants, saved prompts, MCP server entries and
preferences (the currency, caps and prices of Settings → Costs, the voice's speed among them) go
through the same encrypted WebDAV folder, last writer wins per record, and a delete reaches the other device. What is
secret stays behind: an API key, a server's header values. Keys travel only when the user turns that on, then
sealed by the sync passphrase like everything else; turned off again, they leave the folder.

Each test opens every record with the passphrase (journeys_webdav_server.WebDav.opened) and greps the plaintext."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from cryptography.exceptions import InvalidTag
from journeys import REPLY_TIMEOUT_MS, configure, open_app, open_settings, send, wait_idle
from journeys_webdav_server import WebDav
from playwright.sync_api import Browser, Page, expect
from sync_steps import PASSPHRASE, dav, status, sync_now, turn_on_sync
from test_journeys_assistants import panel
from test_journeys_prompts import save_prompts
from vendor_replay import VendorReplay

pytestmark = pytest.mark.e2e
__all__ = ["dav"]  # the fixture, used by name

KEY = "sk-test-sync-settings-7a8b9c0d1e2f"
HEADER_SECRET = "HEADER-SECRET-77f0"
MCP_URL = "http://127.0.0.1:9/mcp"  # nothing listens: the entry is kept, its connection fails
RECORDING = "openai/chat-stream-text-usage"


def add_mcp_entry(page: Page) -> None:
    page.get_by_role("button", name="Tools", exact=True).click()
    tools = page.get_by_role("dialog", name="Tools")
    tools.get_by_label("Server URL").fill(MCP_URL)
    tools.get_by_label("Headers").fill(f"Authorization: Bearer {HEADER_SECRET}")
    tools.get_by_role("button", name="Add server").click()
    expect(tools.locator(f'#mcp-servers li.server[data-id="url:{MCP_URL}"]')).to_be_visible()
    tools.get_by_role("button", name="Close").click()


def save_assistant(page: Page, name: str, system: str) -> None:
    area = panel(page)
    area.get_by_label("System prompt").fill(system)
    area.get_by_role("button", name="Save as new assistant").click()
    named = area.get_by_role("textbox", name="Name of the new assistant")
    named.fill(name)
    named.press("Enter")
    expect(page.get_by_label("Assistant", exact=True).locator("option:checked")).to_have_text(name)


def prompts_list(page: Page):
    page.get_by_role("button", name="Prompts", exact=True).click()
    return page.get_by_role("dialog", name="Saved prompts").get_by_role("list", name="Saved prompts")


def close_prompts(page: Page) -> None:
    page.get_by_role("dialog", name="Saved prompts").get_by_role("button", name="Close").click()


def plaintext(dav: WebDav) -> str:
    return "\n".join(dav.opened(PASSPHRASE).values())


def settled(dav: WebDav, holds: Callable[[dict[str, str]], bool]) -> bool:
    """Whether the folder, once the device's writes are done, ``holds``: a sync may still be writing a record
    after the status says synced (the status keeps its last "Synced at" while a new sync runs, and closing
    Settings starts another), and a file caught mid-write is not yet a record, so the folder is read again until
    it opens whole and holds (or the time is up)."""
    deadline = time.monotonic() + REPLY_TIMEOUT_MS / 1000
    while True:
        try:
            if holds(dav.opened(PASSPHRASE)):
                return True
        except (ValueError, InvalidTag):
            pass  # a record being written
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def settled_without(dav: WebDav, secret: str) -> bool:
    return settled(dav, lambda opened: secret not in "\n".join(opened.values()))


def test_profiles_assistants_prompts_and_mcp_entries_reach_another_device_without_their_secrets(
        browser: Browser, site_url: str, vendor: VendorReplay, dav: WebDav):
    a = open_app(browser, site_url)
    configure(a, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini", name="Work OpenAI")
    save_assistant(a, "Statistician", "You are a careful statistician.")
    save_prompts(a, {"standup": "Summarise {{day}} for the standup.", "retro": "What went well?"})
    add_mcp_entry(a)
    dialog = open_settings(a)  # amounts in yen, a cap, and a faster voice: the same on every device
    dialog.get_by_label("Currency (e.g. USD, EUR, JPY)").fill("JPY")
    dialog.get_by_label("Units of your currency per 1 USD").fill("150")
    dialog.get_by_label("Spending cap per day (empty: none)").fill("300")
    dialog.get_by_role("button", name="Save currency and caps").click()
    dialog.get_by_label("Speed").fill("1.5")
    dialog.get_by_label("Speed").dispatch_event("change")
    dialog.get_by_role("button", name="Close").click()
    turn_on_sync(a, dav)
    expect(status(a)).to_contain_text("Synced at", timeout=REPLY_TIMEOUT_MS)
    a.get_by_role("button", name="Close").click()

    b = open_app(browser, site_url)
    turn_on_sync(b, dav)
    expect(status(b)).to_contain_text(re.compile(r"Settings: [1-9]\d* received"), timeout=REPLY_TIMEOUT_MS)
    b.get_by_role("button", name="Close").click()
    dialog = open_settings(b)  # the profile came, its key did not (keys stay unless the user turns that on)
    expect(dialog.get_by_label("Profile name")).to_have_value("Work OpenAI")
    expect(dialog.get_by_label("Model", exact=True)).to_have_value("gpt-4o-mini")
    expect(dialog.get_by_label("API key", exact=True)).to_have_value("")
    expect(dialog.get_by_label("Currency (e.g. USD, EUR, JPY)")).to_have_value("JPY")
    expect(dialog.get_by_label("Spending cap per day (empty: none)")).to_have_value("300")
    expect(dialog.get_by_label("Speed")).to_have_value("1.5")
    dialog.get_by_role("button", name="Close").click()
    expect(b.get_by_label("Assistant", exact=True).locator("option", has_text="Statistician")).to_have_count(1)
    b.get_by_label("Assistant", exact=True).select_option(label="Statistician")
    expect(panel(b).get_by_label("System prompt")).to_have_value("You are a careful statistician.")
    expect(prompts_list(b)).to_contain_text("/standup")
    close_prompts(b)
    b.get_by_role("button", name="Tools", exact=True).click()
    tools = b.get_by_role("dialog", name="Tools")
    expect(tools.locator(f'#mcp-servers li.server[data-id="url:{MCP_URL}"]')).to_be_visible()
    tools.get_by_role("button", name="Close").click()

    # A delete on one device is a delete on the other.
    listed = prompts_list(a)
    listed.get_by_role("button", name="Delete: retro").click()
    expect(listed).not_to_contain_text("/retro")
    close_prompts(a)  # a dialog closed: a sync follows by itself
    open_settings(a)
    expect(status(a)).to_contain_text("Settings: 0 received, 1 sent.", timeout=REPLY_TIMEOUT_MS)
    sync_now(b)
    listed = prompts_list(b)
    expect(listed).not_to_contain_text("/retro")
    expect(listed).to_contain_text("/standup")
    close_prompts(b)

    opened = dav.opened(PASSPHRASE)
    text = "\n".join(opened.values())
    assert "You are a careful statistician." in text and "Work OpenAI" in text and MCP_URL in text  # they went
    assert KEY not in text and HEADER_SECRET not in text  # T-Y7: secrets did not
    assert not any(name.startswith("k-") for name in opened)


def turn_keys_sync(page: Page, on: bool) -> None:
    dialog = open_settings(page)
    box = dialog.get_by_label("Sync API keys too, sealed by the sync passphrase")
    expect(box).to_be_checked(checked=not on)
    status(page).evaluate("line => line.textContent = ''")  # the sync the box starts says "Synced at" anew
    box.set_checked(on)
    expect(status(page)).to_contain_text("Synced at", timeout=REPLY_TIMEOUT_MS)
    dialog.get_by_role("button", name="Close").click()


def test_api_keys_sync_only_when_turned_on_sealed_by_the_passphrase_and_leave_when_turned_off(
        browser: Browser, site_url: str, vendor: VendorReplay, dav: WebDav):
    a = open_app(browser, site_url)
    configure(a, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    turn_on_sync(a, dav)
    expect(status(a)).to_contain_text("Synced at", timeout=REPLY_TIMEOUT_MS)
    a.get_by_role("button", name="Close").click()
    assert settled_without(dav, KEY)  # off by default

    turn_keys_sync(a, True)
    assert settled(dav, lambda opened: any(KEY in text and name.startswith("k-") for name, text in opened.items())), \
        "the key, sealed"
    assert not any(KEY.encode() in data for data in dav.files().values())  # never as plaintext bytes

    b = open_app(browser, site_url)
    turn_on_sync(b, dav)
    expect(status(b)).to_contain_text("Synced at", timeout=REPLY_TIMEOUT_MS)
    b.get_by_role("button", name="Close").click()
    turn_keys_sync(b, True)
    vendor.script(RECORDING)
    send(b, "Hello from the second device")  # no key asked for: it came with sync
    wait_idle(b)
    assert vendor.model_requests[-1].headers.get("authorization") == f"Bearer {KEY}"

    turn_keys_sync(a, False)  # off again: the folder keeps no key
    assert settled_without(dav, KEY)
