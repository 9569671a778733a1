"""Journeys through the chat app in real Chromium: first run, a streamed reply, Stop, a reload that
finds the cut-off reply, switching vendor mid-conversation. The vendors are the loopback replay
server (vendor_replay.py) serving their real recorded responses."""

from __future__ import annotations

import pytest
from journeys import (
    REPLY_TIMEOUT_MS,
    browser_storage_dump,
    configure,
    dollars,
    last_reply,
    list_price,
    open_app,
    replies,
    send,
    usage_line,
    wait_core,
    wait_idle,
)
from playwright.sync_api import Browser, expect
from vendor_replay import VendorReplay, expected, with_text

pytestmark = pytest.mark.e2e

KEY = "sk-test-h6b-8f3a1c9e5d7b2046"  # a made-up key: the point is to find where it goes


def test_first_run_set_a_key_chat_and_stream(browser: Browser, site_url: str, vendor: VendorReplay):
    recording = "openai/chat-stream-text-usage"
    want = expected(recording)
    vendor.script(recording)
    page = open_app(browser, site_url)
    # First run, no account: a short card in the chat asks for a provider, a key and a model (issue #19).
    card = page.get_by_role("region", name="Connect a model")
    expect(card).to_be_visible()
    expect(page.get_by_role("dialog", name="Settings")).to_be_hidden()
    card.get_by_label("Provider", exact=True).select_option("openai")
    card.get_by_role("button", name="Start chatting").click()
    expect(card.locator("#setup-status")).to_have_text("Paste your API key first.")
    card.get_by_label("API key", exact=True).fill(KEY)
    card.get_by_label("Base URL", exact=True).fill(vendor.url + "/v1")
    # Test connection lists the vendor's models with this key and offers them; the first is picked.
    vendor.list_models("gpt-4o-mini", "gpt-4o")
    card.get_by_role("button", name="Test connection").click()
    expect(card.locator("#setup-status")).to_have_text("Connected to OpenAI: 2 models available. Pick one under Model.",
                                                     timeout=REPLY_TIMEOUT_MS)
    expect(card.get_by_label("Model", exact=True)).to_have_value("gpt-4o-mini")
    assert vendor.requests[-1].headers["authorization"] == f"Bearer {KEY}"
    card.get_by_role("button", name="Start chatting").click()
    expect(card).to_be_hidden()
    expect(page.get_by_role("textbox", name="Message", exact=True)).to_be_focused()

    send(page, "What is the capital of the UK?")
    reply = last_reply(page)
    expect(reply.locator(".content")).to_have_text(want["text"], timeout=REPLY_TIMEOUT_MS)
    expect(reply).to_have_attribute("data-state", "done")
    usage = want["usage"]
    # Its tokens and what they cost at the bundled list price (tests/e2e/test_journeys_costs.py has the rest).
    cost = dollars(list_price("gpt-4o-mini", "openai", usage)["usd"])
    expect(reply.locator(".usage")).to_have_text(usage_line(usage, cost))
    expect(reply.locator(".meta")).to_have_text("OpenAI · gpt-4o-mini")
    wait_idle(page)

    sent = vendor.model_requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.json["model"] == "gpt-4o-mini"
    assert sent.json["messages"][-1]["content"] in ("What is the capital of the UK?",
                                                   [{"type": "text", "text": "What is the capital of the UK?"}])
    # The conversation is listed, titled by its first message.
    listed = page.get_by_role("complementary").get_by_role("button", name="What is the capital of the UK?", exact=True)
    expect(listed).to_be_visible()

    # The key is in memory only: nowhere in localStorage, sessionStorage or IndexedDB.
    dump = browser_storage_dump(page)
    assert "What is the capital of the UK?" in dump  # the dump does see the stored conversation
    assert KEY not in dump

    # A reload keeps the conversation (IndexedDB) but not the key: the next send asks for it.
    page.reload()
    wait_core(page)
    page.get_by_role("button", name="What is the capital of the UK?", exact=True).click()
    expect(last_reply(page).locator(".content")).to_have_text(want["text"])
    send(page, "again")
    ask = page.get_by_role("dialog", name="API key needed")
    expect(ask).to_contain_text("memory only")
    ask.get_by_role("button", name="Cancel").click()
    expect(page.get_by_role("textbox", name="Message", exact=True)).to_have_value("again")  # not lost
    assert len(vendor.model_requests) == 1  # nothing went out without the key
    page.context.close()


def test_stop_mid_stream_then_reload_finds_the_partial_reply_marked(browser: Browser, site_url: str,
                                                                    vendor: VendorReplay):
    recording = "anthropic/stream-text"
    full = expected(recording)["text"]
    # Five events reach the page (message_start, content_block_start, the first text deltas), then
    # the stream stays open: the reply is certainly still streaming when Stop is pressed.
    vendor.script(recording, stall_after=5)
    page = open_app(browser, site_url)
    configure(page, vendor="anthropic", base=vendor.url, key=KEY, model="claude-sonnet-4-5")
    send(page, "Give me two numbers")
    reply = last_reply(page)
    expect(reply).to_have_attribute("data-state", "streaming", timeout=REPLY_TIMEOUT_MS)
    expect(reply.locator(".content")).not_to_have_text("", timeout=REPLY_TIMEOUT_MS)
    partial = reply.locator(".content").inner_text()
    assert partial and full.startswith(partial) and partial != full

    page.keyboard.press("Escape")  # Esc stops, as the Stop button does
    wait_idle(page)
    reply = last_reply(page)
    expect(reply).to_have_attribute("data-state", "interrupted")
    expect(reply.locator(".notice")).to_contain_text("cut off")
    expect(reply.locator(".content")).to_have_text(partial)

    page.reload()
    wait_core(page)
    page.get_by_role("button", name="Give me two numbers", exact=True).click()
    reply = last_reply(page)
    expect(reply).to_have_attribute("data-state", "interrupted")
    expect(reply.locator(".notice")).to_contain_text("cut off")
    expect(reply.locator(".content")).to_have_text(partial)
    page.context.close()


