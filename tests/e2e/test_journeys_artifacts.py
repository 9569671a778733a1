"""Artifacts journeys (issue #33, item 2): what a reply makes opens in the artifact panel, live, in the MCP App views'
sandbox. The model makes and revises one on purpose with the page's ``artifact`` tool (recorded OpenAI turns,
renamed: vendor_replay.py); its versions stay with the conversation through a reload, an export and an import; a
reply's HTML, SVG and mermaid blocks open too. A hostile artifact (SECURITY.md T-K) tries to reach the page, read its
storage, navigate the top window, open a popup and reach a host the user did not allow, in the panel and in a new
tab: a loopback listener counts what reaches it (0), as the MCP App view tests do (test_journeys_apps.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_documents import hostile_page
from journeys import REPLY_TIMEOUT_MS, choose_file, configure, last_reply, open_app, send, wait_idle, wait_ui
from playwright.sync_api import Browser, FrameLocator, Locator, Page, expect
from test_journeys_apps import Counting
from test_journeys_interpreter import CHART_SVG, DOT_PNG, START_MS, analyst, script_code
from vendor_replay import VendorReplay, with_text, with_tool_call

pytestmark = pytest.mark.e2e

TOOL_TURN, TEXT_TURN = "openai/chat-stream-tool-call", "openai/chat-stream-text-usage"
SSE = "text/event-stream; charset=utf-8"
PAGE = """<!doctype html><html><head><title>Counter</title><style>h1 {{ color: rgb(192, 57, 43); }}</style></head>
<body><h1>{heading}</h1><p id="count">0</p><button id="add">Add</button>
<script>document.getElementById("add").onclick = () => {{
  const el = document.getElementById("count"); el.textContent = String(Number(el.textContent) + {step}); }};</script>
</body></html>"""
FIRST, SECOND = PAGE.format(heading="Counter", step=1), PAGE.format(heading="Counter, by tens", step=10)
BLOCKS = ("Three ways to draw it:\n\n```svg\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"20\">"
          "<circle id=\"dot\" cx=\"10\" cy=\"10\" r=\"8\"/></svg>\n```\n\n"
          "```mermaid\ngraph TD\n  Start --> Finish\n```\n\n```python\nprint('not an artifact')\n```\n")


@pytest.fixture(scope="module")
def hosts():
    evil, good = Counting(), Counting()
    yield evil, good
    for host in (evil, good):
        host.shutdown()
        host.server_close()


def artifact_turn(vendor: VendorReplay, label: str, arguments: dict[str, object], answer: str) -> None:
    """The model calls `artifact` (a recorded OpenAI tool call, renamed), then says `answer`."""
    vendor.script_body(f"{label} call", with_tool_call(TOOL_TURN, "artifact", arguments, f"call_{label}"),
                       content_type=SSE)
    vendor.script_body(f"{label} answer", with_text(TEXT_TURN, answer), content_type=SSE)


def chat_page(browser: Browser, url: str, vendor: VendorReplay) -> Page:
    page = open_app(browser, url)
    configure(page, vendor="openai", base=vendor.url, key="sk-artifacts-test", model="gpt-4o-mini")
    return page


def panel_of(page: Page) -> Locator:
    return page.get_by_role("region", name="Artifact")


def preview_of(page: Page) -> FrameLocator:
    """The artifact's own document: two sandboxed frames down (web/mcp_app/frame.html, then the artifact)."""
    return panel_of(page).frame_locator("iframe.artifact-frame").frame_locator("iframe")


