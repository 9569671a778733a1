"""What a new user meets in the first minutes (issue 16), in real Chromium against the loopback vendor:

- the view follows a streaming reply while the reader is at the bottom, lets go the moment they
  scroll up, and a "Jump to latest" button brings them back; sending always shows the sent message,
  and a finished reply leaves the view at the bottom;
- errors say what to do: a 401 names its status and opens Settings, a vendor that cannot be reached
  names its host and the likely causes and can be retried, and after a reload a key that was kept
  in memory is asked for before anything is sent.

Scroll positions are read from the transcript element (scrollTop, scrollHeight, clientHeight).
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from journeys import (
    REPLY_TIMEOUT_MS,
    choose_file,
    configure,
    last_reply,
    open_app,
    send,
    wait_core,
    wait_idle,
    wait_key_saved,
    wait_ui,
)
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from vendor_replay import VendorReplay, expected

pytestmark = pytest.mark.e2e

KEY = "sk-test-first-minutes-3b8d1f6a"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
LONG = "gemini/stream-thinking"  # the longest recorded streamed answer: ~1900 characters of markdown

# How far the transcript's visible bottom is above the end of its content, in CSS pixels.
DISTANCE = ("() => { const t = document.getElementById('transcript');"
            " return t.scrollHeight - t.scrollTop - t.clientHeight; }")
AT_BOTTOM = f"() => ({DISTANCE})() <= 2"
AT_HIT = ("() => { const hit = document.querySelector('.transcript li.search-hit');"
          " const box = document.getElementById('transcript').getBoundingClientRect();"
          " const at = hit.getBoundingClientRect(); return at.top >= box.top && at.bottom <= box.bottom; }")


def distance_to_bottom(page: Page) -> float:
    return page.evaluate(DISTANCE)


def expect_at_bottom(page: Page) -> None:
    """The transcript shows its end (waits for the blocks that render late to settle)."""
    try:
        page.wait_for_function(AT_BOTTOM, timeout=10_000)
    except PlaywrightTimeoutError:
        pytest.fail(f"the view stops {distance_to_bottom(page):.0f} px above the end of the transcript")


def reading(page: Page) -> dict[str, object]:
    """The block of text in the middle of the transcript, and where it is on screen."""
    return page.evaluate("""() => {
      const r = document.getElementById('transcript').getBoundingClientRect();
      const el = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)?.closest('.content > *, li');
      return {text: el.textContent.slice(0, 120), top: Math.round(el.getBoundingClientRect().top)};
    }""")


TOOL_EXCHANGE = [("assistant", {"type": "tool_call", "id": "call_1", "name": "weather", "arguments": {"city": "Oslo"}}),
                 ("user", {"type": "tool_result", "call_id": "call_1", "content": [{"type": "text", "text": "Rain"}]})]


def long_history(path: Path, exchanges: int, *, tool: bool = False) -> Path:
    """An export file with one conversation of ``exchanges`` long answers (far taller than a screen); ``tool``:
    the first answer comes after a tool call and its result (a message of role "user", as the vendors have it)."""
    answer = expected(LONG)["text"]
    messages, parent = [], None
    for i in range(exchanges):
        steps = [("user", {"type": "text", "text": f"Question {i + 1}"}),
                 ("assistant", {"type": "text", "text": answer})]
        if tool and i == 0:
            steps[1:1] = TOOL_EXCHANGE
        for role, part in steps:
            mid = f"m{len(messages)}"
            messages.append({"id": mid, "parent_id": parent, "role": role, "parts": [part],
                             "status": "complete", "created": 1_700_000_000_000 + len(messages)})
            parent = mid
    path.write_text(json.dumps({"format": "orizuru.conversations", "version": 1, "exported_at": "2025-01-01T00:00:00Z",
                                "conversations": [{"id": "long", "title": "Street safety", "created": 1_700_000_000_000,
                                                   "updated": 1_700_000_000_000, "current_leaf": parent,
                                                   "messages": messages}]}))
    return path


def open_long_conversation(page: Page, tmp_path: Path, *, tool: bool = False) -> None:
    toggle = page.get_by_role("button", name="Show conversations")
    if toggle.is_visible():  # phone width: the sidebar slides in
        toggle.click()
    choose_file(page, "Import", long_history(tmp_path / "history.json", 6, tool=tool))
    sidebar = page.get_by_role("complementary")
    sidebar.get_by_role("button", name="Street safety", exact=True).click()
    expect(page.locator(".transcript li.msg.assistant")).to_have_count(6)  # a turn with a tool call is one reply too
    if toggle.is_visible():
        page.locator(".transcript").click(position={"x": 5, "y": 5})  # a tap outside puts the sidebar away


def wait_stored(page: Page) -> None:
    """The turn is over and the transcript was drawn again from the store (stored replies have ids)."""
    wait_idle(page)
    expect(last_reply(page)).not_to_have_attribute("data-id", "")


def test_the_view_follows_a_streaming_reply_until_the_reader_scrolls_up(browser: Browser, site_url: str,
                                                                        vendor: VendorReplay, tmp_path: Path):
    page = open_app(browser, site_url, context=browser.new_context(viewport=PHONE))
    configure(page, vendor="gemini", base=vendor.url, key=KEY, model="gemini-2.5-pro")
    open_long_conversation(page, tmp_path)
    expect_at_bottom(page)  # an opened conversation shows its end
    jump = page.get_by_role("button", name="Jump to latest")
    expect(jump).to_be_hidden()

    # Sent from far up: the sent message is shown.
    page.locator("#transcript").evaluate("t => t.scrollTop = 0")
    expect(jump).to_be_visible()
    vendor.script(LONG, delay=0.5)  # about 11 s of streaming, one event at a time
    send(page, "How do I cross the street safely?")
    expect(page.locator(".transcript li.msg.user").last).to_be_in_viewport()

    # While the reader is at the bottom, the view keeps up with the reply as it grows past a screen.
    reply = last_reply(page)
    try:
        page.wait_for_function(
            """() => {
              const t = document.getElementById('transcript');
              const reply = [...t.querySelectorAll('li.msg.assistant')].pop();
              return reply.dataset.state === 'streaming' && reply.getBoundingClientRect().height > t.clientHeight
                && t.scrollHeight - t.scrollTop - t.clientHeight <= 2;
            }""", timeout=REPLY_TIMEOUT_MS)
    except PlaywrightTimeoutError:
        pytest.fail(f"the streamed reply was not followed: the view is {distance_to_bottom(page):.0f} px above its end")

    # Scrolling up lets go at once: the text that keeps arriving does not pull the view down.
    box = page.locator("#transcript").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -600)
    page.wait_for_function(f"() => ({DISTANCE})() > 400")
    expect(reply).to_have_attribute("data-state", "streaming")  # more is still to come
    held = reading(page)
    expect(jump).to_be_visible()
    wait_stored(page)  # the rest streamed in, then the transcript was drawn again from the store
    assert reading(page) == held
    assert distance_to_bottom(page) > 400

    # "Jump to latest" goes to the end and hides itself.
    jump.click()
    expect_at_bottom(page)
    expect(jump).to_be_hidden()
    expect(last_reply(page).locator(".usage")).to_be_in_viewport()
    page.context.close()


def test_each_finished_reply_leaves_the_view_at_the_bottom(browser: Browser, site_url: str, vendor: VendorReplay,
                                                           tmp_path: Path):
    page = open_app(browser, site_url, context=browser.new_context(viewport=DESKTOP))
    configure(page, vendor="gemini", base=vendor.url, key=KEY, model="gemini-2.5-pro")
    open_long_conversation(page, tmp_path)
    expect_at_bottom(page)
    for question in ("How do I cross the street safely?", "And at night?"):
        vendor.script(LONG)
        send(page, question)
        expect(last_reply(page).locator(".content")).to_contain_text("crosswalk", timeout=REPLY_TIMEOUT_MS)
        wait_stored(page)
        expect_at_bottom(page)
        expect(page.locator(".transcript li.msg.user").last).to_contain_text(question)
        expect(last_reply(page).locator(".usage")).to_be_in_viewport()
        assert distance_to_bottom(page) <= 2
    page.context.close()


# ---------------------------------------------------------------------------------------------- first run


def test_the_setup_card_asks_an_openai_compatible_server_for_an_optional_key_and_names_known_services(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """Issue 29 item 1: most OpenAI-compatible servers need a key, and the known services are picked by name
    (their address comes from the adapters' catalogue) instead of typing a base URL."""
    recording = "openai/chat-stream-text-usage"
    vendor.script(recording)
    page = open_app(browser, site_url)
    card = page.get_by_role("region", name="Connect a model")
    provider = card.get_by_label("Provider", exact=True)
    provider.select_option("openai-compatible")
    key = card.get_by_label("API key", exact=True)
    expect(key).to_be_visible()
    expect(key).to_have_accessible_description("Optional: only if your server asks for one. Kept in this tab only.")
    card.get_by_label("Base URL", exact=True).fill(vendor.url + "/v1")
    key.fill(KEY)
    vendor.list_models("local-model")
    card.get_by_role("button", name="Test connection").click()
    expect(card.locator("#setup-status")).to_contain_text("Connected to OpenAI-compatible: 1 models",
                                                          timeout=REPLY_TIMEOUT_MS)
    assert vendor.requests[-1].headers["authorization"] == f"Bearer {KEY}"

    # A known service by name: its own address is the default, and it needs a key.
    provider.select_option(label="OpenRouter")
    base = card.get_by_label("Base URL", exact=True)
    expect(base).to_have_attribute("placeholder", "https://openrouter.ai/api/v1")
    key.fill("")
    card.get_by_role("button", name="Start chatting").click()
    expect(card.locator("#setup-status")).to_have_text("Paste your API key first.")
    expect(key).to_be_focused()
    provider.select_option(label="LM Studio")  # a local server: the key is optional again
    expect(base).to_have_attribute("placeholder", "http://localhost:1234/v1")
    expect(key).to_have_accessible_description("Optional: only if your server asks for one. Kept in this tab only.")

    provider.select_option(label="OpenRouter")  # through a proxy (the loopback vendor) at the Base URL typed
    key.fill(KEY)
    card.get_by_label("Model", exact=True).fill("openai/gpt-4o-mini")
    card.get_by_role("button", name="Start chatting").click()
    send(page, "Hello")
    expect(last_reply(page).locator(".content")).to_have_text(expected(recording)["text"], timeout=REPLY_TIMEOUT_MS)
    expect(last_reply(page).locator(".meta")).to_have_text("OpenRouter · openai/gpt-4o-mini")
    assert vendor.model_requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert vendor.model_requests[0].path == "/v1/chat/completions"
    page.context.close()


# ---------------------------------------------------------------------------------------------- errors


def test_a_401_names_its_status_and_opens_settings(browser: Browser, site_url: str, vendor: VendorReplay):
    recording = "openai/error-401-invalid-api-key"
    vendor.script(recording)
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini", name="Work")
    send(page, "Hello")
    wait_stored(page)
    notice = last_reply(page).locator(".notice")
    expect(notice).to_contain_text("401")
    expect(notice).to_contain_text("API key")
    expect(notice).to_contain_text(expected(recording)["error"]["message"][:40])  # the vendor's own words too
    # Another profile is active now; "Open settings" shows the one that failed, its key field ready to type in.
    configure(page, vendor="anthropic", base=vendor.url, key=KEY, model="claude-sonnet-4-5", name="Home",
              new_profile=True)
    notice.get_by_role("button", name="Open settings").click()
    dialog = page.get_by_role("dialog", name="Settings")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_label("API key", exact=True)).to_be_focused()
    expect(dialog.get_by_label("Profile name", exact=True)).to_have_value("Work")
    page.context.close()


