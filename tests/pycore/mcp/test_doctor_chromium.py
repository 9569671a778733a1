"""The doctor's browser-mode inference on what a real browser shows: Debian's Chromium (Playwright) runs the
probes of :func:`browser_probes` with ``fetch`` from a page on one loopback origin against servers on another,
and :func:`interpret_browser` reads the outcomes. This checks the design (which fetches fail for which
misconfiguration) against the browser's actual CORS enforcement, not against our idea of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cors_apps import ALL_HEADERS, GOOD, mcp_app, serve_app
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from pycore.mcp.doctor import Outcome, browser_probes, interpret_browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-default-apps"]
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

RUN_PROBE = """async ([url, method, headers, body]) => {
  try {
    const response = await fetch(url, {method, headers, body: body ?? undefined, cache: "no-store"});
    const text = await response.text();
    return {ok: true, status: response.status, headers: Object.fromEntries(response.headers.entries()), body: text};
  } catch (e) {
    return {ok: false};
  }
}"""
NO_CORS = """async (url) => {
  try { await fetch(url, {mode: "no-cors", cache: "no-store"}); return true; } catch (e) { return false; }
}"""


def page_app() -> Starlette:
    async def index(request: Any) -> HTMLResponse:
        return HTMLResponse("<!doctype html><title>page</title>")

    return Starlette(routes=[Route("/", index)])


@pytest.fixture(scope="module")
def page() -> Any:
    from playwright.sync_api import sync_playwright

    with serve_app(page_app()) as origin, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        tab = browser.new_page()
        tab.goto(origin + "/")
        tab.origin = origin
        yield tab
        browser.close()


def diagnose_in_chromium(tab: Any, url: str, headers: dict[str, str] | None = None) -> list[str]:
    reachable = tab.evaluate(NO_CORS, url)
    outcomes = {}
    for probe in browser_probes(headers):
        seen = tab.evaluate(RUN_PROBE, [url, probe.method, probe.headers, probe.body])
        outcomes[probe.name] = Outcome(**seen)
    return interpret_browser(url, tab.origin, outcomes, reachable).codes()


def cors(tab: Any, **overrides: Any) -> dict[str, Any]:
    return {**GOOD, "allow_origins": [tab.origin], **overrides}


def test_well_configured(page: Any) -> None:
    with serve_app(mcp_app(cors(page))) as base:
        assert diagnose_in_chromium(page, base + "/mcp", {"Authorization": "x"}) == []


def test_no_cors_at_all(page: Any) -> None:
    with serve_app(mcp_app(None)) as base:
        assert diagnose_in_chromium(page, base + "/mcp") == ["no_allow_origin"]


def test_session_id_not_exposed(page: Any) -> None:
    with serve_app(mcp_app(cors(page, expose_headers=[]))) as base:
        assert diagnose_in_chromium(page, base + "/mcp") == ["session_id_not_exposed"]


def test_headers_not_allowed(page: Any) -> None:
    allowed = [h for h in ALL_HEADERS if h not in ("MCP-Protocol-Version", "Authorization")]
    with serve_app(mcp_app(cors(page, allow_headers=allowed))) as base:
        assert diagnose_in_chromium(page, base + "/mcp") == ["header_not_allowed", "header_not_allowed"]


def test_unreachable(page: Any) -> None:
    assert diagnose_in_chromium(page, "http://127.0.0.1:9/mcp") == ["unreachable"]