def test_an_html_artifact_is_made_revised_kept_after_a_reload_exported_and_imported(
        browser: Browser, site_url: str, vendor: VendorReplay, tmp_path: Path):
    page = chat_page(browser, site_url, vendor)
    artifact_turn(vendor, "v1", {"id": "counter", "type": "html", "title": "Counter", "content": FIRST}, "Made it.")
    send(page, "Make me a counter page.")
    expect(last_reply(page).locator(".content")).to_have_text("Made it.", timeout=REPLY_TIMEOUT_MS)
    # The model was offered the tool, and told which version the user sees.
    assert "artifact" in [tool["function"]["name"] for tool in vendor.model_requests[0].json["tools"]]
    assert "version 1" in json.dumps(vendor.model_requests[1].json["messages"][-1])
    # It opened as it came: rendered live (its script runs: Add counts), its CSS applied.
    panel = panel_of(page)
    expect(panel.get_by_role("heading", name="Counter")).to_be_visible()
    preview = preview_of(page)
    expect(preview.locator("h1")).to_have_text("Counter", timeout=REPLY_TIMEOUT_MS)
    expect(preview.locator("h1")).to_have_css("color", "rgb(192, 57, 43)")
    preview.get_by_role("button", name="Add").click()
    expect(preview.locator("#count")).to_have_text("1")
    # Code shows its source; Download saves it.
    panel.get_by_role("tab", name="Code").click()
    expect(panel.locator(".artifact-code")).to_contain_text("document.getElementById(\"add\")")
    with page.expect_download() as download:
        panel.get_by_role("button", name="Download").click()
    assert download.value.suggested_filename == "Counter.html"
    assert Path(download.value.path()).read_text() == FIRST
    wait_idle(page)

    # A later reply revises it (the same id): a second version; the first is still there.
    artifact_turn(vendor, "v2", {"id": "counter", "type": "html", "title": "Counter", "content": SECOND}, "Revised.")
    send(page, "Count by tens.")
    expect(last_reply(page).locator(".content")).to_have_text("Revised.", timeout=REPLY_TIMEOUT_MS)
    assert "version 2" in json.dumps(vendor.model_requests[3].json["messages"][-1])
    expect(panel.locator(".artifact-version")).to_have_text("2/2")
    expect(panel.get_by_role("tab", name="Code")).to_have_attribute("aria-selected", "true")  # the same artifact
    panel.get_by_role("tab", name="Preview").click()
    expect(preview.locator("h1")).to_have_text("Counter, by tens", timeout=REPLY_TIMEOUT_MS)
    panel.get_by_role("button", name="Previous version of the artifact").click()
    expect(panel.locator(".artifact-version")).to_have_text("1/2")
    expect(preview.locator("h1")).to_have_text("Counter", timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)

    # After a reload both versions come back from the store, on their cards.
    page.reload()
    expect(last_reply(page).locator(".content")).to_have_text("Revised.", timeout=REPLY_TIMEOUT_MS)
    expect(panel).to_be_hidden()
    last_reply(page).get_by_role("button", name="Open Counter").click()
    expect(panel.locator(".artifact-version")).to_have_text("2/2")
    expect(preview.locator("h1")).to_have_text("Counter, by tens", timeout=REPLY_TIMEOUT_MS)

    # Exported with the conversation, and imported into another browser whole.
    page.get_by_role("button", name="Export", exact=True).click()
    with page.expect_download() as download:
        page.get_by_role("button", name="This conversation (JSON)").click()
    exported = tmp_path / "one.json"
    download.value.save_as(exported)
    kept = [part["display"]["artifact"] for conversation in json.loads(exported.read_text())["conversations"]
            for message in conversation["messages"] for part in message["parts"]
            if part["type"] == "tool_result" and (part.get("display") or {}).get("artifact")]
    assert [(a["id"], a["content"]) for a in kept] == [("counter", FIRST), ("counter", SECOND)]
    page.context.close()

    other = open_app(browser, site_url)
    wait_ui(other)
    choose_file(other, "Import", exported)
    expect(other.get_by_text("Imported 1 conversation(s).")).to_be_visible()
    other.get_by_role("complementary").locator(".conversations li button").first.click()
    last_reply(other).get_by_role("button", name="Open Counter").click()
    expect(panel_of(other).locator(".artifact-version")).to_have_text("2/2")
    expect(preview_of(other).locator("h1")).to_have_text("Counter, by tens", timeout=REPLY_TIMEOUT_MS)
    other.context.close()