def test_a_stale_choose_a_provider_notice_goes_once_a_profile_is_made(browser: Browser, site_url: str):
    """Issue 29 item 11: an error toast whose cause is fixed does not stay behind."""
    page = open_app(browser, site_url)
    wait_ui(page)
    send(page, "Hello")
    toast = page.locator(".toast", has_text="Choose a provider and model in Settings first.")
    expect(toast).to_be_visible()
    card = page.get_by_role("region", name="Connect a model")
    card.get_by_label("Provider", exact=True).select_option("openai")
    card.get_by_label("API key", exact=True).fill(KEY)
    card.get_by_label("Model", exact=True).fill("gpt-4o-mini")
    card.get_by_role("button", name="Start chatting").click()
    expect(card).to_be_hidden()
    expect(toast).to_have_count(0)
    page.context.close()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_vendor_names_the_host_and_the_causes_then_retries(browser: Browser, site_url: str):
    port = closed_port()
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=f"http://127.0.0.1:{port}", key=KEY, model="gpt-4o-mini")
    send(page, "Hello")
    wait_stored(page)
    notice = last_reply(page).locator(".notice")
    expect(notice).to_contain_text(f"127.0.0.1:{port}")
    for cause in ("offline", "CORS", "Base URL"):
        expect(notice).to_contain_text(cause)
    assert "Failed to fetch" not in notice.inner_text()

    # The vendor comes back: Retry sends the same question again and the answer arrives.
    recording = "openai/chat-stream-text-usage"
    vendor = VendorReplay(port=port)
    try:
        vendor.script(recording)
        notice.get_by_role("button", name="Retry").click()
        expect(last_reply(page).locator(".content")).to_have_text(expected(recording)["text"],
                                                                  timeout=REPLY_TIMEOUT_MS)
        assert vendor.model_requests[0].json["messages"][-1]["content"] in (
            "Hello", [{"type": "text", "text": "Hello"}])
    finally:
        vendor.close()
    page.context.close()


