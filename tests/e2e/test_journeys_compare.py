"""Compare (#35): one message to two profiles at once, in real Chromium. Each profile has its own loopback vendor
(vendor_replay.py, one server each, so each column's script is its own): the replies stream side by side, each
column's Stop stops that column only, the reply picked continues the conversation and the other stays a branch after
a reload; or one model merges the replies into one answer, which continues the conversation."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from journeys import REPLY_TIMEOUT_MS, configure, last_reply, open_app, replies, send, wait_core, wait_idle
from playwright.sync_api import Browser, Locator, Page, expect
from test_journeys_tools import SSE, TEXT_TURN, TOOL_TURN, connect_relay_server
from vendor_replay import VendorReplay, expected, with_tool_call

pytestmark = pytest.mark.e2e

SLOW_TEXT, ANTHROPIC_TEXT = "openai/chat-stream-text-usage", "anthropic/stream-text"
QUESTION = "What is the capital of the UK?"


@pytest.fixture
def second_vendor() -> Iterator[VendorReplay]:
    server = VendorReplay()
    yield server
    server.close()


def two_profiles(page: Page, careful: VendorReplay, fast: VendorReplay, *, careful_vendor: str = "anthropic",
                 careful_model: str = "claude-sonnet-4-5") -> None:
    """"Careful" (Anthropic) first, then "Fast" (OpenAI), each at its own vendor; Compare on with both ticked."""
    configure(page, vendor=careful_vendor, base=careful.url, key="sk-ant-compare-0001", model=careful_model,
              name="Careful")
    configure(page, vendor="openai", base=fast.url, key="sk-compare-0002", model="gpt-4o-mini", name="Fast",
              new_profile=True)
    page.get_by_role("button", name="Compare", exact=True).click()
    picker = page.get_by_role("group", name="Compare: send to several models at once")
    expect(picker).to_be_visible()
    expect(picker.get_by_label("Model for Careful")).to_have_value(careful_model)
    picker.get_by_role("checkbox", name="Careful").check()
    picker.get_by_role("checkbox", name="Fast").check()


def column(page: Page, label: str) -> Locator:
    return page.get_by_role("region", name=label)


def test_compare_two_profiles_stop_one_pick_the_second_and_reload(browser: Browser, site_url: str,
                                                                  vendor: VendorReplay, second_vendor: VendorReplay):
    # Careful's stream stays open after a few words (only its Stop ends it); Fast's comes slowly and completes.
    vendor.script(ANTHROPIC_TEXT, stall_after=5)
    second_vendor.script(SLOW_TEXT, delay=0.25)
    page = open_app(browser, site_url)
    two_profiles(page, vendor, second_vendor)
    send(page, QUESTION)

    careful, fast = column(page, "Careful · claude-sonnet-4-5"), column(page, "Fast · gpt-4o-mini")
    # Both stream at once, each in its own column.
    expect(careful.locator("li.msg.assistant")).to_have_attribute("data-state", "streaming", timeout=REPLY_TIMEOUT_MS)
    expect(fast.locator("li.msg.assistant")).to_have_attribute("data-state", "streaming", timeout=REPLY_TIMEOUT_MS)
    expect(careful.locator(".content")).not_to_have_text("")
    expect(fast.locator(".content")).not_to_have_text("")

    # Careful's own Stop stops Careful only: Fast goes on to its whole reply.
    careful.get_by_role("button", name="Stop Careful · claude-sonnet-4-5").click()
    expect(careful.locator("li.msg.assistant")).to_have_attribute("data-state", "interrupted", timeout=REPLY_TIMEOUT_MS)
    expect(fast.locator("li.msg.assistant")).to_have_attribute("data-state", "streaming")
    expect(fast.locator(".content")).to_have_text(expected(SLOW_TEXT)["text"], timeout=REPLY_TIMEOUT_MS)
    expect(fast.locator("li.msg.assistant")).to_have_attribute("data-state", "done")
    wait_idle(page)
    assert second_vendor.model_requests[0].json["model"] == "gpt-4o-mini"
    assert vendor.model_requests[0].json["model"] == "claude-sonnet-4-5"

    # The second column's reply continues the conversation; the first stays a branch of the message.
    fast.get_by_role("button", name="Continue with the reply of Fast · gpt-4o-mini").click()
    expect(page.get_by_role("group", name="2 replies to compare")).to_have_count(0)
    reply = last_reply(page)
    expect(reply.locator(".content")).to_have_text(expected(SLOW_TEXT)["text"])
    expect(reply.locator(".meta")).to_have_text("OpenAI · gpt-4o-mini")
    expect(reply.locator("nav.branches .branch-pos")).to_have_text("2/2")

    # The next message (Compare off) goes on from the reply picked.
    page.get_by_role("button", name="Compare", exact=True).click()
    second_vendor.script(SLOW_TEXT)
    send(page, "And of France?")
    wait_idle(page)
    history = second_vendor.model_requests[-1].json["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert expected(SLOW_TEXT)["text"] in str(history[1]["content"])

    # After a reload the picked reply is the one shown; the stopped one is the other branch.
    page.reload()
    wait_core(page)
    page.get_by_role("button", name=QUESTION, exact=True).click()
    expect(replies(page)).to_have_count(2)
    first = replies(page).first
    expect(first.locator(".content")).to_have_text(expected(SLOW_TEXT)["text"])
    expect(first.locator("nav.branches .branch-pos")).to_have_text("2/2")
    first.get_by_role("button", name="Previous version").click()
    expect(replies(page)).to_have_count(1)
    expect(last_reply(page)).to_have_attribute("data-state", "interrupted")
    expect(last_reply(page).locator(".meta")).to_have_text("Anthropic · claude-sonnet-4-5")
    page.context.close()


def test_compare_then_merge_into_one_answer(browser: Browser, site_url: str, vendor: VendorReplay,
                                            second_vendor: VendorReplay):
    vendor.script(ANTHROPIC_TEXT, ANTHROPIC_TEXT)  # Careful answers, then merges
    second_vendor.script(SLOW_TEXT)
    page = open_app(browser, site_url)
    two_profiles(page, vendor, second_vendor)
    send(page, QUESTION)
    careful, fast = column(page, "Careful · claude-sonnet-4-5"), column(page, "Fast · gpt-4o-mini")
    expect(careful.locator(".content")).to_have_text(expected(ANTHROPIC_TEXT)["text"], timeout=REPLY_TIMEOUT_MS)
    expect(fast.locator(".content")).to_have_text(expected(SLOW_TEXT)["text"], timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)

    page.get_by_label("Merge them into one answer with").select_option(label="Careful · claude-sonnet-4-5")
    page.get_by_role("button", name="Merge", exact=True).click()
    wait_idle(page)
    merge = vendor.model_requests[-1].json
    asked = str(merge["messages"][-1]["content"])
    assert QUESTION in asked and expected(ANTHROPIC_TEXT)["text"] in asked and expected(SLOW_TEXT)["text"] in asked
    expect(page.get_by_role("group", name="2 replies to compare")).to_have_count(0)
    reply = last_reply(page)
    expect(reply).to_have_attribute("data-state", "done")
    expect(reply.locator(".meta")).to_have_text("Anthropic · claude-sonnet-4-5")
    expect(reply.locator("nav.branches .branch-pos")).to_have_text("3/3")
    # The transcript keeps the person's message as written; the merged answer is the reply that continues.
    expect(page.locator(".transcript li.msg.user .content")).to_have_text(QUESTION)
    page.reload()
    wait_core(page)
    page.get_by_role("button", name=QUESTION, exact=True).click()
    expect(last_reply(page).locator("nav.branches .branch-pos")).to_have_text("3/3")
    page.context.close()


def test_compare_runs_each_columns_tools_and_its_approval_names_the_model(browser: Browser, relay_url: str,
                                                                          vendor: VendorReplay,
                                                                          second_vendor: VendorReplay):
    """Each column runs its own agent loop. Both models call the relay's get_capital with the same call id (as Gemini
    and Ollama do when they make ids up): each column's card asks, names the model asking, and its answer reaches its
    own run only."""
    for server in (vendor, second_vendor):
        server.script_body("call", with_tool_call(TOOL_TURN, "get_capital", {"country": "UK"}, "call_same"),
                           content_type=SSE)
        server.script(TEXT_TURN)
    page = open_app(browser, relay_url)
    two_profiles(page, vendor, second_vendor, careful_vendor="openai", careful_model="gpt-4o")
    connect_relay_server(page)
    send(page, QUESTION)
    careful, fast = column(page, "Careful · gpt-4o"), column(page, "Fast · gpt-4o-mini")
    for col, label in ((fast, "Fast · gpt-4o-mini"), (careful, "Careful · gpt-4o")):
        card = col.get_by_role("group", name="Tool get_capital")
        expect(card).to_have_attribute("data-status", "waiting", timeout=REPLY_TIMEOUT_MS)
        expect(card.locator(".approval-model")).to_have_text(label)
    fast.get_by_role("button", name="Allow once").click()  # Fast's call runs; Careful's still waits
    expect(fast.locator(".content").last).to_have_text(expected(TEXT_TURN)["text"], timeout=REPLY_TIMEOUT_MS)
    expect(careful.get_by_role("group", name="Tool get_capital")).to_have_attribute("data-status", "waiting")
    careful.get_by_role("button", name="Deny").click()
    expect(careful.locator(".content").last).to_have_text(expected(TEXT_TURN)["text"], timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    allowed = str(second_vendor.model_requests[1].json["messages"])
    denied = str(vendor.model_requests[1].json["messages"])
    assert "London" in allowed and "London" not in denied and "declined" in denied
    page.context.close()