def test_a_replys_svg_and_mermaid_blocks_open_as_artifacts(browser: Browser, site_url: str, vendor: VendorReplay):
    """And with Chat settings → Artifacts off (a model that takes no tools), the model is offered no tool, and the
    blocks still open."""
    page = chat_page(browser, site_url, vendor)
    page.get_by_role("button", name="Chat settings", exact=True).click()
    page.get_by_label("Artifacts", exact=True).uncheck()
    vendor.script_body("blocks", with_text(TEXT_TURN, BLOCKS), content_type=SSE)
    send(page, "Draw a dot and a graph.")
    wait_idle(page)
    assert "tools" not in vendor.model_requests[0].json
    reply = last_reply(page)
    opens = reply.get_by_role("button", name="Open", exact=True)
    expect(opens).to_have_count(2, timeout=REPLY_TIMEOUT_MS)  # the python block has none
    opens.first.click()
    expect(preview_of(page).locator("#dot")).to_have_attribute("r", "8", timeout=REPLY_TIMEOUT_MS)
    expect(page.locator(".artifact-version")).to_be_hidden()  # a block alone has no versions
    opens.last.click()
    expect(preview_of(page).locator("svg")).to_contain_text("Finish", timeout=REPLY_TIMEOUT_MS)
    panel_of(page).get_by_role("button", name="Close the artifact").click()
    expect(panel_of(page)).to_be_hidden()
    page.context.close()


def test_pictures_and_files_the_code_writes_open_as_artifacts(browser: Browser, site_url: str,
                                                              vendor: VendorReplay):
    """The interpreter's pictures (a chart saved as PNG, an SVG drawn as one) and files (SVG, markdown) open too;
    the SVG's script runs only in the sandbox (it reaches for the page and finds nothing)."""
    code = ("import base64\n"
            f"open('/mnt/outputs/dot.png', 'wb').write(base64.b64decode('{DOT_PNG}'))\n"
            f"open('/mnt/outputs/chart.svg', 'w').write({CHART_SVG!r})\n"
            "open('/mnt/outputs/report.md', 'w').write('# Report\\n\\nAll *good*.')\n")
    script_code(vendor, code, answer="Written.")
    page = open_app(browser, site_url)
    analyst(page, vendor)
    send(page, "Write a report.")
    wait_idle(page, timeout=START_MS)
    card = page.locator(".tool-card").first
    expect(card.locator(".artifact-open")).to_have_text(["Open picture 1", "Open picture 2", "Open chart.svg",
                                                         "Open report.md"])
    card.get_by_role("button", name="Open chart.svg").click()
    expect(preview_of(page).locator("rect")).to_have_attribute("fill", "red", timeout=REPLY_TIMEOUT_MS)
    assert page.evaluate("window.drawn ?? null") is None
    card.get_by_role("button", name="Open report.md").click()
    expect(preview_of(page).get_by_role("heading", name="Report")).to_be_visible(timeout=REPLY_TIMEOUT_MS)
    expect(preview_of(page).locator("em")).to_have_text("good")
    card.get_by_role("button", name="Open picture 1").click()
    expect(panel_of(page).get_by_role("tab", name="Code")).to_be_hidden()  # a picture has no source to show
    picture = preview_of(page).locator("img")
    expect(picture).to_have_count(1, timeout=REPLY_TIMEOUT_MS)
    sizes = picture.evaluate("(img) => new Promise((done) => img.complete ? done(img.naturalWidth)"
                             " : img.onload = () => done(img.naturalWidth))")
    assert sizes == 40  # the pictures in the order written out (by name): chart.png (drawn from chart.svg), dot.png
    page.context.close()


def test_t_k6_an_artifact_sending_the_page_too_much_is_stopped_and_says_so(browser: Browser, site_url: str,
                                                                          vendor: VendorReplay):
    """The frame's limits (web/mcp_app/limits.js, T-W9) stop it; the panel says so instead of going blank."""
    page = chat_page(browser, site_url, vendor)
    flood = "<!doctype html><p>sending</p><script>parent.postMessage('x'.repeat(9 * 2 ** 20), '*');</script>"
    artifact_turn(vendor, "flood", {"id": "flood", "type": "html", "title": "Flood", "content": flood}, "Sent.")
    send(page, "Send a lot.")
    expect(panel_of(page).locator(".artifact-notice")).to_contain_text("was stopped", timeout=REPLY_TIMEOUT_MS)
    expect(panel_of(page).frame_locator("iframe.artifact-frame").locator("iframe")).to_have_count(0)
    page.context.close()