def test_after_a_reload_a_key_kept_in_memory_is_asked_for_before_sending(browser: Browser, site_url: str,
                                                                         vendor: VendorReplay):
    """An OpenAI-compatible server may need no key, but this profile was given one: a reload that
    forgot it must not send the next message without it."""
    recording = "openai/chat-stream-text-usage"
    vendor.script(recording, recording)
    page = open_app(browser, site_url)
    configure(page, vendor="openai-compatible", base=vendor.url, key=KEY, model="local-model")
    send(page, "What is the capital of the UK?")
    wait_stored(page)
    assert vendor.model_requests[0].headers["authorization"] == f"Bearer {KEY}"

    page.reload()
    wait_core(page)
    page.get_by_role("button", name="What is the capital of the UK?", exact=True).click()
    send(page, "again")
    ask = page.get_by_role("dialog", name="API key needed")
    expect(ask).to_be_visible()
    assert len(vendor.model_requests) == 1  # nothing went out without the key
    expect(page.get_by_role("textbox", name="Message", exact=True)).to_have_value("again")  # not lost

    ask.get_by_label("API key", exact=True).fill(KEY)
    ask.get_by_role("button", name="Send").click()
    expect(ask).to_be_hidden()
    wait_stored(page)
    assert len(vendor.model_requests) == 2
    assert vendor.model_requests[1].headers["authorization"] == f"Bearer {KEY}"
    expect(page.locator(".transcript li.msg.user .content").last).to_have_text("again")
    page.context.close()


