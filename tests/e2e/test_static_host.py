"""dist/ on a plain static file server, under a subpath, with no relay and no headers of ours: the page
carries its own Content-Security-Policy (T-X12), boots, and chats with a vendor."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DIST
from journeys import (
    REPLY_TIMEOUT_MS,
    add_server,
    close_tools,
    configure,
    last_reply,
    open_app,
    send,
    wait_core,
    wait_idle,
)
from journeys_tool_servers import BASIC_APP, EVERYTHING, NODE, serve_basic_app, serve_everything
from playwright.sync_api import Browser, Page, expect
from vendor_replay import VendorReplay, expected, with_tool_call

pytestmark = pytest.mark.e2e

SUBPATH = "/some/path/"


class SubpathHandler(http.server.SimpleHTTPRequestHandler):
    """A plain static host: files under ``SUBPATH``, content types by extension, no security headers."""

    def translate_path(self, path: str) -> str:
        if not path.startswith(SUBPATH):
            return str(Path(self.directory) / "does-not-exist")
        return super().translate_path("/" + path[len(SUBPATH):])

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def static_url() -> Iterator[str]:
    if not (DIST / "index.html").is_file():
        pytest.fail(f"{DIST} is not built: run `python3 build.py build`")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(SubpathHandler, directory=str(DIST)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{SUBPATH}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_static_site_enforces_its_own_policy_without_the_relay(browser: Browser, static_url: str):
    """T-X12: no header sets a policy here; the page's <meta> blocks an injected inline script."""
    page = open_app(browser, static_url)
    response = page.request.get(static_url)
    assert "content-security-policy" not in response.headers  # the host sends none: the <meta> must hold
    violations = page.evaluate("""() => new Promise((resolve) => {
        const seen = [];
        document.addEventListener("securitypolicyviolation", (e) => seen.push(e.violatedDirective));
        const script = document.createElement("script");
        script.textContent = "window.pwned = 1";
        document.body.append(script);
        const img = document.createElement("img");
        img.src = "http://127.0.0.1:9/tracker.png";
        document.body.append(img);
        setTimeout(() => resolve(seen), 300);
    })""")
    assert page.evaluate("() => window.pwned") is None
    assert any(v.startswith("script-src") for v in violations), violations
    assert any(v.startswith("img-src") for v in violations), violations
    page.context.close()


def test_set_a_key_and_chat_from_a_plain_static_host_under_a_subpath(browser: Browser, static_url: str,
                                                                    vendor: VendorReplay):
    recording = "anthropic/stream-text"
    vendor.script(recording)
    page = open_app(browser, static_url)
    wait_core(page)  # Python boots from the subpath, under the <meta> policy ('wasm-unsafe-eval')
    configure(page, vendor="anthropic", base=vendor.url, key="sk-ant-static-0000", model="claude-sonnet-4-5")
    send(page, "Hello from a static host")
    expect(last_reply(page).locator(".content")).to_have_text(expected(recording)["text"], timeout=REPLY_TIMEOUT_MS)
    assert vendor.model_requests[0].headers["x-api-key"] == "sk-ant-static-0000"
    page.context.close()


def test_the_service_worker_and_the_manifest_stay_inside_the_subpath(browser: Browser, static_url: str):
    page = open_app(browser, static_url)
    scope = page.evaluate("() => navigator.serviceWorker.ready.then((r) => r.scope)")
    assert scope == static_url
    manifest = page.evaluate("""async () => {
        const link = document.querySelector('link[rel=manifest]');
        const body = await (await fetch(link.href)).json();
        return {href: link.href, start: new URL(body.start_url, link.href).href,
                scope: new URL(body.scope, link.href).href};
    }""")
    assert manifest == {"href": static_url + "manifest.webmanifest", "start": static_url, "scope": static_url}
    page.context.close()


