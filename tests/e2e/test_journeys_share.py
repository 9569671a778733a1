"""Share a conversation as one web page (#34): what the transcript shows (markdown, code, math, a diagram) as
static markup that runs no script and loads nothing, opened here with every request watched."""

from __future__ import annotations

import re

import pytest
from journeys import REPLY_TIMEOUT_MS, configure, last_reply, open_app, send, wait_idle
from playwright.sync_api import Browser, expect
from vendor_replay import VendorReplay, with_text

pytestmark = pytest.mark.e2e

KEY = "sk-test-share-3e4f5a6b7c8d9e0f"
RECORDING = "openai/chat-stream-text-usage"
REPLY = ("Here is **the plan**.\n\n$$e^{i\\pi} + 1 = 0$$\n\n```python\nprint('hi')\n```\n\n"
         "```mermaid\ngraph TD; Start-->Finish\n```\n\n[docs](https://example.com/docs)\n")


def test_a_conversation_shared_as_a_web_page_shows_the_transcript_and_loads_nothing(
        browser: Browser, site_url: str, vendor: VendorReplay, tmp_path):
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    vendor.script_body("plan", with_text(RECORDING, REPLY), content_type="text/event-stream")
    send(page, "Share-me: make a plan")
    expect(last_reply(page).locator(".katex").first).to_be_visible(timeout=REPLY_TIMEOUT_MS)
    expect(last_reply(page).locator("svg").first).to_be_visible(timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)

    page.get_by_role("button", name="Export").click()
    with page.expect_download() as download:
        page.get_by_role("button", name="This conversation as a web page, to share").click()
    path = tmp_path / "shared.html"
    download.value.save_as(path)
    html = path.read_text(encoding="utf-8")
    assert download.value.suggested_filename.endswith(".html")
    assert "<script" not in html.lower() and KEY not in html
    assert "default-src 'none'" in html
    assert not re.search(r"""\s(?:src|srcset)=["'](?!data:)""", html), "nothing that loads"

    requests: list[str] = []
    viewer = browser.new_context(java_script_enabled=False)
    shown = viewer.new_page()
    shown.on("request", lambda r: requests.append(r.url))
    shown.goto(path.as_uri())
    expect(shown.get_by_role("heading", level=1)).to_have_text("Share-me: make a plan")
    expect(shown.locator(".msg.user")).to_contain_text("Share-me: make a plan")
    expect(shown.locator(".msg.assistant strong")).to_have_text("the plan")
    expect(shown.locator(".msg.assistant .katex").first).to_be_visible()
    expect(shown.locator(".msg.assistant pre code")).to_contain_text("print('hi')")
    expect(shown.locator(".msg.assistant svg").first).to_be_visible()
    expect(shown.get_by_role("link", name="docs")).to_have_attribute("href", "https://example.com/docs")
    expect(shown.get_by_role("button")).to_have_count(0)
    assert requests == [path.as_uri()], requests
    viewer.close()
