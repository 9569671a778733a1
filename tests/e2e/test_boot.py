"""The page boots Python in a worker, from its own origin only, and stays usable while it does."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from journeys import NO_AUTO_TITLE, configure
from playwright.sync_api import Browser, BrowserContext, Page, expect
from vendor_replay import VendorReplay, expected

pytestmark = pytest.mark.e2e

BOOT_TIMEOUT_MS = 120_000  # generous: a cold boot on a loaded 2-core machine


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def open_page(browser: Browser, url: str) -> tuple[Page, list[str]]:
    context = browser.new_context()
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    context.add_init_script(NO_AUTO_TITLE)  # its extra request would take the reply scripted for the next turn
    page = context.new_page()
    page.goto(url, wait_until="domcontentloaded")
    return page, requests


def test_page_boots_the_core_from_its_own_origin_only(browser: Browser, site_url: str):
    page, requests = open_page(browser, site_url)
    expect(page.locator("html")).to_have_attribute("data-core", "ready", timeout=BOOT_TIMEOUT_MS)
    expect(page.get_by_role("status")).to_contain_text("Ready")
    expect(page.get_by_role("status")).to_contain_text("Python 3.14")
    # The worker's own requests are seen too: the wheels are fetched from inside it.
    assert any(u.endswith("/pycore-0.1.0-py3-none-any.whl") for u in requests), requests
    assert any(u.endswith("pyodide.asm.wasm") for u in requests), requests
    foreign = [u for u in requests if origin(u) != origin(site_url) and not u.startswith(("data:", "blob:"))]
    assert foreign == []
    page.context.close()


def test_the_request_log_would_see_a_foreign_request(browser: Browser, site_url: str):
    """Guards the test above: a request to another host does show up in the same log."""
    page, requests = open_page(browser, site_url)
    probe = "http://localhost:9/probe"  # another origin that the page's CSP still lets through
    page.evaluate(f"fetch({probe!r}).catch(() => null)")
    page.wait_for_timeout(300)
    assert probe in requests
    page.context.close()


def test_a_message_typed_during_boot_goes_out_when_the_core_is_ready(browser: Browser, site_url: str):
    first, second = "openai/chat-stream-text-usage", "anthropic/stream-text"
    vendor = VendorReplay()
    vendor.script(first)
    try:
        page, _ = open_page(browser, site_url)
        # Setting up needs no Python: fill the Settings dialog while the core boots.
        configure(page, vendor="openai", base=vendor.url, key="sk-boot-test", model="gpt-4o-mini")
        box = page.get_by_role("textbox", name="Message")
        box.fill("sent before Python was ready")
        assert page.locator("html").get_attribute("data-core") == "booting"
        box.press("Enter")
        mine = page.locator(".transcript li.msg.user")
        expect(mine.locator(".content")).to_have_text("sent before Python was ready")
        expect(mine).to_have_attribute("data-state", "waiting")
        assert vendor.model_requests == []
        expect(page.locator("html")).to_have_attribute("data-core", "ready", timeout=BOOT_TIMEOUT_MS)
        reply = page.locator(".transcript li.msg.assistant")
        expect(reply.locator(".content")).to_have_text(expected(first)["text"], timeout=BOOT_TIMEOUT_MS)
        expect(reply).to_have_attribute("data-state", "done")
        expect(mine).not_to_have_attribute("data-state", "waiting")
        assert vendor.model_requests[0].json["messages"][-1]["content"] in (
            "sent before Python was ready", [{"type": "text", "text": "sent before Python was ready"}])
        vendor.script(second)
        configure(page, vendor="anthropic", base=vendor.url, key="sk-ant-boot", model="claude-sonnet-4-5")
        page.get_by_role("textbox", name="Message").fill("and one after")
        page.get_by_role("button", name="Send", exact=True).click()
        expect(page.locator(".transcript li.msg.assistant").nth(1).locator(".content")).to_have_text(
            expected(second)["text"], timeout=BOOT_TIMEOUT_MS)
        page.context.close()
    finally:
        vendor.close()


def test_a_boot_failure_names_the_stage_and_the_reason(browser: Browser, site_url: str):
    context = browser.new_context()
    context.route("**/*.whl", lambda route: route.fulfill(status=404, body="gone"))
    page = context.new_page()
    page.goto(site_url)
    expect(page.locator("html")).to_have_attribute("data-core", "error", timeout=BOOT_TIMEOUT_MS)
    status = page.get_by_role("status")
    expect(status).to_contain_text("Loading packages")
    expect(status).to_contain_text("HTTP 404")
    context.close()


def test_a_second_visit_boots_from_the_browser_cache(profile: BrowserContext, site_url: str):
    context = profile
    page = context.pages[0]
    page.goto(site_url)
    expect(page.locator("html")).to_have_attribute("data-core", "ready", timeout=BOOT_TIMEOUT_MS)
    page.goto("about:blank")
    page.goto(site_url)
    expect(page.locator("html")).to_have_attribute("data-core", "ready", timeout=BOOT_TIMEOUT_MS)
    # transferSize 0 means the response came from the HTTP cache, not the network.
    entries = page.workers[0].evaluate(
        "performance.getEntriesByType('resource').map(e => [e.name, e.transferSize])"
    )
    heavy = {name.rsplit("/", 1)[-1]: size for name, size in entries if name.endswith((".whl", ".wasm", ".zip"))}
    assert "pyodide.asm.wasm" in heavy and any(n.startswith("pycore-") for n in heavy), heavy
    assert all(size == 0 for size in heavy.values()), [(n, s) for n, s in heavy.items() if s]


def test_the_site_is_served_with_cache_and_security_headers(site_url: str):
    import re
    import urllib.request

    base = site_url.split("#")[0]
    with urllib.request.urlopen(base) as index:
        html = index.read().decode()
        assert index.headers["cache-control"] == "no-cache"
        assert "script-src 'self' 'wasm-unsafe-eval'" in index.headers["content-security-policy"]
    wasm_path = re.search(r'"pyodide": "([^"]+)"', html).group(1) + "pyodide.asm.wasm"
    with urllib.request.urlopen(base + wasm_path) as wasm:
        assert wasm.headers["content-type"] == "application/wasm"
        assert "immutable" in wasm.headers["cache-control"]
