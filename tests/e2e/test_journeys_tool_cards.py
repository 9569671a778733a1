"""Tool cards as a user meets them, with real MCP servers added by URL (tests/e2e/journeys_tool_servers.py:
the official Python SDK, and @modelcontextprotocol/server-everything) and the loopback vendor replaying real
recorded bytes (a recorded tool call, renamed where the test needs another tool).

- A tool that reports progress shows it on its card (a <progress> bar with the server's message); the
  answer after the tool is on screen and on the conversation's path, and a conversation stored with the
  empty steps older builds left comes back whole when opened.
- The approval card says which server asks and with what arguments (readable JSON, long values folded),
  and offers Allow once, Always allow this tool, Deny.
- Always allow holds for that server's tool only, and only while its definition stays the same.
- A tool the user stopped says "stopped" in its summary, not "failed" in red, also drawn again after a reload.
- MCP 2026-07-28 (issue 31): a form asked in rounds; a tool another client adds reaches the open Tools panel on the
  page's subscriptions/listen stream; a call the server runs as a task shows the task's status, asks through
  tasks/update and is cancelled by Stop; a registry search (a local stand-in) connects a remote in one click.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from journeys import (
    REPLY_TIMEOUT_MS,
    add_server,
    close_tools,
    configure,
    dollars,
    last_reply,
    list_price,
    open_app,
    replies,
    send,
    set_conversation_cap,
    tools_dialog,
    usage_line,
    wait_core,
    wait_idle,
)
from journeys_tool_servers import (
    EVERYTHING,
    NODE,
    PROGRESS_MESSAGE,
    free_port,
    grow_elsewhere,
    serve_everything,
    serve_tools,
)
from mcp_servers import serve_asgi
from playwright.sync_api import Browser, Locator, Page, expect
from registry_standin import published, registry_app
from tasks_server import TasksState, tasks_app
from vendor_replay import VendorReplay, expected, with_tool_call

from pycore.agent.tools import AgentTool, ToolRegistry, ToolResult

pytestmark = pytest.mark.e2e

TOOL_TURN, TEXT_TURN = "openai/chat-stream-tool-call", "openai/chat-stream-text-usage"
ANSWER = expected(TEXT_TURN)["text"]
QUESTION = "What is the capital of the UK?"
SSE = "text/event-stream; charset=utf-8"
NOT_INTERRUPTED = ".transcript li.msg[data-state=interrupted]"


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


KEY = "sk-tool-cards-test"


def start(browser: Browser, site_url: str, vendor: VendorReplay) -> Page:
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    return page


def script_call(vendor: VendorReplay, tool: str, arguments: dict[str, Any] | str, call_id: str) -> None:
    """The next model turn calls ``tool`` with ``arguments``; the turn after it answers in text."""
    vendor.script_body(f"call {tool}", with_tool_call(TOOL_TURN, tool, arguments, call_id), content_type=SSE)
    vendor.script(TEXT_TURN)


def model_names(*urls: str) -> dict[str, str]:
    """The name the model sees for each URL-added server's ``get_capital`` when all of them are connected."""
    async def never(arguments: dict[str, Any], context: Any) -> ToolResult:
        raise AssertionError("not run")

    tools = {url: AgentTool(name="get_capital", description="", input_schema={}, handler=never,
                            source=f"mcp:url:{url}") for url in urls}
    registry = ToolRegistry(tools.values())
    return {url: registry.model_name(tool) for url, tool in tools.items()}


def stored(page: Page) -> dict[str, Any]:
    """The conversations and messages in this origin's IndexedDB, read directly."""
    data: dict[str, Any] = page.evaluate("""async () => {
      const db = await new Promise((ok, no) => {
        const r = indexedDB.open("orizuru"); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error);
      });
      const all = (name) => new Promise((ok, no) => {
        const r = db.transaction(name).objectStore(name).getAll(); r.onsuccess = () => ok(r.result);
        r.onerror = () => no(r.error);
      });
      const out = {conversations: await all("conversations"), messages: await all("messages")};
      db.close();
      return out;
    }""")
    return data


def kinds(message: dict[str, Any]) -> tuple[str, str]:
    return message["role"], "+".join(sorted({p["type"] for p in message["parts"]})) or "empty"


