"""Settings, Python tools, images and conventions: a key saved encrypted and unlocked after a reload,
a Python function from the editor run as a tool (in the code interpreter's sandbox), an attached image sent as base64,
Japanese UI, Ctrl+K, the phone-width layout, and remote images in replies loaded one at a time or
always for a host, the hosts listed in Settings."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from journeys import (
    BOOT_TIMEOUT_MS,
    REPLY_TIMEOUT_MS,
    browser_storage_dump,
    choose_file,
    configure,
    last_reply,
    open_app,
    open_settings,
    send,
    wait_core,
    wait_idle,
    wait_key_saved,
)
from playwright.sync_api import Browser, expect
from test_render import ForeignHost
from vendor_replay import VendorReplay, expected, with_text

pytestmark = pytest.mark.e2e

KEY = "sk-ant-test-saved-3c5e7a9b1d2f"
PASSPHRASE = "correct horse battery staple"
# A 1x1 PNG.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAA"
                       "AABJRU5ErkJggg==")


def fill_encrypted_profile(dialog, vendor: VendorReplay) -> None:
    """An Anthropic profile on the replay vendor, its key to be saved encrypted with PASSPHRASE (not saved yet)."""
    dialog.get_by_label("Provider", exact=True).select_option("anthropic")
    dialog.get_by_label("API key", exact=True).fill(KEY)
    dialog.get_by_label("Base URL", exact=True).fill(vendor.url)
    dialog.get_by_label("Model", exact=True).fill("claude-sonnet-4-5")
    dialog.get_by_label("Save the key in this browser, encrypted with a passphrase").check()
    dialog.get_by_role("textbox", name="Passphrase", exact=True).fill(PASSPHRASE)


def test_a_saved_key_is_encrypted_and_unlocked_with_the_passphrase(browser: Browser, site_url: str,
                                                                    vendor: VendorReplay):
    vendor.script("anthropic/stream-text")
    page = open_app(browser, site_url)
    dialog = open_settings(page)
    fill_encrypted_profile(dialog, vendor)
    dialog.get_by_role("button", name="Save", exact=True).click()
    expect(dialog).to_be_hidden()
    wait_key_saved(page)  # PBKDF2 with 600k iterations takes a moment
    dump = browser_storage_dump(page)
    assert "orizuru.secret" in dump  # the encrypted record is there...
    assert KEY not in dump and PASSPHRASE not in dump  # ...the key and the passphrase are not

    page.reload()
    wait_core(page)
    send(page, "Two numbers, please")
    ask = page.get_by_role("dialog", name="API key needed")  # the passphrase can be given there, or in Settings
    expect(ask).to_contain_text("saved encrypted")
    ask.get_by_role("button", name="Open settings").click()
    dialog.get_by_role("textbox", name="Passphrase").first.fill("wrong passphrase")
    dialog.get_by_role("button", name="Unlock saved key").click()
    expect(dialog.locator("#settings-status")).to_contain_text("does not open", timeout=30_000)
    dialog.locator("#unlock-passphrase").fill(PASSPHRASE)
    dialog.get_by_role("button", name="Unlock saved key").click()
    expect(dialog.locator("#settings-status")).to_contain_text("unlocked", timeout=30_000)
    dialog.get_by_role("button", name="Close").click()
    page.get_by_role("button", name="Send", exact=True).click()  # the typed text was kept
    expect(last_reply(page).locator(".content")).to_have_text(expected("anthropic/stream-text")["text"],
                                                              timeout=REPLY_TIMEOUT_MS)
    assert vendor.model_requests[0].headers["x-api-key"] == KEY
    page.context.close()


# Holds the passphrase's key derivation until the test releases it, and fails the profile's write while asked to:
# a slow save and a failed one, as a user may meet them.
HOLD_SAVES = """
const derive = crypto.subtle.deriveKey.bind(crypto.subtle);
crypto.subtle.deriveKey = async (...args) => { await window.__hold; return derive(...args); };
const put = IDBObjectStore.prototype.put;
IDBObjectStore.prototype.put = function (...args) {
  if (this.name === "profiles" && window.__failProfiles) {
    throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
  }
  return put.apply(this, args);
};
"""


def test_settings_close_at_once_save_behind_and_a_failed_save_reopens_them_with_the_reason(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """Issue 29 item 11: what is typed while the key is encrypted and written goes to the page, not the dialog."""
    context = browser.new_context()
    context.add_init_script(HOLD_SAVES)
    page = open_app(browser, site_url, context=context)
    dialog = open_settings(page)
    fill_encrypted_profile(dialog, vendor)
    page.evaluate("() => { window.__failProfiles = true; window.__hold = new Promise((r) => (window.__release = r)); }")
    dialog.get_by_role("button", name="Save", exact=True).click()
    expect(dialog).to_be_hidden()  # while the key is still being encrypted
    box = page.get_by_role("textbox", name="Message", exact=True)
    box.press_sequentially("typed while saving")
    expect(box).to_have_value("typed while saving")

    page.evaluate("() => window.__release()")  # encrypted; the write fails: the dialog comes back and says why
    expect(dialog).to_be_visible(timeout=30_000)
    expect(dialog.locator("#settings-status")).to_have_text("Not saved: The quota has been exceeded.")
    expect(dialog.get_by_label("Model", exact=True)).to_have_value("claude-sonnet-4-5")  # nothing typed is lost
    expect(box).to_have_value("typed while saving")

    page.evaluate("() => { window.__failProfiles = false; }")
    dialog.get_by_role("button", name="Save", exact=True).click()
    expect(dialog).to_be_hidden()
    wait_key_saved(page)
    stored = page.evaluate("""() => new Promise((ok) => { indexedDB.open("orizuru").onsuccess = (e) => {
      const r = e.target.result.transaction("profiles").objectStore("profiles").getAll();
      r.onsuccess = () => ok(r.result.map((p) => [p.model, Boolean(p.key)])); }; })""")
    assert stored == [["claude-sonnet-4-5", True]]  # one profile, the retry of the same one
    page.context.close()


PYTHON_TOOL = '''
def get_capital(country: str) -> str:
    """The capital city of a country."""
    return {"UK": "London"}.get(country, "unknown") + " (from a Python tool in the page)"
'''


def test_a_python_function_from_the_editor_runs_as_a_tool(browser: Browser, site_url: str, vendor: VendorReplay):
    vendor.script("openai/chat-stream-tool-call", "openai/chat-stream-text-usage")
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key="sk-py", model="gpt-4o-mini")
    page.get_by_role("button", name="Tools", exact=True).click()
    tools = page.get_by_role("dialog", name="Tools")
    source = tools.get_by_role("textbox", name="Python source")
    source.fill("def broken(:\n    pass\n")
    tools.get_by_role("button", name="Save Python tools").click()
    # Defining a tool starts the code interpreter's sandbox (a second Pyodide) on its first use.
    expect(tools.locator("#python-status")).to_contain_text("line 1", timeout=BOOT_TIMEOUT_MS)  # names the line
    source.fill(PYTHON_TOOL)
    tools.get_by_role("button", name="Save Python tools").click()
    expect(tools.locator("#python-status")).to_have_text("1 tool(s): get_capital")
    tools.get_by_role("button", name="Close").click()

    send(page, "What is the capital of the UK?")
    card = page.get_by_role("group", name="Tool get_capital")
    # The user's own function runs without asking (the policy's default for the user's own tools).
    expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
    expect(card.locator(".tool-result")).to_contain_text("London (from a Python tool in the page)")
    expect(last_reply(page).locator(".content")).to_have_text(expected("openai/chat-stream-text-usage")["text"],
                                                              timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    # Saved with the profile: after a reload the tool is back without opening the editor.
    vendor.script("openai/chat-stream-tool-call", "openai/chat-stream-text-usage")
    page.reload()
    wait_core(page)
    configure(page, vendor="openai", base=vendor.url, key="sk-py", model="gpt-4o-mini")
    send(page, "Again?")
    card = page.get_by_role("group", name="Tool get_capital")
    expect(card.locator(".tool-result")).to_contain_text("from a Python tool in the page", timeout=REPLY_TIMEOUT_MS)
    page.context.close()


def test_an_attached_image_goes_to_the_vendor_as_base64(browser: Browser, site_url: str, vendor: VendorReplay,
                                                        tmp_path: Path):
    vendor.script("openai/chat-stream-text-usage")
    image = tmp_path / "dot.png"
    image.write_bytes(PNG)
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key="sk-img", model="gpt-4o-mini")
    choose_file(page, "Attach", image)
    expect(page.get_by_role("button", name="Remove dot.png")).to_be_visible()
    send(page, "What is in this image?")
    expect(page.locator(".transcript li.msg.user img.thumb")).to_have_count(1)
    wait_idle(page)
    content = vendor.model_requests[0].json["messages"][-1]["content"]
    urls = [part["image_url"]["url"] for part in content if part.get("type") == "image_url"]
    assert urls == ["data:image/png;base64," + base64.b64encode(PNG).decode()]
    page.context.close()


def test_japanese_ui_shortcuts_and_phone_width(browser: Browser, site_url: str, vendor: VendorReplay):
    vendor.script("openai/chat-stream-text-usage")
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    page = open_app(browser, site_url, context=context)
    configure(page, vendor="openai", base=vendor.url, key="sk-ja", model="gpt-4o-mini")
    # Phone width: the sidebar is off-screen until asked for, the message box and Send fit.
    assert page.get_by_role("button", name="Send", exact=True).bounding_box()["x"] + 10 < 390
    expect(page.get_by_role("button", name="New chat")).not_to_be_in_viewport()
    page.get_by_role("button", name="Show conversations").click()
    expect(page.get_by_role("button", name="New chat")).to_be_in_viewport()
    page.keyboard.press("Escape")
    expect(page.get_by_role("button", name="New chat")).not_to_be_in_viewport()

    send(page, "Shift+Enter makes a new line")
    wait_idle(page)
    box = page.get_by_role("textbox", name="Message", exact=True)
    box.press("Shift+Enter")
    expect(box).to_have_value("\n")  # a new line, nothing sent
    assert len(vendor.model_requests) == 1
    box.fill("")
    page.keyboard.press("Control+k")
    expect(page.locator(".transcript li.msg")).to_have_count(0)

    page.get_by_role("button", name="Settings", exact=True).click()
    page.get_by_role("dialog", name="Settings").get_by_label("Language").select_option("ja")
    page.get_by_role("dialog", name="設定").get_by_role("button", name="閉じる").click()
    expect(page.locator("html")).to_have_attribute("lang", "ja")
    expect(page.get_by_role("textbox", name="メッセージ", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="送信", exact=True)).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("準備完了")
    page.reload()  # the choice is remembered
    # (The closed sidebar is hidden at phone width, New chat with it: a visible label tells.)
    expect(page.get_by_role("button", name="送信", exact=True)).to_be_visible()
    page.context.close()


# --- remote images in replies (SECURITY.md T-X11) -----------------------------------------------------

def test_load_this_image_is_one_image_always_is_the_host_and_settings_lists_and_removes_hosts(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """One "Load this image" click loads that image only, for this visit; "Always load images from
    <host>" loads every image of the host and is kept; Settings lists the kept hosts, and removing one
    brings the placeholders back at once and after a reload."""
    foreign = ForeignHost()
    try:
        text = f"Two charts: ![first chart]({foreign.url}/first.png) and ![second chart]({foreign.url}/second.png)"
        vendor.script_body("two images", with_text("openai/chat-stream-text-usage", text),
                           content_type="text/event-stream; charset=utf-8")
        page = open_app(browser, site_url)
        configure(page, vendor="openai", base=vendor.url, key="sk-images", model="gpt-4o-mini")
        send(page, "Show me two charts")
        wait_idle(page)
        dialog = page.get_by_role("dialog", name="Settings")

        def placeholders():
            return last_reply(page).locator(".md-image-placeholder")

        def images():
            return last_reply(page).locator("img.md-image")

        def reopen() -> None:
            page.reload()
            wait_core(page)
            page.get_by_role("button", name="Show me two charts", exact=True).click()
            expect(last_reply(page).locator(".content")).to_contain_text("Two charts")

        def open_settings():
            page.get_by_role("button", name="Settings", exact=True).click()
            expect(dialog).to_be_visible()
            return dialog.get_by_role("list", name="Hosts that always load images")

        expect(placeholders()).to_have_count(2)
        page.wait_for_timeout(300)
        assert foreign.requests == []

        # One image: that one only, nothing kept.
        placeholders().filter(has_text="first chart").get_by_role("button", name="Load this image").click()
        expect(images()).to_have_count(1)
        expect(images()).to_have_attribute("alt", "first chart")
        expect(images()).to_have_attribute("src", re.compile(r"^blob:"))
        expect(placeholders()).to_have_count(1)
        expect(placeholders()).to_contain_text("second chart")
        page.wait_for_timeout(300)
        assert foreign.requests == ["/first.png"]
        hosts = open_settings()
        expect(hosts.get_by_role("listitem")).to_have_count(0)
        expect(dialog.get_by_text("No hosts: every image asks before it loads.")).to_be_visible()
        dialog.get_by_role("button", name="Close").click()
        reopen()  # the click was for this visit
        expect(placeholders()).to_have_count(2)

        # The host, always: every image of it, kept across a reload and listed in Settings.
        placeholders().filter(has_text="second chart").get_by_role(
            "button", name=f"Always load images from {foreign.host}").click()
        expect(images()).to_have_count(2)
        expect(placeholders()).to_have_count(0)
        reopen()
        expect(images()).to_have_count(2)
        hosts = open_settings()
        expect(hosts.get_by_role("listitem")).to_have_text([re.compile(re.escape(foreign.host))])

        # Removed in Settings: the placeholders are back at once, and after a reload, with no request.
        hosts.get_by_role("button", name=f"Remove {foreign.host}").click()
        expect(hosts.get_by_role("listitem")).to_have_count(0)
        dialog.get_by_role("button", name="Close").click()
        expect(placeholders()).to_have_count(2)
        expect(images()).to_have_count(0)
        asked = len(foreign.requests)
        reopen()
        expect(placeholders()).to_have_count(2)
        page.wait_for_timeout(300)
        assert len(foreign.requests) == asked
        assert page.evaluate("() => JSON.parse(localStorage.getItem('orizuru.imageHosts') ?? '[]')") == []
        page.context.close()
    finally:
        foreign.close()


def test_the_provider_list_is_the_cores_catalogue(browser: Browser, site_url: str):
    """No vendor list is written out in the page: Settings offers what the adapters declare, in Japanese too."""
    from pycore.adapters import catalogue

    page = open_app(browser, site_url)
    settings = open_settings(page)
    provider = settings.get_by_label("Provider", exact=True)
    options = provider.locator("option")
    assert options.evaluate_all("(os) => os.map((o) => o.value)") == [v.id for v in catalogue()]
    assert options.evaluate_all("(os) => os.map((o) => o.textContent)") == [v.label for v in catalogue()]
    page.get_by_label("Language").select_option("ja")
    compatible = page.locator("#provider option[value='openai-compatible']")
    expect(compatible).to_have_text("OpenAI 互換")  # a translation where there is one
    expect(page.locator("#provider option").first).to_have_text("OpenAI")
    page.context.close()
