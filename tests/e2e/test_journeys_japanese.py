"""The Japanese UI has no English left in it (issue 29 item 15).

A user switches Settings → Language to 日本語, then goes everywhere a first visit can reach: the main
screen and the first-run card, Settings, the assistant picker and Chat settings, Tools (with an MCP server
added), the prompt library, a conversation's row buttons in the sidebar and its folder field, a reply with a
tool card (opened) and a reply with an error notice. On each screen every visible text node, and every
placeholder, title and aria-label of a rendered element, is read; a run of ASCII letters that is an English
word fails the test, naming the screen, the element and the string. What is not ours to translate is
allowed: the names in ``PROPER_NAMES`` (vendors, formats, keys), identifiers and addresses (anything with a
digit, ``_``, ``.``, ``/``, ``:`` or ``@``: model ids, tool names, URLs), and the content the test put there
or the vendor and server sent (``content``), which is removed from a string before it is read.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from journeys import REPLY_TIMEOUT_MS, last_reply, open_app, open_settings
from journeys_tool_servers import serve_tools
from journeys_webdav_server import PASSWORD, USER, serve_webdav
from playwright.sync_api import Browser, Page, expect
from test_journeys_tool_cards import TOOL_TURN, origin
from vendor_replay import VendorReplay, expected

from pycore.adapters import catalogue

pytestmark = pytest.mark.e2e

ERROR_TURN = "openai/error-401-invalid-api-key"
QUESTION = "英国の首都は？"  # the user's own words: Japanese, so they need no allowance
PROPER_NAMES = frozenset({
    "Orizuru", "OpenAI", "Responses", "Anthropic", "Gemini", "Ollama", "Python", "Pyodide", "PyPI", "micropip", "numpy",
    "pandas", "MCP", "JSON", "RPC", "Markdown", "CSV", "PDF", "API", "URL", "URI", "HTTP", "HTTPS", "OAuth", "KaTeX",
    "docstring", "English",  # (the language picker names each language in its own language)
    "Authorization", "Bearer",  # (an HTTP header and its auth scheme, named as they are sent)
    "ID",  # (as written in Japanese too)
    "WebDAV", "Nextcloud", "ownCloud", "Synology", "Fastmail", "Files", "Dropbox", "Google", "Drive", "iCloud",
    "OneDrive",  # (a protocol and the services sync works with, by their own names)
    "Enter", "Shift", "Esc", "Ctrl", "Cmd", "K", "ms", "s", "B",
    "USD", "EUR", "JPY",  # (ISO 4217 codes, typed as they are: Settings → Costs' currency)
    "SVG", "artifact"}) | frozenset(  # (a format; the `artifact` tool, by the name the model calls it)
    # The vendors and services by their own names, as the adapters' catalogue declares them ("OpenAI-compatible"
    # is a description, and translated: not among them).
    word for vendor in catalogue() if vendor.id != "openai-compatible"
    for word in re.findall(r"[A-Za-z]+", vendor.label))
# What the MCP server of the test chose (its name, its tools' names and descriptions): not ours to translate.
SERVER_CONTENT = ("capitals-A", "The capital city of a country.", "Save a note.", "Adds a tool.", "grow", "demo")
# A model id, a tool name, a URL, a path, a {{variable}}: a digit, _, /, @ or {, or a . or : inside it (a word
# that only ends a sentence or heads a label, "Settings." or "Select:", is still a word).
IDENTIFIER = re.compile(r"\S*(?:[\d_/@{]|[.:](?=\S))\S*")
QUOTED = re.compile(r"`[^`]*`|\[redacted\]")  # a command or a marker quoted as it is typed or shown
GLOSS = re.compile(r"[(（][A-Za-z ]+[)）]")  # the original term beside its translation: 温度 (Temperature)
WORD = re.compile(r"[A-Za-z]+")
LITERAL = "pre, code"  # code and data (a tool's arguments, a server's command) are shown as they are

# Every visible text node, and the placeholder / title / aria-label of every rendered element, under the
# document: [{where, text}]. Options are read from the visible <select> that holds them.
COLLECT = """(literal) => {
  const shown = (el) => el.checkVisibility({ visibilityProperty: true });
  const where = (el) => el.tagName.toLowerCase() + (el.id ? `#${el.id}` : "") +
    [...el.classList].map((c) => `.${c}`).join("");
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (el && node.data.trim() && el.tagName !== "OPTION" && !el.closest(literal) && shown(el)) {
      out.push({ where: where(el), text: node.data });
    }
  }
  for (const el of document.body.querySelectorAll("*")) {
    if (el.tagName === "OPTION" || el.closest(literal) || !shown(el)) continue;
    for (const name of ["placeholder", "title", "aria-label"]) {
      const value = el.getAttribute(name);
      if (value) out.push({ where: `${where(el)}[${name}]`, text: value });
    }
    if (el.tagName === "SELECT") for (const o of el.options) out.push({ where: `${where(el)} option`, text: o.text });
  }
  return out;
}"""


def english(text: str, content: tuple[str, ...]) -> list[str]:
    """The English words of ``text``, once ``content`` (not ours to translate) is taken out."""
    for piece in content:
        text = text.replace(piece, " ")
    text = GLOSS.sub(" ", IDENTIFIER.sub(" ", QUOTED.sub(" ", text)))
    return [word for word in WORD.findall(text) if word not in PROPER_NAMES]


class Walk:
    """What was seen in English on each screen of the walk."""

    def __init__(self, page: Page, content: tuple[str, ...]) -> None:
        self.page, self.content, self.found = page, content, {}

    def read(self, screen: str) -> None:
        for item in self.page.evaluate(COLLECT, LITERAL):
            words = english(item["text"], self.content)
            if words:
                self.found.setdefault(f"{item['where']}: {item['text'].strip()!r} {words}", screen)

    def report(self) -> str:
        return "\n".join(f"{screen} | {what}" for what, screen in sorted(self.found.items(), key=lambda kv: kv[1]))


def test_english_words_are_found_and_proper_names_ids_and_content_are_not() -> None:
    content = ("Incorrect API key provided",)
    assert english("アシスタント: General", content) == ["General"]
    assert english("ベンダーの既定値", content) == []
    assert english("OpenAI 互換 · gpt-4o-mini · http://127.0.0.1:8/mcp · get_capital", content) == []
    assert english("OpenAI の返答: Incorrect API key provided", content) == []
    assert english("Ctrl+K で新しいチャット", content) == []
    assert english("Traffic", content) == ["Traffic"]
    assert english("Select: 英国の首都は？", content) == ["Select"]
    assert english("設定でキーを確認してください。Check the key in Settings.", content) == ["Check", "the", "key", "in",
                                                                                   "Settings"]
    assert english("サーバーに知らせるフォルダー (roots)", content) == []
    assert english("roots を保存", content) == ["roots"]
    assert english("{{name}} は使うときに入力する欄になります。", content) == []
    assert english("[redacted] と表示。`python -m pycore mcp replay FILE` で再実行", content) == []


def test_the_japanese_ui_has_no_english_anywhere_a_user_can_reach(browser: Browser, site_url: str,
                                                                   vendor: VendorReplay):
    with serve_tools(origin(site_url), "A") as server:
        page = open_app(browser, site_url)
        open_settings(page).get_by_label("Language").select_option("ja")
        settings = page.get_by_role("dialog", name="設定")
        content = (server.url, server.answer("UK"), expected(ERROR_TURN)["error"]["message"], *SERVER_CONTENT)
        walk = Walk(page, content)
        walk.read("Settings")
        settings.get_by_role("button", name="閉じる").click()
        walk.read("first-run card")
        for vendor_id in ("anthropic", "ollama", "openai-compatible"):
            page.locator("#setup-provider").select_option(vendor_id)
            walk.read(f"first-run card ({vendor_id})")

        page.get_by_role("button", name="プロンプト", exact=True).click()
        expect(page.get_by_role("dialog", name="保存したプロンプト")).to_be_visible()
        walk.read("prompt library")
        page.get_by_role("dialog", name="保存したプロンプト").get_by_role("button", name="閉じる").click()

        open_settings_ja(page)
        configure_ja(page, vendor)
        walk.read("main screen")
        page.get_by_role("button", name="チャット設定").click()
        expect(page.locator("#chat-settings")).to_be_visible()
        walk.read("Chat settings")
        for option in page.locator("#assistant-picker option").all():
            page.locator("#assistant-picker").select_option(option.get_attribute("value"))
            expect(page.locator("#assistant-picker")).to_have_value(option.get_attribute("value") or "")
            walk.read(f"Chat settings ({option.text_content()})")
        page.locator("#assistant-picker").select_option("builtin:general")

        page.get_by_role("button", name="ツール", exact=True).click()
        tools = page.get_by_role("dialog", name="ツール")
        tools.locator("#mcp-url").fill(server.url)
        tools.get_by_role("button", name="サーバーを追加").click()
        item = tools.locator("#mcp-servers li.server").filter(has_text=server.url)
        expect(item).to_have_attribute("data-status", "connected", timeout=REPLY_TIMEOUT_MS)
        tools.locator("#roots summary").click()
        walk.read("Tools")
        item.get_by_role("combobox").first.select_option("allow")
        item.get_by_role("button", name=re.compile("^通信")).click()
        expect(page.locator("#traffic-list li").first).to_be_visible()
        walk.read("Traffic")
        page.locator("#traffic-close").click()
        tools.get_by_role("button", name="閉じる").click()

        vendor.script(TOOL_TURN, ERROR_TURN)
        page.locator("#message").fill(QUESTION)
        page.locator("#message").press("Enter")
        card = page.get_by_role("group", name=re.compile("get_capital"))
        expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
        expect(last_reply(page).locator(".notice")).to_be_visible(timeout=REPLY_TIMEOUT_MS)
        expect(page.locator("#stop")).to_be_hidden()
        card.locator("summary").first.click()
        walk.read("conversation with a tool card and an error notice")

        side = page.locator("#sidebar")
        side.locator("li[data-id] button.folder").first.click()
        expect(side.locator("li[data-id] .rename-field")).to_be_visible()
        walk.read("sidebar row, folder field")
        side.locator("li[data-id] .rename-field").press("Escape")
        page.locator("#search").fill("首都")
        expect(side.locator("#search-results mark").first).to_be_visible()
        walk.read("sidebar search")
        page.locator("#search").fill("")
        side.locator("button.select-toggle").click()
        expect(side.locator("li[data-id] input.select").first).to_be_visible()
        walk.read("sidebar, selecting")
        page.locator("#export").click()
        expect(page.locator("#export-dialog")).to_be_visible()
        walk.read("Export")
        page.locator("#export-close").click()
        page.locator("#toggle-focus").click()
        expect(page.locator("#focus-aside")).to_be_visible()
        walk.read("focus memory")
        open_settings_ja(page)
        walk.read("Settings with a profile")
        assert not walk.found, "English in the Japanese UI:\n" + walk.report()
        page.context.close()


def open_settings_ja(page: Page) -> None:
    dialog = page.get_by_role("dialog", name="設定")
    if not dialog.is_visible():
        page.get_by_role("button", name="設定", exact=True).click()
    expect(dialog).to_be_visible()


def configure_ja(page: Page, vendor: VendorReplay) -> None:
    """The Settings dialog filled by its fields' ids (journeys.configure finds them by their English labels)."""
    dialog = page.get_by_role("dialog", name="設定")
    dialog.locator("#provider").select_option("openai")
    dialog.locator("#api-key").fill("sk-japanese-ui")
    dialog.locator("#base-url").fill(vendor.url + "/v1")
    dialog.locator("#model").fill("gpt-4o-mini")
    dialog.get_by_role("button", name="保存", exact=True).click()
    expect(dialog).to_be_hidden()


