"""Each conversation has its own address (issue 29, item 4): `#/c/<id>`, relative to wherever the site is
served. Reload, Back/Forward, an edited address and a bookmark open it; a reload mid-reply lands on the
conversation with the reply marked interrupted; an unknown id says so and shows a new chat. The relay's
token (`#token=…`, web/app/relay.js) coexists with the route: it is read, kept for the tab and never left
in an address the user could copy."""

from __future__ import annotations

import re

import pytest
from journeys import REPLY_TIMEOUT_MS, configure, last_reply, open_app, send, wait_core, wait_idle, wait_ui
from playwright.sync_api import Browser, Page, expect
from vendor_replay import VendorReplay

pytestmark = pytest.mark.e2e

KEY = "sk-test-address-3c9e1f7a5b"
TEXT = "openai/chat-stream-text-usage"
ROUTE = re.compile(r"#/c/([A-Za-z0-9_-]+)$")


def route_of(page: Page) -> str:
    """The conversation id in the address bar (which must never hold the relay's token)."""
    assert "token" not in page.url, page.url
    match = ROUTE.search(page.url)
    assert match, f"no conversation address: {page.url}"
    return match[1]


def shows(page: Page, text: str) -> None:
    """The transcript on screen is the conversation whose first message is ``text``."""
    expect(page.locator(".transcript li.msg.user .content").first).to_have_text(text, timeout=REPLY_TIMEOUT_MS)


def relay_servers_listed(page: Page) -> None:
    """The relay's token is still this tab's: the Tools dialog lists the relay's own server."""
    page.get_by_role("button", name="Tools", exact=True).click()
    dialog = page.get_by_role("dialog", name="Tools")
    expect(dialog.get_by_role("button", name="Connect capitals")).to_be_visible(timeout=REPLY_TIMEOUT_MS)
    dialog.get_by_role("button", name="Close").click()


def chat_in_new_conversation(page: Page, vendor: VendorReplay, text: str) -> str:
    vendor.script(TEXT)
    page.get_by_role("button", name="New chat").first.click()
    expect(page).to_have_url(re.compile(r"#/$"))
    send(page, text)
    wait_idle(page)
    expect(page).to_have_url(ROUTE)
    return route_of(page)


def test_reload_back_forward_an_edited_address_and_a_bookmark_open_the_conversation(
        browser: Browser, relay_url: str, vendor: VendorReplay):
    base, token = relay_url.split("#token=")
    page = open_app(browser, relay_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    first = chat_in_new_conversation(page, vendor, "alpha question")
    second = chat_in_new_conversation(page, vendor, "beta question")
    assert first != second

    page.go_back()  # the second's empty new chat became the second: Back goes to the first
    expect(page).to_have_url(re.compile(f"#/c/{first}$"))
    shows(page, "alpha question")
    page.go_forward()
    shows(page, "beta question")
    assert route_of(page) == second

    page.reload()
    wait_core(page)
    shows(page, "beta question")
    relay_servers_listed(page)  # the reload kept the relay's token, though the address no longer has it

    page.evaluate(f"location.hash = '#/c/{first}'")  # typed into the address bar
    shows(page, "alpha question")

    # A bookmark opens in a new tab: a plain one, and one with the relay's token beside the route.
    for address in (f"{base}#/c/{second}", f"{base}#/c/{second}&token={token}"):
        tab = page.context.new_page()
        tab.goto(address)
        wait_ui(tab)
        shows(tab, "beta question")
        assert route_of(tab) == second
        if "token" in address:
            relay_servers_listed(tab)
        tab.close()
    page.context.close()


def test_a_reload_mid_reply_lands_on_the_conversation_with_the_reply_interrupted(
        browser: Browser, site_url: str, vendor: VendorReplay):
    vendor.script(TEXT, stall_after=5)  # a few words, then the stream stays open
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    send(page, "tell me slowly")
    expect(last_reply(page)).to_have_attribute("data-state", "streaming", timeout=REPLY_TIMEOUT_MS)
    expect(last_reply(page).locator(".content")).not_to_have_text("", timeout=REPLY_TIMEOUT_MS)
    before = route_of(page)

    page.reload()
    wait_ui(page)
    assert route_of(page) == before
    shows(page, "tell me slowly")
    expect(last_reply(page)).to_have_attribute("data-state", "interrupted", timeout=REPLY_TIMEOUT_MS)
    expect(last_reply(page).locator(".notice")).to_contain_text("cut off")
    page.context.close()


def test_an_unknown_address_says_so_and_shows_a_new_chat(browser: Browser, site_url: str, vendor: VendorReplay):
    base = site_url.split("#", 1)[0]
    page = open_app(browser, f"{base}#/c/no-such-conversation", wait_ready=False)
    wait_ui(page)
    notice = page.locator("#toasts .toast").filter(has_text="No conversation has this address")
    expect(notice).to_have_count(1)
    expect(page).to_have_url(re.compile(r"#/$"))

    # With a conversation on screen, an address edited to an unknown one leaves it for a new chat.
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    chat_in_new_conversation(page, vendor, "gamma question")
    expect(notice).to_have_count(0, timeout=REPLY_TIMEOUT_MS)  # the first notice has gone by itself
    page.evaluate("location.hash = '#/c/deleted-elsewhere'")
    expect(notice).to_have_count(1)
    expect(page.locator(".transcript li.empty")).to_be_visible()
    expect(page).to_have_url(re.compile(r"#/$"))
    page.context.close()
