"""The agent embedded in someone else's page (README "Embedding the agent in your page"): a bare page on a
plain static host imports ``orizuru.js`` from the built site, registers a JavaScript tool (a definition and
a handler) and runs a turn; the loopback vendor replays a real recorded tool call naming that tool, then
a real recorded answer. The handler gets the model's arguments, and its result reaches the vendor in the
next request. The example page that ships in dist/ boots the same way."""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading
from collections.abc import Iterator

import pytest
from conftest import DIST
from journeys import REPLY_TIMEOUT_MS
from playwright.sync_api import Browser, expect
from test_static_host import SUBPATH, SubpathHandler
from vendor_replay import VendorReplay, expected, with_tool_call

pytestmark = pytest.mark.e2e

TOOL_TURN, TEXT_TURN = "openai/chat-stream-tool-call", "openai/chat-stream-text-usage"
SSE = "text/event-stream; charset=utf-8"
KEY = "sk-embed-test-0000000000"


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    if not (DIST / "orizuru.js").is_file():
        pytest.fail(f"{DIST} is not built: run `python3 build.py build`")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(SubpathHandler, directory=str(DIST)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{SUBPATH}"
    finally:
        server.shutdown()
        server.server_close()


BARE_PAGE = """<!doctype html><meta charset="utf-8"><title>bare</title>
<script type="module">
import { createAgent, ERROR_CODES } from "./orizuru.js";
window.calls = [];
window.events = [];
const agent = createAgent({ profile: { vendor: "openai", model: "gpt-4o-mini", apiKey: %(key)s, baseUrl: %(base)s } });
agent.registerTool({ name: "get_capital", description: "The capital city of a country.",
                     inputSchema: { type: "object", properties: { country: { type: "string" } } } },
                   (args) => { window.calls.push(args); return "The capital of " + args.country + " is London."; });
window.codes = ERROR_CODES.length;
window.outcome = agent.run("What is the capital of the UK?", { onEvent: (ev) => window.events.push(ev.type) })
  .then((result) => ({ result, messages: agent.messages }), (err) => ({ error: err.message, code: err.code }));
</script>"""


def test_a_bare_page_embeds_the_agent_and_runs_its_own_javascript_tool(browser: Browser, site: str,
                                                                       vendor: VendorReplay):
    vendor.script_body("call get_capital", with_tool_call(TOOL_TURN, "get_capital", {"country": "UK"}, "call_page"),
                       content_type=SSE)
    vendor.script(TEXT_TURN)
    page = browser.new_page()
    page.route(site + "bare.html", lambda route: route.fulfill(
        content_type="text/html", body=BARE_PAGE % {"key": json.dumps(KEY), "base": json.dumps(vendor.url)}))
    page.goto(site + "bare.html")
    page.wait_for_function("() => window.outcome !== undefined")
    outcome = page.evaluate("() => window.outcome")  # awaits the run's promise
    assert "error" not in outcome, outcome
    assert outcome["result"]["stop_reason"] == "end_turn"
    assert page.evaluate("() => window.calls") == [{"country": "UK"}]  # the handler got the model's arguments
    # the tool was offered to the model, and its result went back in the next request
    first, second = (r.json for r in vendor.model_requests)
    assert [t["function"]["name"] for t in first["tools"]] == ["get_capital"]
    [result] = [m for m in second["messages"] if m["role"] == "tool"]
    assert result["tool_call_id"] == "call_page" and "The capital of UK is London." in result["content"]
    assert vendor.model_requests[0].headers["authorization"] == f"Bearer {KEY}"
    # the transcript the agent keeps: the question, the call, its result, the answer
    roles = [(m["role"], m["parts"][0]["type"]) for m in outcome["messages"]]
    assert roles == [("user", "text"), ("assistant", "tool_call"), ("user", "tool_result"), ("assistant", "text")]
    assert outcome["messages"][-1]["parts"][0]["text"] == expected(TEXT_TURN)["text"]
    events = page.evaluate("() => window.events")
    assert {"page_tool", "tool_end", "message", "text_delta"} <= set(events)
    assert page.evaluate("() => window.codes") > 20
    page.close()


def test_the_example_page_in_dist_boots_the_agent(browser: Browser, site: str):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site + "examples/embed.html")
    expect(page.locator("#log")).to_contain_text("core: ready", timeout=REPLY_TIMEOUT_MS)
    assert errors == []
    page.close()


LATER_PAGE = """<!doctype html><meta charset="utf-8"><title>later</title>
<script type="module">
import { createAgent } from "./orizuru.js";
const agent = createAgent({ profile: { vendor: "openai", model: "gpt-4o-mini", apiKey: "sk-x" } });
window.ready = agent.ready.then(() => "ready", (err) => err.message);
window.connect = () => agent.call("mcp.connect", { id: "url:nowhere", url: "http://127.0.0.1:9/mcp" })
  .then(() => "connected", (err) => err.code);
</script>"""


def test_wheels_only_some_methods_need_are_installed_after_ready_and_calls_wait_for_them(browser: Browser,
                                                                                        site: str):
    """Issue 22 item 2: jinja2, markupsafe and mcp-types (focus memory's templates, the MCP client's types) are
    not needed to be ready. Held at the network, the core still gets ready; a call that needs them waits until
    they arrive, then runs with them installed (an unreachable server's real error, not a missing module)."""
    context = browser.new_context()
    held = []
    context.route(re.compile(r".*/(jinja2|markupsafe|mcp_types)-[^/]+\.whl$"), lambda route: held.append(route))
    page = context.new_page()
    page.route(site + "later.html", lambda route: route.fulfill(content_type="text/html", body=LATER_PAGE))
    page.goto(site + "later.html")
    page.wait_for_function("() => window.ready !== undefined")
    assert page.evaluate("() => window.ready") == "ready"
    page.wait_for_function("() => window.connect !== undefined")
    page.evaluate("() => { window.outcome = window.connect(); }")
    page.wait_for_timeout(500)
    soon = "() => Promise.race([window.outcome, new Promise((r) => setTimeout(() => r('waiting'), 200))])"
    assert page.evaluate(soon) == "waiting"
    assert sorted(route.request.url.rsplit("/", 1)[1].split("-")[0] for route in held) == \
        ["jinja2", "markupsafe", "mcp_types"]
    for route in held:
        route.continue_()
    assert page.evaluate("() => window.outcome") == "mcp_unreachable"
    context.close()
