"""Regenerate the screenshots in docs/screenshots/ from the real built site.

    python3 build.py build
    ORIZURU_DIST=$PWD/dist .venv/bin/python docs/screenshots.py [desktop-light ...]

The Japanese screen needs a CJK font in the machine (Debian: `apt-get install fonts-noto-cjk`).

It starts the relay (with the capitals test MCP server) and the loopback vendor replay of the real
recordings (tests/e2e/vendor_replay.py), then drives Chromium as a new user does, at desktop (1280x800) and
phone (390x844) width, in light and dark, through the main screens. Each is saved as
``<device>-<scheme>-<screen>.png`` (device scale 1), where screen is one of SCREENS.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from conftest import CHROMIUM, CHROMIUM_ARGS, DIST, start_site  # noqa: E402
from journeys import REPLY_TIMEOUT_MS, configure, last_reply, open_app, open_settings, send, wait_idle  # noqa: E402
from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402
from test_journeys_documents import PASTE, a_file, data_transfer  # noqa: E402
from test_journeys_prompts import SLASH_PROMPTS, save_prompts  # noqa: E402
from test_journeys_tools import SSE, TEXT_TURN, TOOL_TURN, connect_relay_server  # noqa: E402
from vendor_replay import VendorReplay, with_text  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
SERVER = ROOT / "tests" / "e2e" / "journeys_mcp_server.py"
DEVICES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
SCHEMES = ("light", "dark")
SCREENS = ("first-run", "chat", "mermaid", "tools-panel", "tool-turn-approval", "tool-turn-done", "stopped",
           "slash-menu", "attachments", "sidebar", "compare", "ja")

MARKDOWN = r"""Three common sorts compare like this:

| Algorithm | Average | Worst | Stable |
|---|---|---|---|
| Quicksort | $O(n \log n)$ | $O(n^2)$ | no |
| Merge sort | $O(n \log n)$ | $O(n \log n)$ | yes |
| Insertion sort | $O(n^2)$ | $O(n^2)$ | yes |

Merge sort in Python:

```python
def merge_sort(xs: list[int]) -> list[int]:
    if len(xs) <= 1:
        return xs
    mid = len(xs) // 2
    left, right = merge_sort(xs[:mid]), merge_sort(xs[mid:])
    return sorted(left + right)  # a real merge is linear
```

Its running time follows from the recurrence

$$T(n) = 2\,T\!\left(\frac{n}{2}\right) + O(n) = O(n \log n)$$
"""

MERMAID = """Here is the agent's loop:

```mermaid
flowchart LR
  U[Your message] --> M{Model}
  M -->|tool call| A[Approval]
  A -->|allowed| T[MCP tool]
  T -->|result| M
  M -->|answer| R[Reply]
```

Each tool call waits for your approval unless you trust its server."""

STOPPED = ("Crossing a street safely comes down to a few habits:\n\n1. **Stop at the kerb** and look both ways, "
           "then once more.\n2. **Make eye contact** with drivers before you step out.\n3. **Keep looking** "
           "while you cross; do not run.\n4. ")

JAPANESE = """東京の主な展望台は次のとおりです。

| 展望台 | 高さ | 特徴 |
|---|---|---|
| 東京スカイツリー | 450 m | 日本一高い展望回廊 |
| 東京タワー | 250 m | 夜のライトアップ |
| 渋谷スカイ | 229 m | 屋上の開放感 |

