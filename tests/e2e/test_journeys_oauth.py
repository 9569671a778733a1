"""OAuth journey: a user adds a protected MCP server by URL in the Tools dialog; the connection fails with
an auth error and the app offers "Sign in"; the click opens a popup that goes through the server's real
authorization server (official `mcp` SDK, auto-approving) and closes; the server connects and lists its
tools; the model's recorded tool call runs there with the token. The tokens never leave the page's Python
worker: not in any message the page receives from it, not in the browser's storage but as ciphertext under
the worker's non-extractable key, not in any request but the bearer header to that server, not in the
address bar. After a reload the server connects without signing in again; deleting it forgets its sign-in."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from journeys import (
    REPLY_TIMEOUT_MS,
    browser_storage_dump,
    configure,
    last_reply,
    open_app,
    send,
    wait_core,
    wait_idle,
    wait_ui,
)
from journeys_oauth_server import ProtectedServer, serve_capitals_protected
from mcp.server.auth.provider import AuthorizeError
from playwright.sync_api import Browser, Locator, Page, Request, expect
from vendor_replay import VendorReplay, expected

pytestmark = pytest.mark.e2e

TOOL_TURN, TEXT_TURN = "openai/chat-stream-tool-call", "openai/chat-stream-text-usage"
RESULT = "The capital of UK is London (answered by the protected MCP server)."


@pytest.fixture
def protected(site_url: str) -> Iterator[ProtectedServer]:
    parts = urlsplit(site_url)
    with serve_capitals_protected(f"{parts.scheme}://{parts.netloc}") as server:
        yield server


# Every message the page's main thread receives from any worker, as text (T-A11): listeners added with
# addEventListener and the onmessage property both see them through this wrapper.
HOOK_WORKER_MESSAGES = """(() => {
  const seen = (window.__workerMessages = []);
  const record = (ev) => { try { seen.push(JSON.stringify(ev.data)); } catch { seen.push(String(ev.data)); } };
  const add = Worker.prototype.addEventListener;
  Worker.prototype.addEventListener = function (type, listener, options) {
    const wrapped = type === "message" && typeof listener === "function"
      ? function (ev) { record(ev); return listener.call(this, ev); } : listener;
    return add.call(this, type, wrapped, options);
  };
  const onmessage = Object.getOwnPropertyDescriptor(Worker.prototype, "onmessage");
  Object.defineProperty(Worker.prototype, "onmessage", { ...onmessage, set(listener) {
    onmessage.set.call(this, typeof listener === "function" ? (ev) => { record(ev); return listener(ev); } : listener);
  } });
})();"""


def worker_messages(page: Page) -> str:
    return str(page.evaluate("window.__workerMessages.join('\\n')"))


def vault_key(page: Page) -> dict[str, Any]:
    """The worker's token key as the page finds it in IndexedDB: its kind, and whether it can be exported."""
    return dict(page.evaluate("""async () => {
      const db = await new Promise((ok, no) => {
        const r = indexedDB.open("orizuru-oauth"); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error);
      });
      const key = await new Promise((ok, no) => {
        const r = db.transaction("keys").objectStore("keys").get("aes-gcm");
        r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error);
      });
      db.close();
      const exported = await crypto.subtle.exportKey("raw", key).then(() => "exported", (e) => e.name);
      return { type: key.type, algorithm: key.algorithm.name, extractable: key.extractable, exported };
    }"""))


def server_item(page: Page, url: str) -> Locator:
    return page.get_by_role("dialog", name="Tools").locator("#mcp-servers li.server").filter(has_text=url)


def expect_sign_in_offered(page: Page, url: str) -> Locator:
    item = server_item(page, url)
    expect(item).to_have_attribute("data-status", "error", timeout=REPLY_TIMEOUT_MS)
    expect(item.get_by_role("alert")).to_have_text(f"{url} requires authorization (401)")
    expect(item.get_by_role("button", name="Sign in")).to_be_visible()
    expect(item.locator(".doctor")).to_have_count(0)  # an auth error is not a CORS/network problem
    return item


def sign_in(page: Page, item: Locator) -> None:
    """Click Sign in; the popup goes through the authorization server, hands the redirect back, closes."""
    with page.expect_popup() as popup_info:
        item.get_by_role("button", name="Sign in").click()
    popup = popup_info.value
    if not popup.is_closed():
        popup.wait_for_event("close", timeout=REPLY_TIMEOUT_MS)