def path_on_show(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The one conversation's messages from its first to its current leaf."""
    [conversation] = data["conversations"]
    by_id = {m["id"]: m for m in data["messages"]}
    path, cur = [], by_id.get(conversation["current_leaf"])
    while cur:
        path.insert(0, cur)
        cur = by_id.get(cur["parent_id"])
    return path


WHOLE_TURN = [("user", "text"), ("assistant", "tool_call"), ("user", "tool_result"), ("assistant", "text")]


def expect_whole_turn(page: Page) -> None:
    """On screen, the question and ONE reply (issue 29 item 6): the tool's card inside it, then the answer, under
    one header, with one usage line (both steps' tokens added up), one Copy and one Regenerate. On disk: question,
    tool call, its result, the answer; nothing empty or interrupted."""
    expect(replies(page)).to_have_count(1)
    reply = last_reply(page)
    expect(reply.locator(".content")).to_have_text(ANSWER)
    expect(reply.locator(".step")).to_have_count(2)
    expect(reply.locator(".tool-card")).to_have_count(1)
    for one in (".meta", ".usage", "button.copy", "button.regenerate"):
        expect(reply.locator(one)).to_have_count(1)
    call, answer = expected(TOOL_TURN)["usage"], expected(TEXT_TURN)["usage"]
    both = {key: call[key] + answer[key] for key in ("input_tokens", "output_tokens")}
    cost = sum(list_price("gpt-4o-mini", "openai", u)["usd"] for u in (call, answer))  # each step at its price
    expect(reply.locator(".usage")).to_have_text(usage_line(both, dollars(cost)))
    expect(page.locator(NOT_INTERRUPTED)).to_have_count(0)
    expect(page.locator(".transcript nav.branches")).to_have_count(0)
    data = stored(page)
    assert [kinds(m) for m in path_on_show(data)] == WHOLE_TURN
    assert len(data["messages"]) == len(WHOLE_TURN), [kinds(m) for m in data["messages"]]


def reopen(page: Page, title: str = QUESTION) -> None:
    """Reload and open the conversation from the sidebar, as a user coming back does."""
    page.reload()
    settings = page.get_by_role("dialog", name="Settings")
    expect(page.locator("html")).to_have_attribute("data-ui", "ready", timeout=REPLY_TIMEOUT_MS)
    if settings.is_visible():
        settings.get_by_role("button", name="Close").click()
    page.get_by_role("button", name=title, exact=True).click()


def ask_allowed(browser: Browser, site_url: str, vendor: VendorReplay, url: str) -> Page:
    """The app with the server at ``url`` added and its get_capital allowed; the question sent."""
    page = start(browser, site_url, vendor)
    item = add_server(page, url)
    item.get_by_role("combobox", name="Approval for get_capital").select_option("allow")
    close_tools(page)
    send(page, QUESTION)
    return page


# -- Defect 2: progress -----------------------------------------------------------------------------------


def test_progress_shows_on_the_tool_card_and_the_answer_follows_the_tool(browser: Browser, site_url: str,
                                                                         vendor: VendorReplay):
    with serve_tools(origin(site_url), "A", gated=True) as server:
        vendor.script(TOOL_TURN, TEXT_TURN)
        page = ask_allowed(browser, site_url, vendor, server.url)

        card = page.get_by_role("group", name="Tool get_capital")
        bar = card.get_by_role("progressbar", name="Progress of get_capital")
        expect(bar).to_have_attribute("value", "1", timeout=REPLY_TIMEOUT_MS)
        expect(bar).to_have_attribute("max", "2")
        expect(card.locator(".tool-progress")).to_contain_text(PROGRESS_MESSAGE.format(country="UK"))
        expect(card).to_have_attribute("data-status", "running")
        expect(replies(page)).to_have_count(1)  # the progress opened no reply of its own

        server.gate.set()
        expect(last_reply(page).locator(".content")).to_have_text(ANSWER, timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        expect(card).to_have_attribute("data-status", "done")
        expect(card.locator(".tool-result")).to_contain_text(server.answer("UK"))
        expect_whole_turn(page)

        reopen(page)
        expect_whole_turn(page)
        page.context.close()


@pytest.mark.skipif(not NODE.exists() or not EVERYTHING.exists(), reason="npm devDependencies missing")
def test_server_everything_long_running_operation_keeps_the_answer(browser: Browser, site_url: str,
                                                                    vendor: VendorReplay):
    with serve_everything() as url:
        script_call(vendor, "trigger-long-running-operation", {"duration": 2, "steps": 4}, "call_long_running")
        page = start(browser, site_url, vendor)
        item = add_server(page, url)
        item.get_by_role("combobox", name="Approval for trigger-long-running-operation").select_option("allow")
        close_tools(page)
        send(page, "Run the long operation")

        card = page.get_by_role("group", name="Tool trigger-long-running-operation")
        expect(last_reply(page).locator(".content")).to_have_text(ANSWER, timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        expect(card).to_have_attribute("data-status", "done")
        expect_whole_turn(page)
        # the model got the tool's real answer
        assert "Long running operation completed" in vendor.model_requests[1].body.decode()

        page.reload()
        expect(page.locator("html")).to_have_attribute("data-ui", "ready", timeout=REPLY_TIMEOUT_MS)
        page.get_by_role("button", name="Run the long operation", exact=True).click()
        expect_whole_turn(page)
        page.context.close()


@pytest.mark.skipif(not NODE.exists() or not EVERYTHING.exists(), reason="npm devDependencies missing")
def test_a_restarted_server_keeps_working_and_a_gone_one_is_unreachable_in_tools(browser: Browser, site_url: str,
                                                                                  vendor: VendorReplay):
    """Issue 29 item 9: server-everything restarted while connected answers the old session with 400 (not the
    specification's 404); the call still goes through on a new session. With the server gone, the card and
    Tools say so in a sentence (never "MCPConnectionError … TypeError: Failed to fetch"), and Reconnect works."""
    port = free_port()
    page = start(browser, site_url, vendor)
    cards = page.get_by_role("group", name="Tool echo")
    with serve_everything(port) as url:
        item = add_server(page, url)
        item.get_by_role("combobox", name="Approval for echo").select_option("allow")
        close_tools(page)
    with serve_everything(port):  # the same address, a new process: it knows no session
        script_call(vendor, "echo", {"message": "after the restart"}, "call_echo_restarted")
        send(page, "Echo after the restart")
        wait_idle(page)
        expect(cards.last).to_have_attribute("data-status", "done")
        expect(cards.last.locator(".tool-result")).to_contain_text("Echo: after the restart")

    script_call(vendor, "echo", {"message": "nobody there"}, "call_echo_gone")
    send(page, "Echo with the server gone")
    wait_idle(page)
    sentence = (f"Couldn't reach the MCP server at 127.0.0.1:{port}: it may be down or blocking this page (CORS). "
                "Check it's running, then Reconnect in Tools.")
    expect(cards.last).to_have_attribute("data-status", "error")
    expect(cards.last.locator(".tool-result")).to_have_text(f"echo failed: {sentence}")
    assert sentence in vendor.model_requests[-1].body.decode()  # the model reads the same sentence

    item = tools_dialog(page).locator("#mcp-servers li.server").filter(has_text=url)
    expect(item).to_have_attribute("data-status", "unreachable")
    expect(item.get_by_role("alert")).to_have_text(sentence)
    with serve_everything(port):
        item.get_by_role("button", name=re.compile("^Reconnect")).click()
        expect(item).to_have_attribute("data-status", "connected", timeout=REPLY_TIMEOUT_MS)
        expect(item.get_by_role("alert")).to_have_count(0)
    page.context.close()


def test_a_call_with_broken_or_missing_arguments_is_not_run_and_its_card_shows_what_the_model_wrote(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """Issue 29 item 10: arguments cut off mid-string are not completed by a guess, and a call missing a required
    argument is not sent: neither reaches the server; the model is told why; the card shows the text as written,
    also when the conversation is opened again."""
    broken = '{"title": "Groceries", "text": "eggs, mil'
    with serve_tools(origin(site_url), "A") as server:
        script_call(vendor, "write_note", broken, "call_broken")
        page = start(browser, site_url, vendor)
        add_server(page, server.url).get_by_role("combobox", name="Approval for write_note").select_option("allow")
        close_tools(page)
        send(page, "Save my groceries")
        wait_idle(page)
        card = page.get_by_role("group", name="Tool write_note")
        expect(card).to_have_attribute("data-status", "error")
        expect(card.locator(".tool-args")).to_have_text(broken)
        not_json = "write_note was not run: arguments were not valid JSON: Unterminated string"
        expect(card.locator(".tool-result")).to_contain_text(not_json)
        assert not_json in vendor.model_requests[1].body.decode()

        script_call(vendor, "write_note", {"title": "Groceries"}, "call_missing")
        send(page, "Save it again")
        wait_idle(page)
        cards = page.get_by_role("group", name="Tool write_note")
        expect(cards.last.locator(".tool-result")).to_have_text(
            "write_note was not run: missing required argument `text`")
        assert server.calls == []

        reopen(page, "Save my groceries")
        expect(page.get_by_role("group", name="Tool write_note").first.locator(".tool-args")).to_have_text(broken)
        page.context.close()


def store_as_an_old_build(page: Page, current_leaf: str, messages: list[dict[str, Any]]) -> None:
    """The conversation ``c-old`` (titled QUESTION) put in IndexedDB record for record as an older build left it."""
    page.evaluate("""async ({conversation, messages}) => {
      const db = await new Promise((ok, no) => {
        const r = indexedDB.open("orizuru"); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error);
      });
      const tx = db.transaction(["conversations", "messages"], "readwrite");
      tx.objectStore("conversations").put(conversation);
      for (const m of messages) tx.objectStore("messages").put({...m, conversation_id: conversation.id});
      await new Promise((ok, no) => { tx.oncomplete = ok; tx.onerror = () => no(tx.error); });
      db.close();
    }""", {"conversation": {"id": "c-old", "title": QUESTION, "created": messages[0]["created"] - 11,
                            "updated": messages[-1]["created"] + 2, "current_leaf": current_leaf},
           "messages": messages})


def old_turn(result: dict[str, Any], t0: float) -> list[dict[str, Any]]:
    """Field for field what an older build stored for a turn with a tool call (read back from its IndexedDB): the
    question, the call, ``result`` (its tool results message) and the answer after it."""
    call = expected(TOOL_TURN)["tool_calls"][0]
    who = {"vendor": "openai", "model": "gpt-4o-mini"}
    return [
        {"id": "m-user", "role": "user", "parts": [{"type": "text", "text": QUESTION}], "status": "complete",
         "parent_id": None, "created": t0},
        {"id": "m-call", "role": "assistant", **who, "parent_id": "m-user", "created": t0 + 98,
         "parts": [{"type": "tool_call", "id": call["id"], "name": call["name"], "arguments": call["arguments"],
                    "id_synthesized": False, "vendor": "openai"}], "status": "complete",
         "usage": {"input_tokens": 53, "output_tokens": 15}, "finish_reason": "tool_calls", "finished": t0 + 149},
        {"id": "m-result", "role": "user", "status": "complete", "parent_id": "m-call", "created": t0 + 2202,
         **result},
        {"id": "m-answer", "role": "assistant", **who, "parent_id": "m-result", "created": t0 + 2206,
         "parts": [{"type": "text", "text": ANSWER, "refusal": False, "vendor": "openai"}], "status": "complete",
         "usage": {"input_tokens": 78, "output_tokens": 9}, "finish_reason": "stop", "finished": t0 + 2263},
    ]


def old_result(text: str, tool_meta: dict[str, Any]) -> dict[str, Any]:
    call = expected(TOOL_TURN)["tool_calls"][0]
    return {"parts": [{"type": "tool_result", "call_id": call["id"], "name": call["name"],
                       "content": [{"type": "text", "text": text, "refusal": False}], "is_error": False}],
            "tool_meta": {call["id"]: tool_meta}}


def test_a_conversation_stored_with_an_empty_progress_step_comes_back_whole(browser: Browser, site_url: str):
    """Older builds opened an empty reply for each progress notification: the stored tree became
    tool call → [empty (interrupted) → answer, tool result], the current leaf on the tool result. Built
    here in IndexedDB as those builds stored it; opening the conversation repairs it."""
    page = open_app(browser, site_url)
    result = "The capital of UK is London (answered by the capitals MCP server)."
    t0 = time.time() * 1000 - 60_000
    user, call, results, answer = old_turn(old_result(result, {"duration_ms": 2055.8}), t0)
    empty = {"id": "m-empty", "role": "assistant", "parts": [], "status": "interrupted", "vendor": "openai",
             "model": "gpt-4o-mini", "parent_id": "m-call", "created": t0 + 667, "finished": t0 + 2203}
    store_as_an_old_build(page, "m-result", [user, call, empty, results, {**answer, "parent_id": "m-empty"}])

    reopen(page)
    card = page.get_by_role("group", name="Tool get_capital")
    expect(card).to_have_attribute("data-status", "done")
    expect(card.locator(".tool-result")).to_contain_text(result)
    expect_whole_turn(page)
    data = stored(page)
    assert {m["id"]: m["parent_id"] for m in data["messages"]} == {
        "m-user": None, "m-call": "m-user", "m-result": "m-call", "m-answer": "m-result"}
    assert data["conversations"][0]["current_leaf"] == "m-answer"
    page.context.close()


OLD_CARD = {"duration_ms": 2055.8, "stopped": True, "structured": {"capital": "London", "country": "UK"},
            "schema_problem": "'population' is a required property", "source": "mcp:gone-server",
            "links": [{"type": "resource_link", "uri": "file:///capitals/london.md", "name": "london.md"}],
            "asked": [{"id": "q1", "kind": "form", "asker": "Capitals server", "message": "Which country?",
                       "action": "accept", "content": {"country": "UK"}, "answer": "country: UK"}]}


def test_a_tool_card_an_older_build_kept_beside_its_result_shows_as_it_did(browser: Browser, site_url: str):
    """Issue 30: a card's data is on its result part now (display). What older builds kept beside the results
    (tool_meta) is read into it: the card says stopped, with its time, its structured result and schema problem,
    the resource link the server returned and what the server asked and the user answered."""
    page = open_app(browser, site_url)
    store_as_an_old_build(page, "m-answer", old_turn(old_result("London", OLD_CARD), time.time() * 1000 - 60_000))
    reopen(page)
    card = page.get_by_role("group", name="Tool get_capital")
    expect(card).to_have_attribute("data-status", "stopped")
    expect(card.locator(".tool-duration")).to_contain_text("2056")
    card.locator("summary").first.click()
    expect(card.locator(".tool-structured")).to_contain_text('"country": "UK"')
    expect(card.locator(".tool-schema-problem")).to_contain_text("'population' is a required property")
    expect(card.locator(".tool-result")).to_contain_text("london.md")
    expect(card.get_by_role("region", name="Asked during the call")).to_contain_text(
        "Capitals server asked: Which country?")
    expect(card.get_by_role("region", name="Asked during the call")).to_contain_text("country: UK")
    expect_whole_turn(page)
    page.context.close()

# -- Defect 3: what the approval card shows ----------------------------------------------------------------

LONG_TEXT = "\n".join(f"Line {i}: buy {n} of item number {i}" for i, n in enumerate(range(40, 80)))


def test_the_approval_card_shows_the_server_and_the_arguments_and_offers_three_choices(
        browser: Browser, site_url: str, vendor: VendorReplay):
    with serve_tools(origin(site_url), "A") as server:
        first = {"title": "Groceries", "text": LONG_TEXT}
        script_call(vendor, "write_note", first, "call_note_1")
        script_call(vendor, "write_note", {"title": "Second", "text": "short"}, "call_note_2")
        page = start(browser, site_url, vendor)
        add_server(page, server.url)
        close_tools(page)
        send(page, "Save my shopping list")

        card = page.get_by_role("group", name="Tool write_note")
        expect(card).to_have_attribute("data-status", "waiting", timeout=REPLY_TIMEOUT_MS)
        approval = card.get_by_role("region", name="Approval for write_note")
        expect(approval.locator(".approval-server")).to_have_text(server.url)  # who asks: the URL the user added
        expect(approval.locator(".approval-tool")).to_have_text("write_note")
        expect(approval.get_by_role("note")).to_have_count(0)  # nothing read from another server: no reason
        stray = approval.evaluate("(el) => [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.data)")
        assert stray == [], stray  # no loose text (the card showed "null" where a reason would go)
        args = approval.locator(".approval-args")
        expect(args).to_contain_text('"title": "Groceries"')  # readable JSON
        fold = args.locator("details")  # the long value, folded
        expect(fold).to_have_count(1)
        expect(fold.locator("summary")).to_contain_text("Line 0: buy 40")
        expect(fold.locator("summary")).to_contain_text(f"{len(LONG_TEXT):,} characters")
        expect(args.get_by_text("Line 39: buy 79 of item number 39")).to_be_hidden()
        fold.locator("summary").click()
        expect(args.get_by_text("Line 39: buy 79 of item number 39")).to_be_visible()
        buttons = approval.get_by_role("button")
        expect(buttons).to_have_text(["Allow once", "Always allow this tool", "Deny"])

        approval.get_by_role("button", name="Allow once").click()
        expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
        expect(approval).to_be_hidden()
        expect(last_reply(page).locator(".content")).to_have_text(ANSWER, timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert server.calls == [("write_note", first)]

        # Allow once was for that call: the next call of the same tool asks again, and Deny runs nothing.
        send(page, "And another note")
        card = page.get_by_role("group", name="Tool write_note").last
        expect(card).to_have_attribute("data-status", "waiting", timeout=REPLY_TIMEOUT_MS)
        card.get_by_role("region", name="Approval for write_note").get_by_role("button", name="Deny").click()
        expect(card).to_have_attribute("data-status", "denied")
        expect(last_reply(page).locator(".content")).to_have_text(ANSWER, timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        expect(card).to_have_attribute("data-status", "denied")  # drawn again from the store: still denied
        assert server.calls == [("write_note", first)]
        page.context.close()


# -- Trust boundaries 1: whose tool "Always allow" is for ----------------------------------------------------


def test_always_allow_for_one_servers_tool_does_not_run_another_servers_tool_of_that_name(
        browser: Browser, site_url: str, vendor: VendorReplay):
    with serve_tools(origin(site_url), "A") as a, serve_tools(origin(site_url), "B") as b:
        names = model_names(a.url, b.url)
        script_call(vendor, names[b.url], {"country": "UK"}, "call_b")
        script_call(vendor, names[a.url], {"country": "France"}, "call_a")
        page = start(browser, site_url, vendor)
        item_a = add_server(page, a.url)
        item_a.get_by_role("combobox", name="Approval for get_capital").select_option("allow")
        add_server(page, b.url)  # added later, offering a tool of the same name
        close_tools(page)

        send(page, QUESTION)  # the model calls B's get_capital
        card = page.locator(".tool-card").last
        expect(card).to_have_attribute("data-status", "waiting", timeout=REPLY_TIMEOUT_MS)
        assert b.calls == []
        approval = card.get_by_role("region", name="Approval for get_capital")
        expect(approval.locator(".approval-server")).to_have_text(b.url)
        approval.get_by_role("button", name="Deny").click()
        expect(last_reply(page).locator(".content")).to_have_text(ANSWER, timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert b.calls == [] and a.calls == []

        send(page, "And of France?")  # the model calls A's get_capital: allowed, so it runs unasked
        card = page.locator(".tool-card").last
        expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert a.calls == [("get_capital", {"country": "France"})] and b.calls == []
        page.context.close()


def test_always_allow_on_the_card_holds_until_the_tools_definition_changes(browser: Browser, site_url: str,
                                                                           vendor: VendorReplay):
    port = free_port()
    with serve_tools(origin(site_url), "A", port=port) as server:
        script_call(vendor, "get_capital", {"country": "UK"}, "call_1")
        script_call(vendor, "get_capital", {"country": "Japan"}, "call_2")
        page = start(browser, site_url, vendor)
        add_server(page, server.url)
        close_tools(page)

        send(page, QUESTION)
        card = page.get_by_role("group", name="Tool get_capital")
        card.get_by_role("button", name="Always allow this tool").click(timeout=REPLY_TIMEOUT_MS)
        expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        expect(tools_dialog(page).locator("#mcp-servers li.server").get_by_role(
            "combobox", name="Approval for get_capital")).to_have_value("allow")
        close_tools(page)

        send(page, "And of Japan?")  # remembered: runs without asking
        card = page.get_by_role("group", name="Tool get_capital").last
        expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert server.calls == [("get_capital", {"country": "UK"}), ("get_capital", {"country": "Japan"})]

    # The same server comes back with get_capital's description changed: the choice no longer holds.
    with serve_tools(origin(site_url), "A", port=port, description="The capital city; also sends your files.") \
            as changed:
        script_call(vendor, "get_capital", {"country": "France"}, "call_3")
        item = tools_dialog(page).locator("#mcp-servers li.server").filter(has_text=changed.url)
        item.get_by_role("button", name=re.compile("^Disconnect")).click()
        item.get_by_role("button", name=re.compile("^Connect")).click()
        expect(item).to_have_attribute("data-status", "connected", timeout=REPLY_TIMEOUT_MS)
        expect(item.get_by_role("combobox", name="Approval for get_capital")).to_have_value("ask")
        expect(item.get_by_text("Changed since you allowed it: it asks again")).to_be_visible()
        close_tools(page)

        send(page, "And of France?")
        card = page.get_by_role("group", name="Tool get_capital").last
        expect(card).to_have_attribute("data-status", "waiting", timeout=REPLY_TIMEOUT_MS)
        assert changed.calls == []
        card.get_by_role("button", name="Allow once").click()
        expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert changed.calls == [("get_capital", {"country": "France"})]
        page.context.close()


# -- Trust boundaries 2: tools that appear later, and data going from one server to another ------------------


def test_a_tool_added_while_connected_shows_in_the_panel_as_new_and_asks_even_on_a_trusted_server(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """T-P3: the server adds ``later`` (which calls itself read-only) and announces it with list_changed."""
    with serve_tools(origin(site_url), "A") as server:
        script_call(vendor, "grow", {"name": "later"}, "call_grow")
        script_call(vendor, "later", {}, "call_later")
        page = start(browser, site_url, vendor)
        item = add_server(page, server.url)
        switch = item.get_by_role("checkbox", name=re.compile("^Trust "))
        expect(switch).not_to_be_checked()  # trust is the user's choice, off by default
        item.get_by_text("Trust this server").click()
        expect(switch).to_be_checked()
        expect(item.locator(".tool-list li[data-tool=later]")).to_have_count(0)
        close_tools(page)

        send(page, "Grow a tool")  # a trusted server's tool with no hint runs without asking
        card = page.get_by_role("group", name="Tool grow")
        expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert server.calls == [("grow", {"name": "later"})]

        # The Tools panel lists the tool the server added, marked new
        item = tools_dialog(page).locator("#mcp-servers li.server").filter(has_text=server.url)
        later = item.locator(".tool-list li[data-tool=later]")
        expect(later).to_have_attribute("data-new", "true", timeout=REPLY_TIMEOUT_MS)
        expect(later).to_contain_text("New or changed since connecting: it asks before its first run")
        expect(item.locator(".tool-list li[data-tool=grow]")).not_to_have_attribute("data-new", "true")
        close_tools(page)

        send(page, "Use it")  # new since connecting: it asks, though its server is trusted and it says read-only
        card = page.get_by_role("group", name="Tool later")
        expect(card).to_have_attribute("data-status", "waiting", timeout=REPLY_TIMEOUT_MS)
        assert server.calls == [("grow", {"name": "later"})]
        card.get_by_role("button", name="Allow once").click()
        expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert server.calls == [("grow", {"name": "later"}), ("later", {})]
        page.context.close()


def test_data_read_from_one_server_asks_before_another_servers_tool_and_the_card_says_why(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """T-P4: both tools allowed; in one reply A's result would go to B's open-world tool."""
    with serve_tools(origin(site_url), "A") as a, serve_tools(origin(site_url), "B") as b:
        capital = model_names(a.url, b.url)[a.url]
        note = {url: name.replace("get_capital", "write_note") for url, name in model_names(a.url, b.url).items()}
        vendor.script_body("call A", with_tool_call(TOOL_TURN, capital, {"country": "UK"}, "call_read"),
                           content_type=SSE)
        vendor.script_body("call B", with_tool_call(TOOL_TURN, note[b.url], {"title": "x", "text": "London"},
                                                    "call_send"), content_type=SSE)
        vendor.script(TEXT_TURN)
        page = start(browser, site_url, vendor)
        item_a, item_b = add_server(page, a.url), add_server(page, b.url)
        item_a.get_by_role("combobox", name="Approval for get_capital").select_option("allow")
        item_b.get_by_role("combobox", name="Approval for write_note").select_option("allow")
        close_tools(page)

        send(page, QUESTION)
        read = page.get_by_role("group", name=f"Tool {capital}")  # the model's names: two servers, one tool name
        expect(read).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)  # allowed: ran unasked
        card = page.get_by_role("group", name=f"Tool {note[b.url]}")
        expect(card).to_have_attribute("data-status", "waiting", timeout=REPLY_TIMEOUT_MS)  # allowed, yet asks
        approval = card.get_by_role("region", name="Approval for write_note")
        expect(approval.locator(".approval-server")).to_have_text(b.url)
        expect(approval.get_by_role("note")).to_have_text(
            "Asked although allowed: this reply has read data from "
            f"{a.url}, and this tool of another server may send it elsewhere.")
        assert b.calls == []
        approval.get_by_role("button", name="Deny").click()
        expect(last_reply(page).locator(".content")).to_have_text(ANSWER, timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert a.calls == [("get_capital", {"country": "UK"})] and b.calls == []
        page.context.close()


# -- Issue 29 item 7: a tool the user stopped says "stopped" -------------------------------------------------


def test_a_tool_stopped_by_the_user_says_stopped_not_failed_and_still_does_after_a_reload(
        browser: Browser, site_url: str, vendor: VendorReplay):
    with serve_tools(origin(site_url), "A", gated=True) as server:
        vendor.script(TOOL_TURN)
        page = ask_allowed(browser, site_url, vendor, server.url)

        card = page.get_by_role("group", name="Tool get_capital")
        expect(card).to_have_attribute("data-status", "running", timeout=REPLY_TIMEOUT_MS)
        page.get_by_role("button", name="Stop", exact=True).click()
        wait_idle(page)
        failed_red = card.evaluate("(el) => getComputedStyle(el).getPropertyValue('--accent')")

        def expect_stopped() -> None:
            expect(card).to_have_attribute("data-status", "stopped", timeout=REPLY_TIMEOUT_MS)
            expect(card.locator(".tool-status")).to_have_text("stopped")  # in the summary, without opening the card
            color = card.locator(".tool-status").evaluate("(el) => getComputedStyle(el).color")
            red = card.evaluate("(el, c) => { const s = document.createElement('span'); s.style.color = c;"
                                " el.append(s); const v = getComputedStyle(s).color; s.remove(); return v; }",
                                failed_red.strip())
            assert color != red, "a stopped tool is shown in the colour of a failure"

        expect_stopped()
        [results] = [m for m in stored(page)["messages"] if m["parts"][0]["type"] == "tool_result"]
        assert "tool_meta" not in results  # the card's data is on the result part (issue 30)
        assert results["parts"][0]["display"]["stopped"] is True
        reopen(page)
        expect_stopped()
        page.context.close()


# -- MCP 2026-07-28 (issue 31) ----------------------------------------------------------------------------


def test_a_2026_server_asks_its_form_in_rounds_beside_an_older_server_and_tools_names_each_revision(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """A server speaking only 2026-07-28 and an older one in one conversation: the Tools panel says which revision
    each speaks; the 2026 server's tool asks its form in an input_required result, shown as every server's
    question is, and the call sent again with the answer runs; the older server's tool runs as before."""
    with serve_tools(origin(site_url), "A") as older, serve_tools(origin(site_url), "M", modern=True) as modern:
        page = start(browser, site_url, vendor)
        old_item, new_item = add_server(page, older.url), add_server(page, modern.url)
        expect(new_item.locator(".protocol-badge")).to_have_text("MCP 2026-07-28")
        expect(new_item.locator(".protocol-badge")).to_have_attribute("title", re.compile("no session"))
        expect(old_item.locator(".protocol-badge")).to_have_text("MCP 2025-11-25")
        close_tools(page)
        script_call(vendor, "reserve", {"restaurant": "Kiln"}, "call_r")
        send(page, "Book Kiln.")
        card = page.get_by_role("group", name="Tool reserve")
        card.get_by_role("button", name="Allow once").click(timeout=REPLY_TIMEOUT_MS)
        form = card.get_by_role("group", name=f"{modern.url} asks")
        expect(form).to_contain_text("Who is coming to Kiln?", timeout=REPLY_TIMEOUT_MS)
        expect(form.get_by_label("Guests")).to_have_value("2")  # the schema's default, filled in
        form.get_by_label("Name *").fill("Ada")
        form.get_by_role("button", name="Accept").click()
        expect(last_reply(page).locator(".content")).to_have_text(ANSWER, timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert "Reserved Kiln for 2 under Ada." in str(vendor.model_requests[-1].json["messages"])
        assert modern.calls == [("reserve", {"restaurant": "Kiln"})]
        script_call(vendor, model_names(older.url, modern.url)[older.url], {"country": "UK"}, "call_c")
        send(page, QUESTION)
        approval = page.locator(".tool-card").last.get_by_role("region", name="Approval for get_capital")
        expect(approval.locator(".approval-server")).to_have_text(older.url, timeout=REPLY_TIMEOUT_MS)
        approval.get_by_role("button", name="Allow once").click()
        expect(replies(page)).to_have_count(2)
        expect(last_reply(page).locator(".content")).to_have_text(ANSWER, timeout=REPLY_TIMEOUT_MS)
        assert older.calls == [("get_capital", {"country": "UK"})]
        page.context.close()


def test_a_run_that_reaches_the_spending_cap_stops_before_the_request_after_its_tools(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """#35: the model's first step asked for a tool and passed the conversation's cap: the run stops there, saying
    why, and the request that would carry the tool's result to the model never leaves."""
    with serve_tools(origin(site_url), "A") as server:
        script_call(vendor, "write_note", {"title": "Groceries", "text": "milk"}, "call_note_1")
        page = start(browser, site_url, vendor)
        step = list_price("gpt-4o-mini", "openai", expected(TOOL_TURN)["usage"])["usd"]
        set_conversation_cap(page, step / 2)  # the first request's input fits under it; the step with its reply not
        add_server(page, server.url)
        close_tools(page)
        send(page, "Save my shopping list")
        toast = page.locator(".toast.error", has_text="Not sent: this conversation has cost")
        expect(toast).to_contain_text("Settings → Costs", timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        expect(last_reply(page).locator(".tool-card")).to_have_count(1)
        assert len(vendor.model_requests) == 1


def test_a_tool_another_client_adds_to_a_2026_server_shows_in_the_open_tools_panel_as_new_and_asks(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """The page hears of it on its subscriptions/listen stream: no call of ours could have told it (issue 31 item 3);
    new since connecting, it asks before its first run even on a trusted server (T-P3)."""
    with serve_tools(origin(site_url), "M", modern=True) as server:
        page = start(browser, site_url, vendor)
        item = add_server(page, server.url)
        item.get_by_text("Trust this server").click()
        later = item.locator(".tool-list li[data-tool=later]")
        expect(later).to_have_count(0)
        grow_elsewhere(server.url, "later")
        expect(later).to_have_attribute("data-new", "true", timeout=REPLY_TIMEOUT_MS)
        close_tools(page)
        script_call(vendor, "later", {}, "call_later")
        send(page, "Use it")
        card = page.get_by_role("group", name="Tool later")
        expect(card).to_have_attribute("data-status", "waiting", timeout=REPLY_TIMEOUT_MS)
        card.get_by_role("button", name="Allow once").click()
        expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert server.calls == [("grow", {"name": "later"}), ("later", {})]
        page.context.close()


@contextlib.contextmanager
def task_server(site_url: str, state: TasksState) -> Iterator[str]:
    """tests/pycore/mcp/tasks_server.py (the SDK, answering long calls as tasks) for the page; yields its URL."""
    with serve_asgi(lambda base: tasks_app(state, origin(site_url))) as (base, _):
        yield f"{base}/mcp"


def run_render(browser: Browser, site_url: str, vendor: VendorReplay, url: str) -> tuple[Page, Locator]:
    """The model calls render on the task server (allowed); its card once the task's status is on it."""
    page = start(browser, site_url, vendor)
    add_server(page, url).get_by_role("combobox", name="Approval for render").select_option("allow")
    close_tools(page)
    script_call(vendor, "render", {"frames": 2}, "call_render")
    send(page, "Render it.")
    card = page.get_by_role("group", name="Tool render")
    expect(card.locator(".tool-progress")).to_have_text("Rendering frame 1 of 2 · Task running on the server",
                                                        timeout=REPLY_TIMEOUT_MS)
    expect(card).to_have_attribute("data-task", "working")
    return page, card


def test_a_call_the_server_runs_as_a_task_shows_the_tasks_status_on_its_card_then_its_result(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """Issue 31 item 5: the server answers the call with a task; the card shows the task's status and the server's
    statusMessage while the core polls it, then the result, which the model gets as any call's."""
    state = TasksState(gate=threading.Event())
    with task_server(site_url, state) as url:
        page, card = run_render(browser, site_url, vendor, url)
        state.gate.set()
        expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
        expect(card.locator(".tool-progress")).to_be_hidden()
        expect(last_reply(page).locator(".content")).to_have_text(ANSWER, timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert "Rendered 2 frames." in str(vendor.model_requests[-1].json["messages"])
        assert state.calls == [("render", {"frames": 2})] and state.cancelled == []
        page.context.close()


def test_a_task_that_asks_shows_its_form_on_the_card_and_gets_the_answer_through_tasks_update(
        browser: Browser, site_url: str, vendor: VendorReplay):
    state = TasksState()
    with task_server(site_url, state) as url:
        page = start(browser, site_url, vendor)
        add_server(page, url).get_by_role("combobox", name="Approval for publish").select_option("allow")
        close_tools(page)
        script_call(vendor, "publish", {"title": "Spring"}, "call_publish")
        send(page, "Publish it.")
        card = page.get_by_role("group", name="Tool publish")
        form = card.get_by_role("group", name=f"{url} asks")
        expect(form).to_contain_text("Publish 'Spring'?", timeout=REPLY_TIMEOUT_MS)
        form.get_by_label("Note *").fill("looks good")
        form.get_by_role("button", name="Accept").click()
        expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert "Published 'Spring': looks good" in str(vendor.model_requests[-1].json["messages"])
        page.context.close()


def test_stop_cancels_a_task_on_its_server_and_the_card_says_stopped(
        browser: Browser, site_url: str, vendor: VendorReplay):
    state = TasksState(gate=threading.Event())  # never opened: the task runs until it is cancelled
    with task_server(site_url, state) as url:
        page, card = run_render(browser, site_url, vendor, url)
        page.get_by_role("button", name="Stop", exact=True).click()
        wait_idle(page)
        expect(card).to_have_attribute("data-status", "stopped", timeout=REPLY_TIMEOUT_MS)
        deadline = time.monotonic() + REPLY_TIMEOUT_MS / 1000
        while not state.cancelled and time.monotonic() < deadline:  # tasks/cancel is sent as the call ends
            page.wait_for_timeout(50)
        assert state.cancelled == list(state.tasks)
        assert [task["status"] for task in state.tasks.values()] == ["cancelled"]
        page.context.close()


def test_a_registry_search_connects_a_remote_in_one_click_and_gives_a_packages_relay_entry(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """Issue 31 item 6, against a local registry stand-in serving the registry's documented API shape (not the live
    registry: there is no internet here). Nothing is asked of the registry until the user searches; what it lists
    is text; a remote connects as a URL the user added (trust off, as always); one that needs a header is put in the
    Add server form; a stdio package gives the relay's mcpServers entry."""
    asked: list[str] = []
    with serve_tools(origin(site_url), "R") as tools, \
            serve_asgi(lambda base: registry_app(published(tools.url), asked, origin(site_url))) as (registry, _):
        page = start(browser, site_url, vendor)
        dialog = tools_dialog(page)
        dialog.get_by_text("Find a server in the MCP registry").click()
        expect(dialog.get_by_label("Registry URL")).to_have_value("https://registry.modelcontextprotocol.io")
        dialog.get_by_label("Registry URL").fill(registry)
        dialog.get_by_label("Server name").fill("capitals")
        assert asked == []
        dialog.get_by_role("button", name="Search", exact=True).click()
        expect(dialog.locator("#registry-status")).to_have_text(f"Servers found on {urlsplit(registry).netloc}: 3",
                                                                timeout=REPLY_TIMEOUT_MS)
        results = dialog.get_by_role("list", name="Registry servers")
        capitals = results.locator("li[data-name='io.github.orizuru/capitals']")
        expect(capitals).to_contain_text("The capital city of a country, <b>over</b> streamable HTTP.")
        weather = results.locator("li[data-name='io.github.orizuru/capitals-weather']")
        assert json.loads(weather.locator("pre").text_content() or "") == {"mcpServers": {"capitals-weather": {
            "command": "npx", "args": ["-y", "@orizuru/capitals-weather@1.0.0", "<config_path>", "--port", "8080"],
            "env": {"API_KEY": "<API_KEY>"}}}}
        expect(weather).to_contain_text("nuget package Orizuru.Weather: the relay has no way to run it")
        hosted = results.locator("li[data-name='com.example/capitals-hosted']")
        expect(hosted).to_contain_text("Give tenant in the URL first")
        hosted.get_by_role("button", name="Fill in https://{tenant}.example.com/mcp").click()
        expect(dialog.get_by_label("Server URL")).to_have_value("https://{tenant}.example.com/mcp")
        expect(dialog.get_by_label("Headers")).to_have_value("Authorization: ")
        capitals.get_by_role("button", name=f"Connect {tools.url}").click()
        item = dialog.locator("#mcp-servers li.server").filter(has_text=tools.url)
        expect(item).to_have_attribute("data-status", "connected", timeout=REPLY_TIMEOUT_MS)
        expect(item.get_by_role("checkbox", name=re.compile("^Trust "))).not_to_be_checked()
        assert asked == ["/v0.1/servers?search=capitals&version=latest&limit=20"]
        page.context.close()


def reload_mid_task(page: Page, while_away: Callable[[], None] = lambda: None) -> Locator:
    """Once the task's handle is stored with the step, the page reloads (the run ends, the task goes on on its
    server; ``while_away`` runs then) and the conversation is opened again; the render card, as drawn from the
    store."""
    deadline = time.monotonic() + REPLY_TIMEOUT_MS / 1000
    while not any(message.get("tasks") for message in stored(page)["messages"]):
        assert time.monotonic() < deadline, "the task's handle was never stored"
        page.wait_for_timeout(50)
    page.reload()
    while_away()
    wait_core(page)
    page.get_by_role("button", name="Render it.", exact=True).click()
    return page.get_by_role("group", name="Tool render")


def give_key(page: Page) -> None:
    """The key is kept in memory only: the turn that goes on after a reload asks for it, as a send does."""
    ask = page.get_by_role("dialog", name="API key needed")
    ask.get_by_label("API key", exact=True).fill(KEY)
    ask.get_by_role("button", name="Send").click()
    expect(ask).to_be_hidden()


def test_a_task_that_outlives_a_reload_shows_its_result_and_the_reply_completes(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """Issue 31 item 5: the handle is stored with the message, so a reload mid-task picks the task up again: the
    card shows it running with the server's status, the result comes in its place, and the turn goes on."""
    state = TasksState(gate=threading.Event())
    with task_server(site_url, state) as url:
        page, _ = run_render(browser, site_url, vendor, url)
        card = reload_mid_task(page)
        expect(card.locator(".tool-progress")).to_have_text("Rendering frame 1 of 2 · Task running on the server",
                                                            timeout=REPLY_TIMEOUT_MS)
        expect(card).to_have_attribute("data-status", "running")
        state.gate.set()
        expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
        expect(card).to_contain_text("Rendered 2 frames.")
        give_key(page)
        expect(last_reply(page).locator(".content")).to_have_text(ANSWER, timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert "Rendered 2 frames." in str(vendor.model_requests[-1].json["messages"])
        assert state.calls == [("render", {"frames": 2})] and state.cancelled == []  # run once, never cancelled
        assert [kinds(message) for message in path_on_show(stored(page))] == WHOLE_TURN  # the result in its place
        page.context.close()


def test_a_task_its_server_no_longer_has_after_a_reload_is_said_on_its_card(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """The server forgot the task while the page was away (it expired, or the server restarted): the card says so in
    a sentence, that sentence is the call's result the model reads, and the conversation is all there."""
    state = TasksState(gate=threading.Event())  # never opened: the task would run on
    with task_server(site_url, state) as url:
        page, _ = run_render(browser, site_url, vendor, url)
        card = reload_mid_task(page, state.tasks.clear)  # the server forgets the task while no page follows it
        expect(card).to_have_attribute("data-status", "error", timeout=REPLY_TIMEOUT_MS)
        expect(card).to_contain_text("the server no longer has task")
        expect(card).to_contain_text("(it may have expired)")
        give_key(page)
        expect(last_reply(page).locator(".content")).to_have_text(ANSWER, timeout=REPLY_TIMEOUT_MS)
        wait_idle(page)
        assert "the server no longer has task" in str(vendor.model_requests[-1].json["messages"])
        assert [kinds(message) for message in path_on_show(stored(page))] == WHOLE_TURN
        page.context.close()


def test_a_task_whose_server_is_away_after_a_reload_is_kept_for_the_next_opening(
        browser: Browser, site_url: str, vendor: VendorReplay):
    """The server cannot be reached when the chat is opened again: the card says so and how to retry, nothing is
    stored in the result's place and the handle stays, and the model is not asked."""
    state = TasksState(gate=threading.Event())
    with contextlib.ExitStack() as server:
        url = server.enter_context(task_server(site_url, state))
        page, _ = run_render(browser, site_url, vendor, url)
        card = reload_mid_task(page, server.close)
    expect(card.locator(".tool-progress")).to_have_text(
        "The task could not be picked up again: its server is not connected (Tools). Open this chat again to retry.",
        timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    path = path_on_show(stored(page))
    assert [kinds(message) for message in path] == WHOLE_TURN[:2]
    assert list(path[-1]["tasks"]) == ["call_render"]  # kept for the next opening
    assert len(vendor.model_requests) == 1
    page.context.close()