def test_after_a_reload_a_saved_key_asks_for_its_passphrase_before_sending(browser: Browser, site_url: str,
                                                                           vendor: VendorReplay):
    recording = "anthropic/stream-text"
    vendor.script(recording)
    page = open_app(browser, site_url)
    dialog = page.get_by_role("dialog", name="Settings")
    configure_with_saved_key(page, vendor, passphrase="correct horse")
    expect(dialog).to_be_hidden()
    wait_key_saved(page)

    page.reload()
    wait_core(page)
    send(page, "Hello")
    ask = page.get_by_role("dialog", name="API key needed")
    expect(ask).to_be_visible()
    ask.get_by_label("Passphrase", exact=True).fill("wrong")
    ask.get_by_role("button", name="Send").click()
    expect(ask).to_contain_text("does not open the saved key", timeout=30_000)  # PBKDF2, 600k iterations
    assert vendor.model_requests == []
    ask.get_by_label("Passphrase", exact=True).fill("correct horse")
    ask.get_by_role("button", name="Send").click()
    expect(ask).to_be_hidden(timeout=30_000)
    expect(last_reply(page).locator(".content")).to_have_text(expected(recording)["text"], timeout=REPLY_TIMEOUT_MS)
    assert vendor.model_requests[0].headers["x-api-key"] == KEY
    page.context.close()


def configure_with_saved_key(page: Page, vendor: VendorReplay, *, passphrase: str) -> None:
    dialog = page.get_by_role("dialog", name="Settings")
    expect(page.locator("html")).to_have_attribute("data-ui", "ready")
    expect(page.get_by_role("region", name="Connect a model")).to_be_visible()  # first run: the setup card
    page.get_by_role("button", name="Settings", exact=True).click()  # the full dialog, to save the key encrypted
    expect(dialog).to_be_visible()
    dialog.get_by_label("Provider", exact=True).select_option("anthropic")
    dialog.get_by_label("API key", exact=True).fill(KEY)
    dialog.get_by_label("Base URL", exact=True).fill(vendor.url)
    dialog.get_by_label("Model", exact=True).fill("claude-sonnet-4-5")
    dialog.get_by_label("Save the key in this browser, encrypted with a passphrase").check()
    dialog.locator("#passphrase").fill(passphrase)
    dialog.get_by_role("button", name="Save", exact=True).click()


