"""What a new user meets in the first minutes (issue 16), in real Chromium against the loopback vendor:

- the view follows a streaming reply while the reader is at the bottom, lets go the moment they
  scroll up, and a "Jump to latest" button brings them back; sending always shows the sent message,
  and a finished reply leaves the view at the bottom.

Scroll positions are read from the transcript element (scrollTop, scrollHeight, clientHeight).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from journeys import (
    REPLY_TIMEOUT_MS,
    choose_file,
    configure,
    last_reply,
    open_app,
    send,
    wait_idle,
)
from playwright.sync_api import Browser, Page, expect
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


def distance_to_bottom(page: Page) -> float:
    return page.evaluate(DISTANCE)


def reading(page: Page) -> dict[str, object]:
    """The block of text in the middle of the transcript, and where it is on screen."""
    return page.evaluate("""() => {
      const r = document.getElementById('transcript').getBoundingClientRect();
      const el = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)?.closest('.content > *, li');
      return {text: el.textContent.slice(0, 120), top: Math.round(el.getBoundingClientRect().top)};
    }""")


def long_history(path: Path, exchanges: int) -> Path:
    """An export file with one conversation of ``exchanges`` long answers (far taller than a screen)."""
    answer = expected(LONG)["text"]
    messages, parent = [], None
    for i in range(exchanges):
        for role, text in (("user", f"Question {i + 1}"), ("assistant", answer)):
            mid = f"m{len(messages)}"
            messages.append({"id": mid, "parent_id": parent, "role": role, "parts": [{"type": "text", "text": text}],
                             "status": "complete", "created": 1_700_000_000_000 + len(messages)})
            parent = mid
    path.write_text(json.dumps({"format": "orizuru.conversations", "version": 1, "exported_at": "2025-01-01T00:00:00Z",
                                "conversations": [{"id": "long", "title": "Street safety", "created": 1_700_000_000_000,
                                                   "updated": 1_700_000_000_000, "current_leaf": parent,
                                                   "messages": messages}]}))
    return path


def open_long_conversation(page: Page, tmp_path: Path) -> None:
    toggle = page.get_by_role("button", name="Show conversations")
    if toggle.is_visible():  # phone width: the sidebar slides in
        toggle.click()
    choose_file(page, "Import", long_history(tmp_path / "history.json", 6))
    sidebar = page.get_by_role("complementary")
    sidebar.get_by_role("button", name="Street safety", exact=True).click()
    expect(page.locator(".transcript li.msg.assistant")).to_have_count(6)
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
    page.wait_for_function(AT_BOTTOM)  # an opened conversation shows its end
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
    page.wait_for_function(
        """() => {
          const t = document.getElementById('transcript');
          const reply = [...t.querySelectorAll('li.msg.assistant')].pop();
          return reply.dataset.state === 'streaming' && reply.getBoundingClientRect().height > t.clientHeight
            && t.scrollHeight - t.scrollTop - t.clientHeight <= 2;
        }""", timeout=REPLY_TIMEOUT_MS)

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
    page.wait_for_function(AT_BOTTOM)
    expect(jump).to_be_hidden()
    expect(last_reply(page).locator(".usage")).to_be_in_viewport()
    page.context.close()


def test_each_finished_reply_leaves_the_view_at_the_bottom(browser: Browser, site_url: str, vendor: VendorReplay,
                                                           tmp_path: Path):
    page = open_app(browser, site_url, context=browser.new_context(viewport=DESKTOP))
    configure(page, vendor="gemini", base=vendor.url, key=KEY, model="gemini-2.5-pro")
    open_long_conversation(page, tmp_path)
    page.wait_for_function(AT_BOTTOM)
    for question in ("How do I cross the street safely?", "And at night?"):
        vendor.script(LONG)
        send(page, question)
        expect(last_reply(page).locator(".content")).to_contain_text("crosswalk", timeout=REPLY_TIMEOUT_MS)
        wait_stored(page)
        page.wait_for_function(AT_BOTTOM)
        expect(page.locator(".transcript li.msg.user").last).to_contain_text(question)
        expect(last_reply(page).locator(".usage")).to_be_in_viewport()
        assert distance_to_bottom(page) <= 2
    page.context.close()