def attempts(view: FrameLocator) -> dict[str | None, str]:
    """What the artifact wrote about each attempt, once the slow ones (network) have answered."""
    for slow in ("fetch", "websocket", "undeclared-image", "allowed-image"):
        expect(view.locator(f"li[data-attempt='{slow}']")).to_have_count(1, timeout=REPLY_TIMEOUT_MS)
    return {li.get_attribute("data-attempt"): li.inner_text() for li in view.locator("li").all()}


def contained(told: dict[str | None, str], page: Page) -> dict[str, bool]:
    return {
        "the page's DOM": told["parent-dom"] == "blocked: SecurityError" and page.locator("#pwned").count() == 0,
        "the page's globals": told["parent-globals"] == "blocked: SecurityError",
        "localStorage": told["local-storage"] == "blocked: SecurityError",
        "cookies": told["cookies"] == "blocked: SecurityError",
        "IndexedDB": told["indexeddb"] == "blocked: SecurityError",
        "navigating the top window": told["navigate-top"].startswith("blocked"),
        "a popup": told["popup"] == "done: refused",
        "fetch to a host not allowed": told["fetch"] == "blocked: TypeError",
        "a WebSocket to it": told["websocket"] == "blocked",
        "an image from it": told["undeclared-image"] == "blocked",
        "a script from it": page.evaluate("window.pwned") is None,
    }


def test_t_k_a_hostile_artifact_is_contained_in_the_panel_and_in_a_new_tab(
        browser: Browser, site_url: str, vendor: VendorReplay, hosts: tuple[Counting, Counting]):
    evil, good = hosts
    page = chat_page(browser, site_url, vendor)
    page.evaluate("localStorage.setItem('orizuru.canary', 'sk-secret-canary')")
    content = hostile_page(evil.origin, good.origin, allowed="allowed")
    artifact_turn(vendor, "hostile", {"id": "hostile", "type": "html", "title": "Hostile", "content": content},
                  "Here it is.")
    send(page, "Show me the page.")
    expect(last_reply(page).locator(".content")).to_have_text("Here it is.", timeout=REPLY_TIMEOUT_MS)
    start_url = page.url
    # No host is allowed until the user allows one: the allowed image is blocked too at first.
    told = attempts(preview_of(page))
    assert told["allowed-image"] == "blocked", told
    # The user allows one host in the panel: that one is reached, and still nothing else.
    panel = panel_of(page)
    panel.get_by_text("Network", exact=True).click()
    panel.get_by_label("Hosts this artifact may reach").fill(good.origin)
    panel.get_by_role("button", name="Allow", exact=True).click()
    allowed = preview_of(page).locator("li[data-attempt='allowed-image']")
    expect(allowed).to_have_text("loaded", timeout=REPLY_TIMEOUT_MS)
    told = attempts(preview_of(page))
    # Then it navigates its own frame to the host it was not given, with data in the URL.
    preview_of(page).get_by_role("button", name="Leave").click()
    page.wait_for_timeout(1500)
    in_panel = {**contained(told, page), "the top window stayed": page.url.split("#")[0] == start_url.split("#")[0],
                "no popup": len(page.context.pages) == 1}

    # Open in new tab: a blob: page of the app's origin that holds the same sandbox; the artifact is as contained.
    with page.context.expect_page() as opened:
        panel.get_by_role("button", name="Open in new tab").click()
    tab = opened.value
    assert tab.url.startswith("blob:")
    tab_view = tab.frame_locator("iframe").frame_locator("iframe")
    in_tab = contained(attempts(tab_view), tab)
    in_tab["the tab stayed"] = tab.url.startswith("blob:")
    in_tab["no popup"] = len(page.context.pages) == 2

    result = {"panel": in_panel, "tab": in_tab, "requests at the listener": evil.hits}
    print(f"\ncontained {sum(in_panel.values())}/{len(in_panel)} in the panel, {sum(in_tab.values())}/{len(in_tab)} "
          f"in a new tab; requests at the listener: {len(evil.hits)}")
    assert all(in_panel.values()) and all(in_tab.values()) and evil.hits == [], json.dumps(result, indent=1)
    assert "/allowed.png" in good.hits
    page.context.close()