def test_sync_errors_and_the_webdav_doctor_speak_japanese(browser: Browser, site_url: str, tmp_path: Path):
    """A WebDAV folder without CORS in the Japanese UI: why sync stopped and what to set are Japanese (the header
    and method names are the server's own words), and so is a wrong passphrase's refusal."""
    with serve_webdav(tmp_path / "dav", cors=None) as server:
        page = open_app(browser, site_url)
        open_settings(page).get_by_label("Language").select_option("ja")
        settings = page.get_by_role("dialog", name="設定")
        for field, value in (("#sync-url", server.url), ("#sync-user", USER), ("#sync-password", PASSWORD),
                             ("#sync-passphrase", "plum kettle orbit 42")):
            settings.locator(field).fill(value)
        settings.get_by_role("button", name="同期を開始").click()
        expect(page.locator("#sync-doctor li")).to_contain_text("Access-Control-Allow-Origin", timeout=REPLY_TIMEOUT_MS)
        expect(page.locator("#sync-relay")).to_be_visible()  # the page came from the relay: the line that bridges it
        walk = Walk(page, (server.url, urlsplit(server.url).netloc, origin(site_url)))
        walk.read("Sync: a folder without CORS")
        assert not walk.found, "English in the Japanese UI:\n" + walk.report()
        page.context.close()
