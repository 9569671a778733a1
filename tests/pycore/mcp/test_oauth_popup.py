"""web/app/oauth.js in Debian's Chromium against the SDK's real authorization server (loopback): a click
opens the popup, the authorization server redirects the popup back to the app's URL, the popup hands the
response to its opener (exact origin) and closes, and the core redeems it. The core is Python here (this
test process); the page's ``core`` forwards the two wire calls to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cors_apps import serve_app
from oauth_server import serve_protected
from starlette.applications import Starlette
from starlette.responses import FileResponse, HTMLResponse
from starlette.routing import Route
from test_doctor_chromium import ARGS, CHROMIUM

from pycore.http.httpx import HttpxTransport
from pycore.mcp import ClientSession
from pycore.mcp.oauth import OAuthClient

OAUTH_JS = Path(__file__).resolve().parents[3] / "web/app/oauth.js"
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

PAGE = """<!doctype html><title>app</title><button id="sign-in">Sign in</button><output id="result"></output>
<script type="module">
import { handleOAuthRedirect, signIn } from "/oauth.js";
if (!handleOAuthRedirect()) {
  const out = document.getElementById("result");
  const core = { call: async (method, params) => {
    if (method === "mcp.oauth_begin") return window.begun;
    out.dataset.callback = params.callback_url;
    return { resource: "r" };
  } };
  document.getElementById("sign-in").addEventListener("click", () => {
    signIn(core, { serverUrl: "ignored" })
      .then((result) => { out.dataset.done = "ok"; out.dataset.result = JSON.stringify(result); },
            (err) => { out.dataset.done = "error"; out.textContent = err.message; });
  });
}
</script>"""


def app_site() -> Starlette:
    async def index(request: Any) -> HTMLResponse:
        return HTMLResponse(PAGE)

    async def script(request: Any) -> FileResponse:
        return FileResponse(OAUTH_JS, media_type="text/javascript")

    return Starlette(routes=[Route("/", index), Route("/app/", index), Route("/oauth.js", script)])


async def test_popup_round_trip_with_the_sdk_authorization_server() -> None:
    from playwright.async_api import async_playwright

    http = HttpxTransport()
    with serve_protected() as (url, _), serve_app(app_site()) as site:
        oauth = OAuthClient(http)
        begun = await oauth.begin(url, site + "/app/")
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            page = await browser.new_page()
            await page.goto(site + "/app/")
            await page.evaluate("(begun) => { window.begun = begun; }", begun.model_dump())
            async with page.expect_popup() as popup_info:
                await page.click("#sign-in")
            popup = await popup_info.value
            await page.wait_for_selector("#result[data-done]", state="attached", timeout=20_000)
            result = page.locator("#result")
            assert await result.get_attribute("data-done") == "ok", await result.text_content()
            callback = await result.get_attribute("data-callback")
            assert await result.get_attribute("data-result") == '{"resource":"r"}'  # what mcp.oauth_finish said
            assert popup.is_closed()
            await browser.close()
        assert callback and callback.startswith(site + "/app/?") and f"state={begun.state}" in callback
        await oauth.finish(callback)
        async with ClientSession(url, http=oauth.transport_for(url)) as mcp:
            assert (await mcp.call_tool("whoami", {})).text() == "authorized"
    await http.aclose()


async def test_a_javascript_authorization_url_is_never_opened() -> None:
    from playwright.async_api import async_playwright

    with serve_app(app_site()) as site:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            page = await browser.new_page()
            await page.goto(site + "/")
            await page.evaluate("() => { window.begun = {authorization_url: 'javascript:alert(1)', state: 's'}; }")
            dialogs: list[str] = []
            page.on("dialog", lambda d: dialogs.append(d.message))
            await page.click("#sign-in")
            await page.wait_for_selector("#result[data-done]", state="attached", timeout=10_000)
            assert await page.locator("#result").get_attribute("data-done") == "error"
            assert "refused" in (await page.locator("#result").text_content() or "")
            assert dialogs == [] and len(page.context.pages) == 1  # the popup was closed again
            await browser.close()