def test_sign_in_to_a_protected_server_then_its_tool_runs_with_the_token(
        browser: Browser, site_url: str, protected: ProtectedServer, vendor: VendorReplay):
    vendor.script(TOOL_TURN, TEXT_TURN)
    context = browser.new_context()
    context.add_init_script(HOOK_WORKER_MESSAGES)
    page = open_app(browser, site_url, context=context)
    sent: list[Request] = []  # every request of the page, its popups and its worker
    page.context.on("request", lambda request: sent.append(request))
    configure(page, vendor="openai", base=vendor.url, key="sk-oauth-test", model="gpt-4o-mini")

    page.get_by_role("button", name="Tools", exact=True).click()
    dialog = page.get_by_role("dialog", name="Tools")
    dialog.get_by_label("Server URL").fill(protected.url)
    dialog.get_by_role("button", name="Add server").click()
    item = expect_sign_in_offered(page, protected.url)
    assert protected.provider.authorizations == []  # nothing was authorized before the click

    sign_in(page, item)
    expect(item).to_have_attribute("data-status", "connected", timeout=REPLY_TIMEOUT_MS)
    expect(item.get_by_text("get_capital", exact=True)).to_be_visible()
    expect(item.get_by_role("button", name="Sign in")).to_have_count(0)
    expect(item.get_by_role("alert")).to_have_count(0)
    # One authorization, for this server's resource, with PKCE, back to the app's own URL.
    (authorization,) = protected.provider.authorizations
    assert str(authorization.resource) == protected.url
    assert authorization.code_challenge
    assert str(authorization.redirect_uri) == site_url.split("#")[0]
    assert protected.provider.token_requests == ["authorization_code"]
    (token,) = protected.provider.access
    (refresh,) = protected.provider.refresh
    dialog.get_by_role("button", name="Close").click()

    send(page, "What is the capital of the UK?")
    card = page.get_by_role("group", name="Tool get_capital")
    expect(card).to_have_attribute("data-status", "waiting", timeout=REPLY_TIMEOUT_MS)
    card.get_by_role("button", name="Allow once").click()
    expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
    expect(last_reply(page).locator(".content")).to_have_text(expected(TEXT_TURN)["text"], timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)  # the finished turn may be drawn again from the store: read the card after that
    card.locator("summary").click()
    expect(card.locator(".tool-result")).to_contain_text(RESULT)
    args = json.loads(card.locator(".tool-args").text_content() or "")
    assert args == expected(TOOL_TURN)["tool_calls"][0]["arguments"]

    # The tool ran on the protected server, authorized by the token the sign-in obtained.
    assert protected.tool_tokens == [token]
    followup = vendor.model_requests[1].json["messages"]
    assert RESULT in json.dumps([m for m in followup if m["role"] == "tool"])

    # The tokens never reached the page's thread (T-A11): no result, event or log from the worker carries them.
    received = worker_messages(page)
    assert protected.url in received  # the hook saw the sign-in's result (so the record is the real one)...
    assert token not in received and refresh not in received  # ...which names the grant, not its tokens
    # Not sent to the vendor, not in the address bar, and stored only as ciphertext under a key no script can export.
    stored = browser_storage_dump(page)
    assert protected.url in stored  # the server is remembered (so the dump is the real one)...
    for secret in (token, refresh):
        assert secret not in stored  # ...but not its tokens
        for request in vendor.requests:
            assert secret not in request.body.decode() and secret not in json.dumps(request.headers)
        assert secret not in page.url
    assert "code=" not in page.url and "state=" not in page.url
    assert vault_key(page) == {"type": "secret", "algorithm": "AES-GCM", "extractable": False,
                               "exported": "InvalidAccessError"}
    # The browser sent the token to the protected server's MCP endpoint only, as a bearer header.
    carried = [(r.url, where) for r in sent for where, text in [*r.headers.items(), ("url", r.url),
                                                                ("body", r.post_data or "")]
               if token in text or refresh in text]
    assert carried and all(where == (protected.url, "authorization") for where in carried), carried
    assert len(page.context.pages) == 1  # the popup is gone

    # After a reload the worker finds its saved sign-in: the remembered server connects without a popup.
    page.reload()
    wait_core(page)
    page.get_by_role("button", name="Tools", exact=True).click()
    item = server_item(page, protected.url)
    expect(item).to_have_attribute("data-status", "connected", timeout=REPLY_TIMEOUT_MS)
    expect(item.get_by_role("button", name="Sign in")).to_have_count(0)
    assert len(protected.provider.authorizations) == 1
    assert protected.provider.token_requests == ["authorization_code"]  # the saved access token, not a new one
    received = worker_messages(page)
    assert token not in received and refresh not in received

    # Deleting the server forgets its sign-in: added again, it asks to sign in again, and that works.
    item.get_by_role("button", name="Disconnect").click()
    item.get_by_role("button", name="Delete").click()
    expect(item).to_have_count(0)
    dialog.get_by_label("Server URL").fill(protected.url)
    dialog.get_by_role("button", name="Add server").click()
    item = expect_sign_in_offered(page, protected.url)
    sign_in(page, item)
    expect(item).to_have_attribute("data-status", "connected", timeout=REPLY_TIMEOUT_MS)
    expect(item.get_by_text("get_capital", exact=True)).to_be_visible()
    assert len(protected.provider.authorizations) == 2
    page.context.close()


def test_a_refused_sign_in_says_so_and_can_be_tried_again(browser: Browser, site_url: str,
                                                         protected: ProtectedServer):
    approve = protected.provider.authorize

    async def refuse(client: Any, params: Any) -> str:
        protected.provider.authorizations.append(params)
        raise AuthorizeError("access_denied", "the user clicked Deny")

    protected.provider.authorize = refuse  # the user says no on the authorization server's page
    page = open_app(browser, site_url)
    wait_ui(page)  # a first run: the setup card shows in the chat, nothing to close
    page.get_by_role("button", name="Tools", exact=True).click()
    dialog = page.get_by_role("dialog", name="Tools")
    dialog.get_by_label("Server URL").fill(protected.url)
    dialog.get_by_role("button", name="Add server").click()
    item = expect_sign_in_offered(page, protected.url)

    sign_in(page, item)
    # The refusal is named beside the server, which stays unconnected, and Sign in is still there.
    expect(item.get_by_role("alert")).to_have_text(
        "the authorization server refused: access_denied (the user clicked Deny)", timeout=REPLY_TIMEOUT_MS)
    expect(item).to_have_attribute("data-status", "error")
    expect(item.get_by_role("button", name="Sign in")).to_be_visible()
    assert len(protected.provider.authorizations) == 1 and protected.provider.access == {}
    assert "error=" not in page.url and "state=" not in page.url

    protected.provider.authorize = approve  # the user changes their mind
    sign_in(page, item)
    expect(item).to_have_attribute("data-status", "connected", timeout=REPLY_TIMEOUT_MS)
    expect(item.get_by_text("get_capital", exact=True)).to_be_visible()
    assert len(protected.provider.access) == 1
    page.context.close()
