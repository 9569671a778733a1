"""The built site as a PWA: installable, boots offline from the service worker's cache, and the
service worker never touches vendor, MCP or relay traffic."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import DIST, start_site
from playwright.sync_api import BrowserContext, Page, expect

pytestmark = pytest.mark.e2e

BOOT_TIMEOUT_MS = 120_000  # a cold boot on a loaded 2-core machine


@pytest.fixture
def served(tmp_path: Path):
    proc, url = start_site(tmp_path / "server.log", DIST)
    yield proc, url
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=10)


def wait_controlled(page: Page) -> None:
    """Until the service worker has installed (precache done), activated and controls the page."""
    page.evaluate("""async () => {
        await navigator.serviceWorker.ready;
        while (!navigator.serviceWorker.controller) await new Promise(r => setTimeout(r, 50));
    }""")


def boot_online(context: BrowserContext, url: str) -> Page:
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(url)
    expect(page.locator("html")).to_have_attribute("data-core", "ready", timeout=BOOT_TIMEOUT_MS)
    wait_controlled(page)
    return page


def test_the_site_boots_offline_from_the_service_worker_cache(profile: BrowserContext, served):
    proc, url = served
    page = boot_online(profile, url)
    cached = page.evaluate("""async () => {
        const names = await caches.keys();
        const cache = await caches.open(names.find(n => n.startsWith("orizuru-")));
        return (await cache.keys()).map(r => new URL(r.url).pathname);
    }""")
    assert "/" in cached and any(p.endswith("pyodide.asm.wasm") for p in cached)
    assert any(p.startswith("/wheels/") and "/pycore-" in p for p in cached)
    assert not any(p.endswith(".map") for p in cached)

    proc.terminate()  # the server is gone: nothing can come from the network now
    proc.wait(timeout=10)
    responses = []
    profile.on("response", lambda r: responses.append(r))
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-core", "ready", timeout=BOOT_TIMEOUT_MS)
    expect(page.get_by_role("textbox", name="Message")).to_be_visible()
    served_by_sw = {r.url.rsplit("/", 1)[-1] for r in responses if r.from_service_worker}
    assert "pyodide.asm.wasm" in served_by_sw and any(n.startswith("pycore-") for n in served_by_sw), served_by_sw


class _Echo(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_vendor_mcp_and_relay_requests_never_go_through_the_service_worker(profile: BrowserContext, served):
    _, url = served
    page = boot_online(profile, url)
    other = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)  # stands for a vendor or an MCP server
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        # localhost is another origin than the site's 127.0.0.1, and the page's CSP allows it
        foreign = f"http://localhost:{other.server_address[1]}/v1/chat"
        base = url.split("#")[0]
        responses = []
        profile.on("response", lambda r: responses.append(r))
        statuses = page.evaluate("""async (urls) => Promise.all(urls.map(async (u) => {
            try { return (await fetch(u, {method: u.includes("/mcp/") ? "POST" : "GET"})).status; }
            catch (e) { return String(e); }
        }))""", [foreign, base + "api/servers", base + "mcp/demo", base + "assets/not-precached.js"])
        assert statuses[0] == 200
        touched = [r.url for r in responses if r.from_service_worker]
        assert touched == [], touched
        cached = page.evaluate("""async () => {
            const urls = [];
            for (const name of await caches.keys()) {
                for (const r of await (await caches.open(name)).keys()) urls.push(r.url);
            }
            return urls;
        }""")
        assert all(u.startswith(base) for u in cached)
        assert not any(p in u for u in cached for p in ("/api/", "/mcp/", "localhost"))
    finally:
        other.shutdown()
        other.server_close()


def test_the_manifest_makes_the_site_installable(profile: BrowserContext, served):
    _, url = served
    page = boot_online(profile, url)
    cdp = profile.new_cdp_session(page)
    manifest = cdp.send("Page.getAppManifest")
    assert manifest["errors"] == [], manifest["errors"]
    data = json.loads(manifest["data"])
    assert data["name"] == "Orizuru" and data["display"] == "standalone"
    installability = cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
    assert installability == [], installability