晴れた日には**富士山**も見えます。"""


def main() -> None:
    only = set(sys.argv[1:])
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="orizuru-shots-"))
    config = tmp / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"capitals": {"command": sys.executable, "args": [str(SERVER)]}}}))
    relay, url = start_site(tmp / "relay.log", DIST, "--config", str(config))
    vendor = VendorReplay()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for device in DEVICES:
                for scheme in SCHEMES:
                    if not only or f"{device}-{scheme}" in only:
                        tour(browser, url, vendor, device, scheme)
            browser.close()
    finally:
        vendor.close()
        relay.terminate()
        relay.wait(timeout=10)


def tour(browser: Browser, url: str, vendor: VendorReplay, device: str, scheme: str) -> None:
    """One new user's first session at this size and scheme, a screenshot at each main screen."""
    context = browser.new_context(viewport=DEVICES[device], color_scheme=scheme, device_scale_factor=1)
    page = open_app(browser, url, context=context)

    def shot(screen: str) -> None:
        assert screen in SCREENS, screen
        settle(page)
        page.screenshot(path=OUT / f"{device}-{scheme}-{screen}.png")
        print(f"{device}-{scheme}-{screen}.png", flush=True)

    first_run(page, vendor, shot)
    reply(page, vendor, "Compare quicksort, merge sort and insertion sort", MARKDOWN)
    shot("chat")
    new_chat(page)
    reply(page, vendor, "Draw the agent loop", MERMAID)
    expect(last_reply(page).locator(".md-diagram")).to_be_visible(timeout=REPLY_TIMEOUT_MS)
    shot("mermaid")
    tool_turn(page, vendor, shot)
    stopped(page, vendor)
    shot("stopped")
    slash_menu(page, shot)
    attachments(page)
    shot("attachments")
    sidebar(page, shot)
    compare(page, vendor, shot)
    japanese(page, vendor)
    shot("ja")
    context.close()


def settle(page: Page) -> None:
    """Wait for what is moving (the drawer sliding, a colour easing in) and the fonts, then take the picture."""
    page.evaluate("""async () => {
      await document.fonts.ready;
      await Promise.all(document.getAnimations().map((a) => a.finished.catch(() => null)));
    }""")


def first_run(page: Page, vendor: VendorReplay, shot: Callable[[str], None]) -> None:
    card = page.get_by_role("region", name="Connect a model")
    expect(card).to_be_visible()
    card.get_by_label("Provider", exact=True).select_option(label="OpenRouter")
    card.get_by_label("Model", exact=True).fill("openai/gpt-4o-mini")
    shot("first-run")
    card.get_by_label("API key", exact=True).fill("sk-or-demo-not-a-real-key")
    card.get_by_label("Base URL", exact=True).fill(vendor.url + "/v1")  # the loopback vendor in place of OpenRouter
    card.get_by_role("button", name="Start chatting").click()
    expect(card).to_be_hidden()


def reply(page: Page, vendor: VendorReplay, question: str, answer: str, *, stall: bool = False) -> None:
    """Ask ``question``; the vendor (a real OpenAI-format stream) answers ``answer``."""
    vendor.script_body("screenshot", with_text(TEXT_TURN, answer), content_type=SSE,
                       stall_after=3 if stall else None)
    send(page, question)
    if not stall:
        expect(last_reply(page)).to_have_attribute("data-state", "done", timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)


def new_chat(page: Page) -> None:
    page.keyboard.press("Control+k")
    expect(page.locator(".transcript li.msg")).to_have_count(0)


