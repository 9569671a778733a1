"""Regenerate the screenshots in docs/screenshots/ from the real built site.

    export ORIZURU_DIST=/tmp/dist-x && python3 build.py build
    ORIZURU_DIST=/tmp/dist-x .venv/bin/python docs/screenshots.py

The Japanese screen needs a CJK font in the machine (Debian: `apt-get install fonts-noto-cjk`).

It starts the relay (with the capitals test MCP server) and the loopback vendor replay of the real
recordings (tests/e2e/vendor_replay.py), then drives Chromium through the main screens: first run,
a streamed reply with markdown, a tool call waiting for approval, the Tools panel, a cut-off reply,
dark mode, Japanese, and phone width.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from conftest import CHROMIUM, CHROMIUM_ARGS, DIST, start_site  # noqa: E402
from journeys import configure, last_reply, send, wait_core, wait_idle  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402
from vendor_replay import VendorReplay  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
SERVER = ROOT / "tests" / "e2e" / "journeys_mcp_server.py"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="orizuru-shots-"))
    config = tmp / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"capitals": {"command": sys.executable, "args": [str(SERVER)]}}}))
    relay, url = start_site(tmp / "relay.log", DIST, "--config", str(config))
    vendor = VendorReplay()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            shoot(browser, url, vendor, "light", {"width": 1280, "height": 800})
            shoot_dark_and_phone(browser, url, vendor)
            browser.close()
    finally:
        vendor.close()
        relay.terminate()
        relay.wait(timeout=10)


def shoot(browser, url, vendor, scheme, viewport) -> None:
    page = browser.new_context(viewport=viewport, color_scheme=scheme).new_page()
    page.goto(url)
    wait_core(page)
    page.screenshot(path=OUT / "first-run-settings.png")
    vendor.script("anthropic/stream-thinking")
    configure(page, vendor="anthropic", base=vendor.url, key="sk-ant-demo", model="claude-sonnet-4-5")
    send(page, "How do I cross the street safely?")
    expect(last_reply(page)).to_have_attribute("data-state", "done", timeout=60_000)
    wait_idle(page)
    page.screenshot(path=OUT / "chat-markdown.png")

    page.get_by_role("button", name="Tools", exact=True).click()
    tools = page.get_by_role("dialog", name="Tools")
    tools.get_by_role("button", name="Connect capitals").click()
    expect(tools.locator(".server .badge").first).to_have_text("connected", timeout=60_000)
    page.screenshot(path=OUT / "tools-panel.png")
    tools.get_by_role("button", name="Close").click()

    page.keyboard.press("Control+k")
    vendor.script("openai/chat-stream-tool-call", "openai/chat-stream-text-usage")
    configure(page, vendor="openai", base=vendor.url, key="sk-demo", model="gpt-4o-mini", name="OpenAI",
              new_profile=True)
    send(page, "What is the capital of the UK?")
    card = page.get_by_role("group", name="Tool get_capital")
    expect(card.get_by_role("button", name="Allow once")).to_be_visible(timeout=60_000)
    page.screenshot(path=OUT / "tool-approval.png")
    card.get_by_role("button", name="Allow once").click()
    expect(last_reply(page)).to_have_attribute("data-state", "done", timeout=60_000)
    card.locator("summary").click()
    page.screenshot(path=OUT / "tool-result.png")

    page.keyboard.press("Control+k")
    vendor.script("anthropic/stream-text", stall_after=5)
    page.get_by_role("combobox", name="Profile").select_option(label="Anthropic · claude-sonnet-4-5")
    send(page, "Give me two numbers")
    expect(last_reply(page).locator(".content")).not_to_have_text("", timeout=60_000)
    page.keyboard.press("Escape")
    expect(last_reply(page)).to_have_attribute("data-state", "interrupted", timeout=60_000)
    page.screenshot(path=OUT / "stopped-reply.png")
    page.get_by_role("button", name="Export", exact=True).click()
    page.screenshot(path=OUT / "export.png")
    page.context.close()


def shoot_dark_and_phone(browser, url, vendor) -> None:
    page = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme="dark").new_page()
    page.goto(url)
    wait_core(page)
    page.get_by_role("dialog", name="Settings").get_by_label("Language").select_option("ja")
    vendor.script("ollama/chat-stream-text")
    configure_ja(page, vendor)
    send_ja(page, "五まで数えて")
    expect(last_reply(page)).to_have_attribute("data-state", "done", timeout=60_000)
    page.screenshot(path=OUT / "phone-dark-ja.png")
    page.get_by_role("button", name="会話一覧を表示").click()
    page.screenshot(path=OUT / "phone-sidebar.png")
    page.context.close()


def configure_ja(page, vendor) -> None:
    dialog = page.get_by_role("dialog", name="設定")
    dialog.get_by_label("プロバイダー", exact=True).select_option("ollama")
    dialog.get_by_label("ベース URL", exact=True).fill(vendor.url)
    dialog.get_by_label("モデル", exact=True).fill("llama3.2")
    dialog.get_by_role("button", name="保存").click()
    expect(dialog).to_be_hidden()


def send_ja(page, text) -> None:
    box = page.get_by_role("textbox", name="メッセージ", exact=True)
    box.fill(text)
    box.press("Enter")


if __name__ == "__main__":
    main()