def test_the_stop_button_cancels_a_slow_stream(browser: Browser, site_url: str, vendor: VendorReplay):
    recording = "openai/chat-stream-text-usage"
    vendor.script(recording, delay=0.4)  # about 10 s for the whole reply
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    send(page, "Slowly, please")
    reply = last_reply(page)
    expect(reply.locator(".content")).to_contain_text("capital", timeout=REPLY_TIMEOUT_MS)
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_idle(page)
    expect(last_reply(page)).to_have_attribute("data-state", "interrupted")
    text = last_reply(page).locator(".content").inner_text()
    assert text != expected(recording)["text"] and expected(recording)["text"].startswith(text)
    page.context.close()


def test_switch_vendor_mid_conversation_sends_the_whole_transcript(browser: Browser, site_url: str,
                                                                   vendor: VendorReplay):
    first, second = "openai/chat-stream-text-usage", "gemini/stream-text"
    vendor.script(first, second)
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini", name="OpenAI")
    send(page, "What is the capital of the UK?")
    expect(last_reply(page).locator(".content")).to_have_text(expected(first)["text"], timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)

    configure(page, vendor="gemini", base=vendor.url, key="gm-test-key-0001", model="gemini-2.5-flash",
              name="Gemini", new_profile=True)
    expect(page.get_by_role("combobox", name="Profile")).to_have_value(
        page.get_by_role("combobox", name="Profile").locator("option", has_text="Gemini").get_attribute("value"))
    send(page, "And of France?")
    expect(replies(page)).to_have_count(2)
    expect(last_reply(page).locator(".content")).to_have_text(expected(second)["text"], timeout=REPLY_TIMEOUT_MS)
    expect(last_reply(page).locator(".meta")).to_have_text("Gemini · gemini-2.5-flash")
    expect(replies(page).first.locator(".meta")).to_have_text("OpenAI · gpt-4o-mini")

    to_gemini = vendor.model_requests[1]
    assert to_gemini.path.startswith("/v1beta/models/gemini-2.5-flash:streamGenerateContent")
    assert to_gemini.headers.get("x-goog-api-key") == "gm-test-key-0001"
    assert KEY not in str(to_gemini.headers) + to_gemini.body.decode()  # the OpenAI key stays with OpenAI
    contents = to_gemini.json["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"][0]["text"] == expected(first)["text"]
    assert contents[2]["parts"][0]["text"] == "And of France?"
    page.context.close()


# --- a hostile size (SECURITY.md T-Z2) ----------------------------------------------------------------

GIANT_LINE = "Line {:07d}: the vendor keeps talking, far past anything a page should format.\n"


def giant_text(size: int = 12 * 1024 * 1024) -> str:
    """About ``size`` characters of plain lines: one text delta (the core's decoders take units up to 32 MiB)."""
    line_length = len(GIANT_LINE.format(0))
    return "".join(GIANT_LINE.format(i) for i in range(size // line_length))


def test_a_12_mb_text_delta_is_shown_plain_ends_done_and_survives_a_reload(browser: Browser, site_url: str,
                                                                            vendor: VendorReplay):
    """T-Z2: one text delta of ~12 MB overflowed the markdown parser's stack: the reply stayed "streaming"
    and after a reload the conversation opened empty. Past the renderer's size limit the text is shown
    as plain text under a note; the reply ends "done", is stored, and opens again after a reload."""
    text = giant_text()
    assert len(text) > 12_000_000
    vendor.script_body("giant-delta", with_text("openai/chat-stream-text-usage", text),
                       content_type="text/event-stream; charset=utf-8")
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    send(page, "Say a great deal")
    wait_idle(page)

    def assert_shown_plain() -> None:
        reply = last_reply(page)
        expect(reply).to_have_attribute("data-state", "done")
        expect(reply.locator(".content .md-plain-note")).to_contain_text("too long to format", ignore_case=True)
        plain = reply.locator(".content pre.md-plain")
        expect(plain).to_be_visible()
        expect(plain).to_contain_text(GIANT_LINE.format(0).strip())
        shown = plain.evaluate("(pre) => ({length: pre.textContent.length, tail: pre.textContent.slice(-200)})")
        assert shown == {"length": len(text), "tail": text[-200:]}
        expect(page.locator(".transcript li.msg.user .content")).to_have_text("Say a great deal")

    assert_shown_plain()
    page.reload()
    wait_core(page)
    page.get_by_role("button", name="Say a great deal", exact=True).click()
    assert_shown_plain()
    page.context.close()
