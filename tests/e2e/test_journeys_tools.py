"""Tool journeys: the page served by the relay lists the relay's own stdio MCP server, connects to it
in one click, and the model's recorded tool call runs there, with Allow once / Deny; the agent loop
sends the real result back and the replayed vendor answers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from journeys import REPLY_TIMEOUT_MS, configure, last_reply, open_app, send, wait_idle, wait_ui
from playwright.sync_api import Browser, Page, expect
from vendor_replay import VendorReplay, expected, with_text, with_tool_call

pytestmark = pytest.mark.e2e

TOOL_TURN, TEXT_TURN = "openai/chat-stream-tool-call", "openai/chat-stream-text-usage"
SSE = "text/event-stream; charset=utf-8"


def connect_relay_server(page: Page) -> None:
    page.get_by_role("button", name="Tools", exact=True).click()
    dialog = page.get_by_role("dialog", name="Tools")
    relay = dialog.get_by_role("region", name="Servers on this relay")
    expect(relay.get_by_text("capitals", exact=True)).to_be_visible()
    relay.get_by_role("button", name="Connect capitals").click()
    expect(relay.locator(".server .badge")).to_have_text("connected", timeout=REPLY_TIMEOUT_MS)
    expect(relay.get_by_text("get_capital", exact=True)).to_be_visible()
    # No annotations on the tool: the default policy asks before running it.
    expect(relay.get_by_role("combobox", name="Approval for get_capital")).to_have_value("ask")
    dialog.get_by_role("button", name="Close").click()


def test_token_leaves_the_address_bar_and_relay_servers_are_listed(browser: Browser, relay_url: str):
    page = open_app(browser, relay_url, wait_ready=False)
    assert "#token=" in relay_url
    expect(page).not_to_have_url(relay_url)  # replaced at once: not bookmarked, not in history
    assert "token" not in page.url
    wait_ui(page)  # a first run: the setup card shows in the chat, nothing to close
    page.get_by_role("button", name="Tools", exact=True).click()
    relay = page.get_by_role("dialog", name="Tools").get_by_role("region", name="Servers on this relay")
    expect(relay.get_by_role("button", name="Connect capitals")).to_be_visible()
    expect(relay.locator("code.command")).to_contain_text("journeys_mcp_server.py")
    page.context.close()


def allow_call(page: Page, text: str, tool: str):
    """Send ``text``; the model's call of ``tool`` asks, and is allowed once: its card."""
    send(page, text)
    card = page.get_by_role("group", name=f"Tool {tool}").last
    card.get_by_role("button", name="Allow once").click(timeout=REPLY_TIMEOUT_MS)
    return card