# ---------------------------------------------------------------------------------------------- the first hour
# Issue 29 item 12: small things a user meets in the first hour say what they did.


def test_copy_says_it_copied(browser: Browser, site_url: str, tmp_path: Path):
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site_url.split("#")[0].rstrip("/"))
    page = open_app(browser, site_url, context=context)
    open_long_conversation(page, tmp_path)
    copy = last_reply(page).get_by_role("button", name="Copy", exact=True)
    copy.click()
    expect(last_reply(page).locator(".actions button.copy")).to_have_text("Copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == expected(LONG)["text"]
    expect(last_reply(page).locator(".actions button.copy")).to_have_text("Copy", timeout=10_000)  # for a moment
    page.context.close()


def test_a_new_assistant_is_named_in_the_page_not_in_a_browser_prompt(browser: Browser, site_url: str):
    page = open_app(browser, site_url)
    wait_ui(page)
    asked: list[str] = []
    page.on("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.get_by_role("button", name="Chat settings", exact=True).click()
    page.get_by_role("button", name="Save as new assistant", exact=True).click()
    name = page.get_by_role("textbox", name="Name of the new assistant", exact=True)
    expect(name).to_be_focused()
    expect(name).to_have_value("General 2")
    name.fill("Reviewer")
    name.press("Enter")
    expect(page.get_by_label("Assistant", exact=True)).to_have_value(re.compile(".+"))
    expect(page.locator("#assistant-picker option:checked")).to_have_text("Reviewer")
    expect(name).to_have_count(0)
    # Esc leaves it without making one.
    page.get_by_role("button", name="Save as new assistant", exact=True).click()
    page.get_by_role("textbox", name="Name of the new assistant", exact=True).press("Escape")
    expect(page.get_by_role("textbox", name="Name of the new assistant", exact=True)).to_have_count(0)
    expect(page.locator("#assistant-picker option", has_text="Reviewer 2")).to_have_count(0)
    assert asked == []
    page.context.close()


def test_import_says_how_many_were_skipped_and_why_once(browser: Browser, site_url: str, tmp_path: Path):
    page = open_app(browser, site_url)
    wait_ui(page)
    history = long_history(tmp_path / "history.json", 2)
    choose_file(page, "Import", history)
    expect(page.get_by_text("Imported 1 conversation(s).")).to_be_visible()
    choose_file(page, "Import", history)
    said = page.locator(".toast-text", has_text="mport")
    expect(said).to_have_text(["Nothing imported. 1 conversation(s) skipped, already in this browser."])
    page.context.close()


def test_markdown_export_labels_tool_results_as_tool_output(browser: Browser, site_url: str, tmp_path: Path):
    page = open_app(browser, site_url)
    wait_ui(page)
    open_long_conversation(page, tmp_path, tool=True)
    page.get_by_role("button", name="Export", exact=True).click()
    with page.expect_download() as download:
        page.get_by_role("button", name="This conversation (Markdown)").click()
    markdown = Path(download.value.path()).read_text()
    assert markdown.count("## You") == 6  # the six questions, and not the tool's result
    assert "## Tool output\n\n**Tool result**" in markdown
    page.context.close()


def test_search_opens_the_conversation_at_the_hit_marked(browser: Browser, site_url: str, tmp_path: Path):
    page = open_app(browser, site_url, context=browser.new_context(viewport=DESKTOP))
    wait_ui(page)
    choose_file(page, "Import", long_history(tmp_path / "history.json", 6))
    page.get_by_role("complementary").get_by_role("searchbox", name="Search all messages").fill("Question 2")
    page.locator(".search-results li button.open").first.click()
    hit = page.locator(".transcript li.msg.user", has_text="Question 2")
    expect(hit).to_have_class(re.compile(r"\bsearch-hit\b"))
    expect(hit.locator("mark").first).to_have_text("Question")
    expect(hit).to_be_in_viewport()
    page.wait_for_function(AT_HIT)  # and stays there while the answers around it render
    assert distance_to_bottom(page) > 2
    page.context.close()