def tool_turn(browser: Browser, static_url: str, vendor: VendorReplay, url: str, tool: str,
              arguments: dict[str, object]) -> Page:
    """The app from the static host, the MCP server at ``url`` added in Tools with ``tool`` allowed, and a turn in
    which the model (a recorded OpenAI tool call, renamed) calls it and then answers: the page, the turn over."""
    tool_turn, text_turn = "openai/chat-stream-tool-call", "openai/chat-stream-text-usage"
    vendor.script_body(f"call {tool}", with_tool_call(tool_turn, tool, arguments, "call_static"),
                       content_type="text/event-stream; charset=utf-8")
    vendor.script(text_turn)
    page = open_app(browser, static_url)
    configure(page, vendor="openai", base=vendor.url, key="sk-static-mcp-0000", model="gpt-4o-mini")
    add_server(page, url).get_by_role("combobox", name=f"Approval for {tool}").select_option("allow")
    close_tools(page)
    send(page, f"Use {tool}.")
    expect(last_reply(page).locator(".content")).to_have_text(expected(text_turn)["text"], timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    return page


@pytest.mark.skipif(not NODE.exists() or not EVERYTHING.exists(), reason="npm devDependencies missing")
def test_from_a_static_host_the_agent_calls_a_remote_mcp_servers_tool(browser: Browser, static_url: str,
                                                                     vendor: VendorReplay):
    """No relay: the page itself connects server-everything over streamable HTTP and the agent runs its echo."""
    with serve_everything() as url:
        page = tool_turn(browser, static_url, vendor, url, "echo", {"message": "from a static host"})
        card = page.get_by_role("group", name="Tool echo")
        expect(card).to_have_attribute("data-status", "done")
        assert "Echo: from a static host" in vendor.model_requests[1].body.decode()
        page.context.close()


@pytest.mark.skipif(not NODE.exists() or not BASIC_APP.exists(), reason="npm devDependencies missing")
def test_from_a_static_host_an_mcp_app_view_renders_and_calls_back(browser: Browser, static_url: str,
                                                                   vendor: VendorReplay):
    """No relay, no headers of ours, under a subpath: the ext-apps example server by URL; its view's frame is the
    site's own file, carrying its own policy, and the view's button calls the tool back through approval."""
    with serve_basic_app() as url:
        page = tool_turn(browser, static_url, vendor, url, "get-time", {})
        card = page.get_by_role("group", name="Tool get-time")
        # The frame gets its address once the view's bridge listens (after its code has loaded): waited for.
        expect(card.locator("iframe.mcp-app-frame")).to_have_attribute("src", static_url + "mcp-app-frame.html",
                                                                       timeout=REPLY_TIMEOUT_MS)
        view = card.frame_locator("iframe.mcp-app-frame").frame_locator("iframe")
        button = view.get_by_role("button", name="Get Server Time")
        expect(button).to_be_visible(timeout=REPLY_TIMEOUT_MS)
        before = view.locator("body").inner_text()
        button.click()  # allowed in Tools: the view's call runs without asking, as the model's would
        expect(view.locator("body")).not_to_have_text(before, timeout=REPLY_TIMEOUT_MS)
        expect(card.locator(".mcp-app-ask")).to_be_hidden()
        page.context.close()


def test_the_code_interpreter_runs_from_a_plain_static_host(browser: Browser, static_url: str,
                                                            vendor: VendorReplay):
    """Its sandbox needs no header either: the frame inherits the page's <meta> policy and narrows it."""
    sse = "text/event-stream; charset=utf-8"
    vendor.script_body("python", with_tool_call("openai/chat-stream-tool-call", "python",
                                                {"code": "import sys\nsys.version_info[:2]"}, "call_py"),
                       content_type=sse)
    vendor.script("openai/chat-stream-text-usage")
    page = open_app(browser, static_url)
    configure(page, vendor="openai", base=vendor.url, key="sk-static-py-0000", model="gpt-4o-mini")
    page.get_by_label("Assistant", exact=True).select_option(label="Data analyst")
    send(page, "Which Python?")
    wait_idle(page, timeout=120_000)
    [told] = [m["content"] for m in vendor.model_requests[-1].json["messages"] if m["role"] == "tool"]
    assert told.startswith("value:\n(3, ")
    page.context.close()


class Recorder(http.server.BaseHTTPRequestHandler):
    """Another host: answers every GET with CORS open and notes the path it was asked for."""

    seen: list[str] = []

    def do_GET(self) -> None:
        self.seen.append(self.path)
        self.send_response(200)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_t_w13_a_narrowed_connect_src_is_not_a_boundary_measured(browser: Browser, static_url: str):
    """T-W13 (open, measured): the page's connect-src keeps `https:` and loopback. Narrowing it at run time to
    the hosts the user configured is possible for the page itself (a <meta> added later narrows, never widens),
    but it would not hold what it promises: the core's worker, which makes every vendor and MCP request, is
    started from the site's URL and takes its policy from that response (none on a static host), and a
    navigation carries data to any host whatever connect-src says. This test measures all three; it fails
    when Chromium changes, to update SECURITY.md."""
    Recorder.seen = []
    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    host = f"http://127.0.0.1:{other.server_address[1]}"
    try:
        page = open_app(browser, static_url)
        blocked = page.evaluate("""async (host) => {
            const meta = document.createElement("meta");
            meta.httpEquiv = "Content-Security-Policy";
            meta.content = "connect-src 'self'";
            document.head.append(meta);
            try { await fetch(host + "/from-the-page"); return false; } catch { return true; }
        }""", host)
        assert blocked  # the page itself is narrowed
        core = next(w for w in page.workers if "worker" in w.url)
        assert core.evaluate("async (host) => (await fetch(host + '/from-the-core')).status", host) == 200
        page.evaluate("(host) => { location.href = host + '/navigated?carried=secret'; }", host)
        page.wait_for_url(f"{host}/navigated?carried=secret")
        # Chromium may also ask the new host for /favicon.ico after the navigation, in its own time: not ours
        assert [p for p in Recorder.seen if p != "/favicon.ico"] == ["/from-the-core", "/navigated?carried=secret"]
        page.context.close()
    finally:
        other.shutdown()
        other.server_close()