def tool_turn(page: Page, vendor: VendorReplay, shot: Callable[[str], None]) -> None:
    connect_relay_server(page)  # connects capitals and closes the panel: open it again to show it
    page.get_by_role("button", name="Tools", exact=True).click()
    tools = page.get_by_role("dialog", name="Tools")
    expect(tools.locator(".server .badge").first).to_have_text("connected")
    shot("tools-panel")
    tools.get_by_role("button", name="Close").click()
    new_chat(page)
    vendor.script(TOOL_TURN, TEXT_TURN)
    send(page, "What is the capital of the UK?")
    card = last_reply(page).get_by_role("group", name="Tool get_capital")
    allow = card.get_by_role("button", name="Allow once")
    expect(allow).to_be_visible(timeout=REPLY_TIMEOUT_MS)
    shot("tool-turn-approval")
    allow.click()
    expect(last_reply(page)).to_have_attribute("data-state", "done", timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    card.locator("summary").first.click()  # open the card: its arguments and result
    shot("tool-turn-done")


def stopped(page: Page, vendor: VendorReplay) -> None:
    new_chat(page)
    reply(page, vendor, "How do I cross the street safely?", STOPPED, stall=True)
    expect(last_reply(page).locator(".content")).to_contain_text("Keep looking", timeout=REPLY_TIMEOUT_MS)
    page.get_by_role("button", name="Stop", exact=True).click()
    expect(last_reply(page)).to_have_attribute("data-state", "interrupted", timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)


def slash_menu(page: Page, shot: Callable[[str], None]) -> None:
    new_chat(page)
    save_prompts(page, SLASH_PROMPTS)
    no_toasts(page)
    box = page.get_by_role("textbox", name="Message", exact=True)
    box.press_sequentially("/")
    expect(page.get_by_role("listbox", name="Prompts").get_by_role("option")).to_have_count(len(SLASH_PROMPTS))
    shot("slash-menu")
    box.press("Escape")
    box.fill("")


def attachments(page: Page) -> None:
    box = page.get_by_role("textbox", name="Message", exact=True)
    box.fill("What do the icon and these numbers say?")
    box.evaluate(PASTE, data_transfer(page, a_file(ROOT / "web" / "icons" / "icon-192.png", "image/png")))
    expect(page.locator("#attachments img")).to_have_attribute("alt", "icon-192.png")
    documents = ROOT / "tests" / "fixtures" / "documents"
    box.evaluate(PASTE, data_transfer(page, a_file(documents / "sales.csv", "text/csv")))
    expect(page.locator("#attachments .attachment")).to_have_count(2)
    no_toasts(page)


def no_toasts(page: Page) -> None:
    """The "Saved …" notes go by themselves after a few seconds: wait, as a reader would, for a clear screen."""
    expect(page.locator(".toast")).to_have_count(0, timeout=15_000)


def sidebar(page: Page, shot: Callable[[str], None]) -> None:
    toggle = page.get_by_role("button", name="Show conversations")
    if toggle.is_visible():  # phone width: the conversations slide in over the dimmed chat
        toggle.click()
    side = page.locator("#sidebar")
    expect(side).to_be_visible()
    side.get_by_role("button", name="Pin: What is the capital of the UK?").click()
    expect(side.locator(".group-label").first).to_have_text("Pinned")
    page.mouse.move(1, 1)  # no row pointed at
    shot("sidebar")
    if toggle.is_visible():
        page.keyboard.press("Escape")
        expect(page.locator("#sidebar")).to_be_hidden()


COMPARE = ("Three easy first hikes near Tokyo:\n\n1. **Mount Takao**: cable car or trail, about 3 hours.\n"
           "2. **Mount Mitake**: shrines and a rock garden.\n"
           "3. **Kamakura's Daibutsu trail**: short, ends at the Buddha.")
COMPARE_OTHER = ("For a first hike, **Mount Takao** is the classic: trail 1 is paved, and the summit looks at Fuji "
                 "on a clear day. Go on a weekday morning to miss the crowds.")


def compare(page: Page, vendor: VendorReplay, shot: Callable[[str], None]) -> None:
    """Compare: the question to two profiles at once, each at its own loopback vendor, both replies in."""
    new_chat(page)
    page.locator("#attachments .attachment button").first.click()  # the attachments were for the last screen
    page.locator("#attachments .attachment button").first.click()
    other = VendorReplay()
    try:
        configure(page, vendor="openai", base=other.url, key="sk-demo-not-a-real-key", model="gpt-4o", name="OpenAI",
                  new_profile=True)
        vendor.script_body("screenshot", with_text(TEXT_TURN, COMPARE), content_type=SSE)
        other.script_body("screenshot", with_text(TEXT_TURN, COMPARE_OTHER), content_type=SSE)
        page.get_by_role("button", name="Compare", exact=True).click()
        for box in page.locator(".compare-choices input[type=checkbox]").all():
            box.check()
        send(page, "Where should I go for a first hike near Tokyo?")
        expect(page.locator(".compare-pick")).to_have_count(2, timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        no_toasts(page)
        shot("compare")
    finally:
        other.close()
    page.get_by_role("button", name="Compare", exact=True).click()  # closed again, and back to the first profile
    page.get_by_role("combobox", name="Profile").select_option(index=0)


def japanese(page: Page, vendor: VendorReplay) -> None:
    """Settings → Language → 日本語, then a chat in Japanese."""
    open_settings(page).get_by_label("Language").select_option("ja")
    page.get_by_role("dialog", name="設定").get_by_role("button", name="閉じる").click()
    page.keyboard.press("Control+k")
    expect(page.locator(".transcript li.msg")).to_have_count(0)
    vendor.script_body("screenshot", with_text(TEXT_TURN, JAPANESE), content_type=SSE)
    box = page.get_by_role("textbox", name="メッセージ", exact=True)
    box.fill("東京で景色のいい展望台は？")
    box.press("Enter")
    expect(last_reply(page)).to_have_attribute("data-state", "done", timeout=REPLY_TIMEOUT_MS)


if __name__ == "__main__":
    main()
