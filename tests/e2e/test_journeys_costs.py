"""What replies cost and how full the context is (issue #35, item 2), in real Chromium against the loopback replay
vendor: a reply's cost from the bundled price list for the recorded usage, "price unknown" until the user enters a
price, a spending cap that keeps the second request from leaving, the context meter's warning near the window, and
no request to GitHub for prices (the package's remote update is never used)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from journeys import (
    REPLY_TIMEOUT_MS,
    configure,
    dollars,
    last_reply,
    list_price,
    open_app,
    open_settings,
    send,
    set_conversation_cap,
    usage_line,
    wait_idle,
)
from playwright.sync_api import Browser, Page, expect
from vendor_replay import VendorReplay, expected

pytestmark = pytest.mark.e2e

KEY = "sk-test-costs-5e1d"
RECORDING = "openai/chat-stream-text-usage"  # gpt-4o-mini, with usage


def chat_with(browser: Browser, site_url: str, vendor: VendorReplay, model: str) -> tuple[Page, list[str]]:
    """The app with an OpenAI profile on the replay vendor; every URL the page requests, as it goes."""
    page = open_app(browser, site_url)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    configure(page, vendor="openai", base=vendor.url, key=KEY, model=model)
    return page, requested


def test_a_reply_shows_its_cost_and_the_meter_its_spend_and_context_with_nothing_fetched_from_github(
        browser: Browser, site_url: str, vendor: VendorReplay):
    usage = expected(RECORDING)["usage"]
    listed = list_price("gpt-4o-mini", "openai", usage)
    vendor.script(RECORDING)
    page, requested = chat_with(browser, site_url, vendor, "gpt-4o-mini")
    send(page, "What is the capital of the UK?")
    reply = last_reply(page)
    expect(reply.locator(".usage")).to_have_text(usage_line(usage, dollars(listed["usd"])), timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    meter = page.locator("#cost-meter")
    cost = dollars(listed["usd"])
    expect(meter.locator(".cost-spent")).to_have_text(f"This chat {cost} · today {cost}")
    counted = usage["input_tokens"] + usage["output_tokens"]  # the last request and its reply, as the vendor counted
    window = int(listed["window"])
    expect(meter.locator(".cost-context")).to_have_text(
        f"Context: ~{counted} of {window:,} tokens ({round(counted / window * 100)}%)")
    # The prices came with the site: no request went anywhere but the site and the vendor the user chose.
    hosts = {urlsplit(url).netloc for url in requested if url.startswith("http")}
    assert hosts <= {urlsplit(site_url).netloc, urlsplit(vendor.url).netloc}, hosts
    assert not any("raw.githubusercontent.com" in url for url in requested)
    assert any("/chunks/price_data-" in url for url in requested), "the price list is its own chunk, loaded on use"
    page.context.close()


def test_an_unknown_model_says_price_unknown_until_the_user_enters_its_price(browser: Browser, site_url: str,
                                                                              vendor: VendorReplay):
    usage = expected(RECORDING)["usage"]
    vendor.script(RECORDING)
    page, _ = chat_with(browser, site_url, vendor, "house-model-7")
    send(page, "hello")
    reply = last_reply(page)
    expect(reply.locator(".usage")).to_have_text(usage_line(usage, "price unknown"), timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    spent = page.locator("#cost-meter .cost-spent")
    expect(spent).to_have_text("This chat $0.00 + replies without a price · today $0.00")

    costs = open_settings(page).get_by_role("group", name="Costs")
    expect(costs.get_by_label("Model to price")).to_have_value("house-model-7")  # the model in use, offered
    costs.get_by_label("Input, USD per million tokens").fill("2")
    costs.get_by_label("Output, USD per million tokens").fill("8")
    costs.get_by_role("button", name="Add price").click()
    expect(costs.get_by_role("list", name="Your prices")).to_have_text(
        re.compile(r"house-model-7: USD 2 in · 8 out per million tokens"))
    own = (usage["input_tokens"] * 2 + usage["output_tokens"] * 8) / 1e6
    expect(reply.locator(".usage")).to_have_text(usage_line(usage, dollars(own)))  # drawn again with the price
    page.context.close()


def test_a_spending_cap_stops_the_second_request_before_it_leaves(browser: Browser, site_url: str,
                                                                   vendor: VendorReplay):
    usage = expected(RECORDING)["usage"]
    first = list_price("gpt-4o-mini", "openai", usage)["usd"]
    vendor.script(RECORDING, RECORDING)
    page, _ = chat_with(browser, site_url, vendor, "gpt-4o-mini")
    cap = first * 0.9  # the first request fits under it (its input alone is counted before it); its reply passes it
    set_conversation_cap(page, cap)

    send(page, "What is the capital of the UK?")
    expect(last_reply(page)).to_have_attribute("data-state", "done", timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    send(page, "And of France?")
    toast = page.locator(".toast.error", has_text="Not sent: this conversation has cost")
    expect(toast).to_have_text(re.compile(re.escape(f"has cost {dollars(first)} and its cap is {dollars(cap)};")))
    expect(toast).to_contain_text("Settings → Costs")
    expect(page.get_by_role("textbox", name="Message", exact=True)).to_have_value("And of France?")  # kept
    wait_idle(page)
    assert len(vendor.model_requests) == 1  # the second request never left
    page.context.close()


def test_the_context_meter_warns_near_the_window_and_says_what_happens_then(browser: Browser, site_url: str,
                                                                            vendor: VendorReplay):
    window = int(list_price("gpt-4o-mini", "openai", {"input_tokens": 0})["window"])
    page, _ = chat_with(browser, site_url, vendor, "gpt-4o-mini")
    meter = page.locator("#cost-meter")
    box = page.get_by_role("textbox", name="Message", exact=True)
    box.fill("x" * 400)
    expect(meter.locator(".cost-context")).to_have_text(f"Context: ~100 of {window:,} tokens (0%)")
    expect(meter.locator(".cost-warning")).to_have_count(0)
    box.fill("x" * (window * 4 * 85 // 100))  # 85% of the window, four characters a token
    warning = meter.get_by_role("status")
    expect(warning).to_have_text(re.compile(r"^Near the model's context window\. Turn on focus memory"))
    expect(meter).to_have_attribute("data-level", "near")
    page.get_by_role("button", name="Focus", exact=True).click()
    page.get_by_role("region", name="Focus memory").get_by_role("switch", name="Focus memory").check()
    expect(warning).to_have_text(re.compile(r"^Near the model's context window\. Focus memory is on: "))
    box.fill("x" * (window * 4 + 8))
    expect(warning).to_have_text(re.compile(r"^Over the model's context window\. Focus memory is on: the next request "
                                            r"sends the goal, the constraints and the latest exchanges that fit"))
    expect(meter).to_have_attribute("data-level", "over")
    assert not vendor.model_requests  # nothing was sent to learn any of it
    page.context.close()
