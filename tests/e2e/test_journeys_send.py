"""A message never vanishes: what the person typed leaves the box only once it is stored, and a send that
cannot go says why, with the words still in the box (issue 30 item 3, the brief's first item). Each case was a
real way to lose a message before web/app/turn.js: a conversation opening while Send was pressed, one deleted
in another tab, Enter while a reply was still streaming."""

from __future__ import annotations

import pytest
from journeys import REPLY_TIMEOUT_MS, configure, last_reply, open_app, replies, send, wait_idle
from playwright.sync_api import Browser, Page, expect
from vendor_replay import VendorReplay, expected

pytestmark = pytest.mark.e2e

KEY = "sk-test-send-4c1d9e0b7a2f"
RECORDING = "openai/chat-stream-text-usage"


def box(page: Page):
    return page.get_by_role("textbox", name="Message", exact=True)


def chat_once(page: Page, vendor: VendorReplay, text: str) -> None:
    vendor.script(RECORDING)
    send(page, text)
    expect(last_reply(page).locator(".content")).to_have_text(expected(RECORDING)["text"], timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)


def sidebar_entry(page: Page, title: str):
    return page.get_by_role("complementary").get_by_role("button", name=title, exact=True)


def test_a_message_sent_while_a_conversation_opens_goes_to_that_conversation(browser: Browser, site_url: str,
                                                                           vendor: VendorReplay):
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    chat_once(page, vendor, "First conversation")
    page.keyboard.press("Control+k")
    chat_once(page, vendor, "Second conversation")
    # Reading a conversation's messages takes a moment on a big history; here it takes 1.5 s, so the
    # message is certainly sent while "First conversation" is still opening.
    page.evaluate("""() => {
      const getAll = IDBIndex.prototype.getAll;
      IDBIndex.prototype.getAll = function (...args) {
        const request = getAll.apply(this, args);
        if (!window.slowReads) return request;
        const listeners = { success: [], error: [] };
        const late = Object.create(IDBRequest.prototype, {
          result: { get: () => request.result }, error: { get: () => request.error },
          addEventListener: { value: (type, fn) => listeners[type]?.push(fn) },
          removeEventListener: { value: () => {} },
        });
        request.addEventListener("success", () => setTimeout(() => listeners.success.forEach((fn) => fn()), 1500));
        request.addEventListener("error", () => listeners.error.forEach((fn) => fn()));
        return late;
      };
      window.slowReads = true;
    }""")
    vendor.script(RECORDING)
    sidebar_entry(page, "First conversation").click()
    send(page, "Sent while it opens")
    expect(box(page)).to_have_value("")
    page.evaluate("() => { window.slowReads = false; }")
    users = page.locator(".transcript li.msg.user .content")
    expect(users.last).to_have_text("Sent while it opens", timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    expect(users).to_have_text(["First conversation", "Sent while it opens"])
    expect(replies(page)).to_have_count(2)
    # It went to the vendor with the conversation it was sent in, not the one on screen a moment before.
    sent = vendor.model_requests[-1].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    sidebar_entry(page, "Second conversation").click()
    expect(page.locator(".transcript li.msg.user .content")).to_have_text(["Second conversation"])
    page.context.close()


def test_a_message_to_a_conversation_deleted_in_another_tab_stays_in_the_box(browser: Browser, site_url: str,
                                                                             vendor: VendorReplay):
    """T-S8 (SECURITY.md): the store refuses a message for a deleted conversation; the box keeps it."""
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    chat_once(page, vendor, "Soon deleted")
    other = open_app(browser, site_url, context=page.context)
    sidebar_entry(other, "Soon deleted").hover()
    other.get_by_role("button", name="Delete: Soon deleted").click()
    expect(sidebar_entry(other, "Soon deleted")).to_be_hidden()

    requests = len(vendor.model_requests)
    send(page, "Do not lose me")
    notice = page.get_by_role("alert").filter(has_text="deleted")
    expect(notice).to_be_visible(timeout=REPLY_TIMEOUT_MS)
    expect(box(page)).to_have_value("Do not lose me")
    assert len(vendor.model_requests) == requests  # nothing went out
    # Sent again, it starts a new conversation that is listed and kept.
    chat_once(page, vendor, "Do not lose me")
    expect(sidebar_entry(page, "Do not lose me")).to_be_visible()
    page.context.close()


def test_enter_while_a_reply_streams_keeps_the_words_and_says_why(browser: Browser, site_url: str,
                                                                   vendor: VendorReplay):
    vendor.script("anthropic/stream-text", stall_after=5)
    page = open_app(browser, site_url)
    configure(page, vendor="anthropic", base=vendor.url, key=KEY, model="claude-sonnet-4-5")
    send(page, "A long answer, please")
    expect(last_reply(page)).to_have_attribute("data-state", "streaming", timeout=REPLY_TIMEOUT_MS)
    expect(page.locator("html")).to_have_attribute("data-turn", "streaming")
    # Copy and Regenerate wait for the turn's end: there is nothing whole to copy or redo yet.
    expect(last_reply(page).get_by_role("button", name="Regenerate")).to_be_hidden()
    send(page, "And a follow-up")
    expect(page.locator(".toast").filter(has_text="still being written")).to_be_visible()
    expect(box(page)).to_have_value("And a follow-up")
    page.keyboard.press("Escape")
    wait_idle(page)
    expect(page.locator("html")).to_have_attribute("data-turn", "idle")
    # After Stop the same words go, as their own message.
    vendor.script(RECORDING)
    box(page).press("Enter")
    expect(box(page)).to_have_value("")
    expect(page.locator(".transcript li.msg.user .content")).to_have_text(["A long answer, please", "And a follow-up"])
    page.context.close()


def test_what_was_drawn_before_a_turn_is_the_same_after_it(browser: Browser, site_url: str, vendor: VendorReplay):
    """Issue 30 item 2: at a turn's end nothing is drawn again. The bubbles and replies already on screen are the
    same DOM nodes afterwards (no markdown parsed twice), and the reply drawn live becomes the stored one in place:
    its id, its Regenerate, its ‹ 1/2 › after a regeneration."""
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    chat_once(page, vendor, "First question")
    page.evaluate("""() => {
      window.before = [...document.querySelectorAll('.transcript > li, .transcript .content > *')];
      window.before.forEach((el) => el.dataset.before = 'yes');
    }""")
    chat_once(page, vendor, "Second question")
    live = page.evaluate("() => window.before.every((el) => el.isConnected && el.dataset.before === 'yes')")
    assert live, "a message drawn before the turn was drawn again"
    reply = last_reply(page)
    expect(reply).not_to_have_attribute("data-id", "")
    page.evaluate("() => { window.reply = [...document.querySelectorAll('.transcript > li')].pop(); }")
    vendor.script(RECORDING)
    reply.get_by_role("button", name="Regenerate").click()
    wait_idle(page)
    expect(last_reply(page).locator("nav.branches")).to_contain_text("2/2")
    assert page.evaluate("() => !window.reply.isConnected"), "the regenerated reply replaces the old one on screen"
    assert page.evaluate("() => window.before.every((el) => el.isConnected)")
    assert not [text for text in errors if "could not be shown" in text], errors  # every message drawn as itself
    page.context.close()