def replied(page: Page, vendor: VendorReplay, text: str) -> str:
    """The turn ended with ``text``: what the last request to the model carried (its messages, as JSON)."""
    expect(last_reply(page).locator(".content")).to_have_text(text, timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    return json.dumps(vendor.model_requests[-1].json["messages"])


def ask_for_a_tool(browser: Browser, relay_url: str, vendor: VendorReplay):
    """The app set up for the recorded OpenAI tool turn, the relay's capitals server connected and the
    question asked: the page and the tool call's card (the model's answer waits on the user)."""
    vendor.script(TOOL_TURN, TEXT_TURN)
    page = open_app(browser, relay_url)
    configure(page, vendor="openai", base=vendor.url, key="sk-tools-test", model="gpt-4o-mini")
    connect_relay_server(page)
    send(page, "What is the capital of the UK?")
    return page, page.get_by_role("group", name="Tool get_capital")


def test_a_recorded_tool_call_runs_on_the_relay_server_after_approval(browser: Browser, relay_url: str,
                                                                      vendor: VendorReplay):
    page, card = ask_for_a_tool(browser, relay_url, vendor)
    expect(card).to_be_visible(timeout=REPLY_TIMEOUT_MS)
    expect(card).to_have_attribute("data-status", "waiting")
    card.get_by_role("button", name="Allow once").click()
    expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
    expect(last_reply(page).locator(".content")).to_have_text(expected(TEXT_TURN)["text"], timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)  # the card is drawn again when the turn ends: read it after that
    card.locator("summary").click()  # open the collapsed card
    assert json.loads(card.locator(".tool-args").inner_text()) == expected(TOOL_TURN)["tool_calls"][0]["arguments"]
    result = "The capital of UK is London (answered by the capitals MCP server)."
    expect(card.locator(".tool-result")).to_contain_text(result)
    expect(card.locator(".tool-duration")).to_contain_text("ms")
    # The second request carried the server's real answer back to the model.
    followup = vendor.model_requests[1].json["messages"]
    tool_messages = [m for m in followup if m["role"] == "tool"]
    assert len(tool_messages) == 1 and result in json.dumps(tool_messages[0]["content"])
    assert any(t["function"]["name"] == "get_capital" for t in vendor.model_requests[0].json["tools"])
    # What the server logged while it worked (notifications/message) is in its log in the Tools panel.
    page.get_by_role("button", name="Tools", exact=True).click()
    tools = page.get_by_role("dialog", name="Tools")
    tools.locator(".server-log summary").click()
    entry = tools.get_by_role("list", name="Log of capitals").get_by_role("listitem")
    expect(entry).to_have_count(1)
    expect(entry).to_contain_text("info")
    expect(entry).to_contain_text("capitals")
    expect(entry).to_contain_text("looking up UK")
    tools.get_by_role("button", name="Close").click()

    # After a reload the stored turn shows the card with its result (from the transcript).
    page.reload()
    page.get_by_role("button", name="What is the capital of the UK?", exact=True).click()
    card = page.get_by_role("group", name="Tool get_capital")
    expect(card).to_have_attribute("data-status", "done")
    expect(card.locator(".tool-result")).to_contain_text(result)
    page.context.close()


def test_a_2026_only_stdio_server_behind_the_relay_is_spoken_to_in_its_revision_and_runs_the_call(
        browser: Browser, modern_relay_url: str, vendor: VendorReplay):
    """#31: capitals speaking only MCP 2026-07-28 (no initialize, no session) behind the relay: the page connects,
    the Tools panel names the revision, and the model's call runs on the relay's shared child."""
    page, card = ask_for_a_tool(browser, modern_relay_url, vendor)
    card.get_by_role("button", name="Allow once").click(timeout=REPLY_TIMEOUT_MS)
    expect(card).to_have_attribute("data-status", "done", timeout=REPLY_TIMEOUT_MS)
    expect(last_reply(page).locator(".content")).to_have_text(expected(TEXT_TURN)["text"], timeout=REPLY_TIMEOUT_MS)
    followup = json.dumps(vendor.model_requests[1].json["messages"])
    assert "The capital of UK is London (answered by the capitals MCP server)." in followup
    page.get_by_role("button", name="Tools", exact=True).click()
    relay = page.get_by_role("dialog", name="Tools").get_by_role("region", name="Servers on this relay")
    expect(relay.locator(".protocol-badge")).to_have_text("MCP 2026-07-28")
    page.context.close()


def test_deny_sends_the_refusal_to_the_model_and_runs_nothing(browser: Browser, relay_url: str,
                                                              vendor: VendorReplay):
    page, card = ask_for_a_tool(browser, relay_url, vendor)
    card.get_by_role("button", name="Deny").click(timeout=REPLY_TIMEOUT_MS)
    expect(card).to_have_attribute("data-status", "denied")
    expect(last_reply(page).locator(".content")).to_have_text(expected(TEXT_TURN)["text"], timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    followup = json.dumps(vendor.model_requests[1].json["messages"])
    assert "London" not in followup  # the tool never ran
    tool_message = next(m for m in vendor.model_requests[1].json["messages"] if m["role"] == "tool")
    assert "declined" in json.dumps(tool_message["content"])  # the model is told the user said no
    page.context.close()


def open_card(card) -> None:
    """Open a tool card, as it may be already: one that asked the user something stays open after the turn."""
    if not card.locator("details.tool-details").evaluate("details => details.open"):
        card.locator("summary").click()


def test_a_servers_question_is_answered_in_a_form_or_declined(browser: Browser, relay_url: str,
                                                                vendor: VendorReplay):
    """Elicitation: the server's form shows in its tool's card with the schema's defaults filled in; Accept sends
    what the user entered, Decline says no; the tool's result, and so the model, gets each."""
    for i in range(2):
        vendor.script_body(f"book {i}", with_tool_call(TOOL_TURN, "book_table", {"city": "Kyoto"}, f"call_b{i}"),
                           content_type=SSE)
        vendor.script_body(f"answer {i}", with_text(TEXT_TURN, f"Done {i}."), content_type=SSE)
    page = open_app(browser, relay_url)
    configure(page, vendor="openai", base=vendor.url, key="sk-tools-test", model="gpt-4o-mini")
    connect_relay_server(page)
    card = allow_call(page, "Book a table in Kyoto.", "book_table")
    form = card.get_by_role("group", name="capitals (on this relay) asks")
    expect(form).to_contain_text("Book a table in Kyoto?", timeout=REPLY_TIMEOUT_MS)
    expect(form.get_by_label("Guests")).to_have_value("2")  # the schema's defaults, filled in
    expect(form.get_by_label("Time")).to_have_text(re.compile("19:00"))
    expect(form.get_by_label("Window")).not_to_be_checked()
    expect(form.get_by_label("Email *")).to_have_attribute("type", "email")
    form.get_by_role("button", name="Accept").click()
    expect(form.get_by_label("Name *")).to_be_focused()  # required and empty: the browser says so, nothing sent
    form.get_by_label("Name *").fill("Ada")
    form.get_by_label("Email *").fill("ada@example.com")
    form.get_by_label("Guests").fill("4")
    form.get_by_role("group", name="Extras").get_by_label("cake").check()
    form.get_by_label("Time").select_option(label="20:00")
    form.get_by_label("Window").check()
    form.get_by_role("button", name="Accept").click()
    told = replied(page, vendor, "Done 0.")
    assert ("Booked in Kyoto: name=Ada, email=ada@example.com, guests=4, extras=['cake'], time=20:00, "
            "window=True") in told

    def kept_with_the_result() -> None:  # the question and the answer, drawn again from the transcript
        card = page.get_by_role("group", name="Tool book_table").first
        open_card(card)
        asked = card.get_by_role("region", name="Asked during the call")
        expect(asked).to_contain_text("capitals (on this relay) asked: Book a table in Kyoto?")
        expect(asked).to_contain_text('"email": "ada@example.com"')

    kept_with_the_result()  # the turn ended and the transcript was drawn again

    form = allow_call(page, "Once more.", "book_table").get_by_role("group", name="capitals (on this relay) asks")
    form.get_by_role("button", name="Decline").click(timeout=REPLY_TIMEOUT_MS)
    assert "Not booked: the user chose decline." in replied(page, vendor, "Done 1.")
    page.reload()
    wait_ui(page)
    page.get_by_role("button", name="Book a table in Kyoto.", exact=True).click()
    kept_with_the_result()
    page.context.close()


def test_roots_are_none_until_the_user_adds_some_and_servers_see_them(browser: Browser, relay_url: str,
                                                                       vendor: VendorReplay):
    for i in range(2):
        vendor.script_body(f"roots {i}", with_tool_call(TOOL_TURN, "list_roots", {}, f"call_r{i}"), content_type=SSE)
        vendor.script_body(f"answer {i}", with_text(TEXT_TURN, f"Roots {i}."), content_type=SSE)
    page = open_app(browser, relay_url)
    configure(page, vendor="openai", base=vendor.url, key="sk-tools-test", model="gpt-4o-mini")
    connect_relay_server(page)
    allow_call(page, "Which folders?", "list_roots")
    assert "no roots" in replied(page, vendor, "Roots 0.")

    page.get_by_role("button", name="Tools", exact=True).click()
    tools = page.get_by_role("dialog", name="Tools")
    tools.get_by_text("Folders servers may know about (roots)").click()
    roots = tools.get_by_role("textbox", name="Roots")
    roots.fill("/home/ada/notes")
    tools.get_by_role("button", name="Save roots").click()
    expect(tools.locator("#roots-status")).to_contain_text("Line 1: a root is a file:// URI")
    roots.fill("file:///home/ada/notes my notes")
    tools.get_by_role("button", name="Save roots").click()
    expect(tools.locator("#roots-status")).to_have_text("1 root(s) given to the servers.")
    tools.get_by_role("button", name="Close").click()
    allow_call(page, "And now?", "list_roots")
    assert "my notes=file:///home/ada/notes" in replied(page, vendor, "Roots 1.")
    page.reload()
    wait_ui(page)
    assert page.locator("#roots-list").input_value() == "file:///home/ada/notes my notes"
    page.context.close()


def test_a_servers_request_for_the_model_is_shown_run_as_edited_and_sent_or_denied(browser: Browser, relay_url: str,
                                                                                     vendor: VendorReplay):
    """Sampling: the server's request shows in its tool's card (model, budget, its system prompt and message, all
    editable); "Run it" runs it on the conversation's model within the user's budget; the answer is shown and
    goes back only on "Send". Denied, nothing goes to the model."""
    call = with_tool_call(TOOL_TURN, "describe_capitals", {}, "call_s0")
    vendor.script_body("describe", call, content_type=SSE)
    vendor.script_body("sampled", with_text(TEXT_TURN, "Three old capitals."), content_type=SSE)
    vendor.script_body("answer", with_text(TEXT_TURN, "Done 0."), content_type=SSE)
    vendor.script_body("describe again", with_tool_call(TOOL_TURN, "describe_capitals", {}, "call_s1"),
                       content_type=SSE)
    vendor.script_body("answer again", with_text(TEXT_TURN, "Done 1."), content_type=SSE)
    page = open_app(browser, relay_url)
    configure(page, vendor="openai", base=vendor.url, key="sk-tools-test", model="gpt-4o-mini")
    page.get_by_role("button", name="Tools", exact=True).click()
    tools = page.get_by_role("dialog", name="Tools")
    tools.get_by_label("Most tokens a server may ask your model for (sampling)").fill("200")
    tools.get_by_label("Most tokens a server may ask your model for (sampling)").dispatch_event("change")
    tools.get_by_role("button", name="Close").click()
    connect_relay_server(page)
    card = allow_call(page, "Describe the capitals.", "describe_capitals")
    asked = card.get_by_role("group", name="capitals (on this relay) asks your model")
    expect(asked).to_contain_text("Answered by gpt-4o-mini, at most 200 tokens.", timeout=REPLY_TIMEOUT_MS)
    expect(asked.get_by_label("System prompt")).to_have_value("Be brief.")
    message = asked.get_by_label("Message (User)")
    expect(message).to_have_value("Describe in one line: London, Paris, Tokyo")
    message.fill("Describe in one line, in French: London, Paris, Tokyo")
    asked.get_by_role("button", name="Run it").click()
    expect(asked.get_by_role("group", name="The model's answer")).to_have_text(re.compile("Three old capitals."),
                                                                               timeout=REPLY_TIMEOUT_MS)
    sampled = vendor.model_requests[1].json
    assert sampled["max_tokens"] == 200 or sampled.get("max_completion_tokens") == 200
    assert "in French" in json.dumps(sampled["messages"]) and "Be brief." in json.dumps(sampled["messages"])
    assert len(vendor.model_requests) == 2  # the answer waits for the user before it goes anywhere
    asked.get_by_role("button", name="Send to capitals (on this relay)").click()
    assert "The model said: Three old capitals." in replied(page, vendor, "Done 0.")
    card = page.get_by_role("group", name="Tool describe_capitals").first
    open_card(card)
    kept = card.get_by_role("region", name="Asked during the call")
    expect(kept).to_contain_text("Run, and its answer sent to the server:")
    expect(kept).to_contain_text("Three old capitals.")

    asked = allow_call(page, "Again.", "describe_capitals").get_by_role(
        "group", name="capitals (on this relay) asks your model")
    asked.get_by_role("button", name="Deny").click(timeout=REPLY_TIMEOUT_MS)
    assert "denied the sampling request" in replied(page, vendor, "Done 1.")
    assert len(vendor.model_requests) == 5  # no request for the denied sampling
    page.context.close()


def test_structured_results_show_as_data_and_resource_links_open_through_the_server(browser: Browser,
                                                                                     relay_url: str,
                                                                                     vendor: VendorReplay):
    vendor.script_body("facts", with_tool_call(TOOL_TURN, "capital_facts", {"country": "Japan"}, "call_f"),
                       content_type=SSE)
    vendor.script_body("link", with_tool_call(TOOL_TURN, "where_is_the_list", {}, "call_l"), content_type=SSE)
    vendor.script_body("answer", with_text(TEXT_TURN, "Here."), content_type=SSE)
    page = open_app(browser, relay_url)
    configure(page, vendor="openai", base=vendor.url, key="sk-tools-test", model="gpt-4o-mini")
    connect_relay_server(page)
    send(page, "Facts and the list?")
    page.get_by_role("group", name="Tool capital_facts").get_by_role("button", name="Allow once").click(
        timeout=REPLY_TIMEOUT_MS)
    page.get_by_role("group", name="Tool where_is_the_list").get_by_role("button", name="Allow once").click(
        timeout=REPLY_TIMEOUT_MS)
    expect(last_reply(page).locator(".content")).to_have_text("Here.", timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)

    def check(page: Page) -> None:
        facts = page.get_by_role("group", name="Tool capital_facts")
        facts.locator("summary").click()
        data = facts.get_by_role("region", name="Structured result")
        assert json.loads(data.locator("pre").inner_text()) == {"country": "Japan", "capital": "Tokyo"}
        assert facts.locator(".tool-result").inner_text().count('"capital"') == 1  # the data, not its JSON text too
        link = page.get_by_role("group", name="Tool where_is_the_list")
        link.locator("summary").click()
        link.get_by_role("button", name="Open capitals").click()  # read through the client, from that server
        expect(link.locator(".tool-resource-opened")).to_contain_text("Japan: Tokyo")
        expect(link.locator(".tool-resource-opened .tool-resource-uri")).to_have_text("capitals://list")

    check(page)
    page.reload()  # kept with the transcript: the data, and the link with the server to read it from
    wait_ui(page)
    page.get_by_role("button", name="Facts and the list?", exact=True).click()
    connect_relay_server(page)
    check(page)
    page.context.close()


def test_the_traffic_inspector_shows_filters_and_exports_a_replayable_record_without_secrets(
        browser: Browser, relay_url: str, vendor: VendorReplay, tmp_path: Path):
    page, card = ask_for_a_tool(browser, relay_url, vendor)
    card.get_by_role("button", name="Allow once").click(timeout=REPLY_TIMEOUT_MS)
    expect(last_reply(page).locator(".content")).to_have_text(expected(TEXT_TURN)["text"], timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    page.get_by_role("button", name="Tools", exact=True).click()
    page.get_by_role("button", name="Traffic: capitals").click()
    inspector = page.get_by_role("dialog", name="Traffic of capitals")
    rows = inspector.get_by_role("list", name="Messages").locator(":scope > li")
    expect(rows.first).to_contain_text("server/discover")  # the probe, refused by capitals (an older server)
    expect(rows.nth(1)).to_contain_text("initialize")
    total = rows.count()
    assert total >= 9  # the probe, initialize, its result, initialized, the lists, the call, its log, its result
    inspector.get_by_role("searchbox", name="Filter messages").fill("get_capital")
    expect(rows).not_to_have_count(total)
    expect(rows.filter(has_text="tools/call")).to_have_count(1)
    with page.expect_download() as download:
        inspector.get_by_role("button", name="Export").click()
    path = tmp_path / "traffic.json"
    download.value.save_as(path)
    record = json.loads(path.read_text())
    relay_token = relay_url.split("#token=")[1]  # sent to the relay's server as Authorization: Bearer <token>
    assert record["format"] == "orizuru-mcp-traffic/1" and len(record["messages"]) == total
    assert relay_token not in path.read_text() and relay_token not in inspector.inner_text()
    done = subprocess.run([sys.executable, "-m", "pycore", "mcp", "replay", str(path)], capture_output=True,
                          text=True, cwd=Path(__file__).resolve().parents[2], timeout=60)
    assert done.returncode == 0, done.stderr
    [replayed] = [r for r in json.loads(done.stdout) if r["method"] == "tools/call"]
    assert "The capital of UK is London" in json.dumps(replayed["result"]["content"])
    page.context.close()


def test_hostile_questions_and_model_requests_are_contained_and_each_case_is_counted(
        browser: Browser, relay_url: str, vendor: VendorReplay):
    """What a server asks is untrusted: markup stays text, links that are not https never show, a link opens only
    on the user's press. Cases of the kind SECURITY.md lists, for the new surfaces: T-Q1..T-Q5 (elicitation),
    T-M1 (sampling)."""
    calls = [("odd_question", {}), ("odd_link", {"url": "javascript:alert(1)"}),
             ("odd_link", {"url": "http://shop.example/pay"}), ("odd_link", {"url": "https://shop.example/pay"}),
             ("odd_sampling", {}), ("odd_link", {"url": "https://evil.example\\@accounts.example.com/login"})]
    for i, (tool, arguments) in enumerate(calls):
        vendor.script_body(f"call {i}", with_tool_call(TOOL_TURN, tool, arguments, f"call_h{i}"), content_type=SSE)
        vendor.script_body(f"answer {i}", with_text(TEXT_TURN, f"Done {i}."), content_type=SSE)
    page = open_app(browser, relay_url)
    configure(page, vendor="openai", base=vendor.url, key="sk-tools-test", model="gpt-4o-mini")
    connect_relay_server(page)
    contained: dict[str, bool] = {}

    def turn(i: int, tool: str):
        return allow_call(page, f"Case {i}.", tool)

    def finish(i: int) -> str:
        return replied(page, vendor, f"Done {i}.")

    card = turn(0, "odd_question")
    form = card.get_by_role("group", name="capitals (on this relay) asks")
    expect(form).to_contain_text('Question <img src="http://127.0.0.1:9/x"', timeout=REPLY_TIMEOUT_MS)
    label = form.locator("label").first.inner_text()
    contained["T-Q1 markup in a form stays text"] = (
        form.locator("img, b").count() == 0 and "<b>bold</b>" in label
        and page.evaluate("window.hacked === undefined"))
    form.get_by_role("button", name="Decline").click()
    finish(0)
    for i, scheme in ((1, "javascript:"), (2, "http:")):
        card = turn(i, "odd_link")
        told = finish(i)
        refused = "must be https" in told or "needs an absolute URL" in told
        contained[f"T-Q{i + 1} a {scheme} link is refused, never shown"] = (
            card.locator(".question").count() == 0 and refused and "link accept" not in told)
    pages_before = len(page.context.pages)
    card = turn(3, "odd_link")
    link = card.get_by_role("group", name="capitals (on this relay) asks")
    expect(link.locator(".question-host strong")).to_have_text("shop.example", timeout=REPLY_TIMEOUT_MS)
    opened_unasked = len(page.context.pages) != pages_before
    link.get_by_role("button", name="Decline").click()
    told = finish(3)
    contained["T-Q4 a link opens only on the press"] = (not opened_unasked and len(page.context.pages) == pages_before
                                                        and "link decline" in told)
    card = turn(4, "odd_sampling")
    asked = card.get_by_role("group", name="capitals (on this relay) asks your model")
    expect(asked.get_by_label("System prompt")).to_have_value(re.compile("^System <img"), timeout=REPLY_TIMEOUT_MS)
    contained["T-M1 markup in a request for the model stays text"] = (
        asked.locator("img, b").count() == 0 and page.evaluate("window.hacked === undefined"))
    asked.get_by_role("button", name="Deny").click()
    finish(4)
    card = turn(5, "odd_link")  # Python's URL parser reads accounts.example.com, the browser evil.example
    shown = card.locator(".question")
    expect(shown.or_(last_reply(page).locator(".content").filter(has_text="Done 5."))).to_be_visible(
        timeout=REPLY_TIMEOUT_MS)
    hosts_shown = shown.locator(".question-host strong").all_inner_texts()
    if hosts_shown:  # the unfixed page showed it: answered, so that the turn (and the count) can finish
        shown.get_by_role("button", name="Decline").click()
    told = finish(5)
    contained["T-Q5 a link whose host URL parsers read differently is refused, never shown"] = (
        not hosts_shown and "the elicitation URL is refused: it contains a backslash" in told)
    print(f"\ncontained {sum(contained.values())}/{len(contained)}: {contained}")
    assert all(contained.values()), contained
    page.context.close()


def sampling_card(page: Page, tool: str):
    """The model's call of ``tool`` allowed once: the server's request for the model, in that tool's card."""
    card = allow_call(page, f"Use {tool}.", tool)
    return card.get_by_role("group", name="capitals (on this relay) asks your model")


def sampling_page(browser: Browser, relay_url: str, vendor: VendorReplay, tool: str, *texts: str) -> Page:
    """The app with the capitals server connected; the model will call ``tool``, then answer each of ``texts``."""
    vendor.script_body("call", with_tool_call(TOOL_TURN, tool, {}, "call_m0"), content_type=SSE)
    for i, text in enumerate(texts):
        vendor.script_body(f"text {i}", with_text(TEXT_TURN, text), content_type=SSE)
    page = open_app(browser, relay_url)
    configure(page, vendor="openai", base=vendor.url, key="sk-tools-test", model="gpt-4o-mini")
    connect_relay_server(page)
    return page


def test_an_image_a_server_would_send_the_model_is_shown_before_it_goes(browser: Browser, relay_url: str,
                                                                         vendor: VendorReplay):
    """SECURITY.md T-M2: the image a sampling request carries is on its card (a thumbnail, its type and size)
    before "Run it", and editing the request's text does not drop it."""
    from journeys_mcp_server import RED_SQUARE

    page = sampling_page(browser, relay_url, vendor, "sampling_with_image", "Red.", "Done.")
    asked = sampling_card(page, "sampling_with_image")
    expect(asked).to_contain_text("Sends 27 characters of text and 1 image(s) (73 B).", timeout=REPLY_TIMEOUT_MS)
    image = asked.get_by_role("img", name="Image 1 of Message (User): image/png, 73 B")
    expect(image).to_be_visible()
    assert image.evaluate("img => img.complete && img.naturalWidth") == 4  # the server's own bytes, drawn
    asked.get_by_label("Message (User)").fill("What colour is this square, in one word?")
    asked.get_by_role("button", name="Run it").click()
    expect(asked.get_by_role("group", name="The model's answer")).to_contain_text("Red.", timeout=REPLY_TIMEOUT_MS)
    sent = json.dumps(vendor.model_requests[1].json["messages"])
    assert "in one word?" in sent and RED_SQUARE in sent
    asked.get_by_role("button", name="Send to capitals (on this relay)").click()
    assert "sampled Red." in replied(page, vendor, "Done.")
    page.context.close()


def test_a_request_for_the_model_past_the_users_size_limit_is_refused_and_says_so(browser: Browser, relay_url: str,
                                                                                   vendor: VendorReplay):
    """SECURITY.md T-M3: 2 MB of text for the model. Past the user's limit (Tools, 100,000 characters unless
    changed) it is refused and the card says why; under a raised limit, the card shows its size before "Run it"."""
    page = sampling_page(browser, relay_url, vendor, "big_sampling", "Done.")
    vendor.script_body("again", with_tool_call(TOOL_TURN, "big_sampling", {}, "call_m1"), content_type=SSE)
    vendor.script_body("done again", with_text(TEXT_TURN, "Done again."), content_type=SSE)
    allow_call(page, "Use big_sampling.", "big_sampling")
    assert "more than the user's limit" in replied(page, vendor, "Done.")
    card = page.get_by_role("group", name="Tool big_sampling")
    open_card(card)  # kept with the tool's result, as a reload draws it
    expect(card.get_by_role("region", name="Asked during the call")).to_contain_text(
        "capitals (on this relay) asked your model with 2,000,003 characters of text, more than your limit of 100,000 "
        "(Tools): refused, nothing was sent.")
    assert len(vendor.model_requests) == 2  # nothing went to the model for the server

    page.get_by_role("button", name="Tools", exact=True).click()
    tools = page.get_by_role("dialog", name="Tools")
    limit = tools.get_by_label("Most characters of text a server may send your model (sampling)")
    expect(limit).to_have_value("100000")
    limit.fill("3000000")
    limit.dispatch_event("change")
    tools.get_by_role("button", name="Close").click()
    asked = sampling_card(page, "big_sampling")
    expect(asked).to_contain_text("Sends 2,000,003 characters of text.", timeout=REPLY_TIMEOUT_MS)
    asked.get_by_role("button", name="Deny").click()
    replied(page, vendor, "Done again.")
    page.context.close()


def test_a_server_has_at_most_three_requests_for_the_model_open_at_once(browser: Browser, relay_url: str,
                                                                         vendor: VendorReplay):
    """SECURITY.md T-M4: a server asks the model 12 times at once. Three are put to the user; the rest are refused
    at once, and one note on the card counts them."""
    page = sampling_page(browser, relay_url, vendor, "many_samplings", "Done.")
    card = allow_call(page, "Use many_samplings.", "many_samplings")
    expect(card.locator(".sampling-refused")).to_have_text(
        "Refused 9 more requests from capitals (on this relay) for your model: at most 3 are open at once.",
        timeout=REPLY_TIMEOUT_MS)
    asks = card.get_by_role("group", name="capitals (on this relay) asks your model")
    expect(asks).to_have_count(3)
    for i in range(3):
        asks.nth(i).get_by_role("button", name="Deny").click()
    assert "answered=0, refused=9, denied=3" in replied(page, vendor, "Done.")
    page.context.close()
