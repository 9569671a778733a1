"""Focus memory in the chat app, in real Chromium against the loopback replay vendor: the switch, a
goal and constraints taken from the conversation by the classifier (answers in the vendor's real wire
format, built from its recordings: focus_answers.py), edited, pinned and deleted in the panel, the
constraints in the system prompt the vendor receives, a reload, export and import, and a classifier
that answers garbage without stopping the chat."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from focus_answers import CHAT, USAGE, answer, is_classifier_request, labelled, system_of
from journeys import (
    REPLY_TIMEOUT_MS,
    browser_storage_dump,
    choose_file,
    configure,
    last_reply,
    open_app,
    send,
    wait_core,
    wait_idle,
    wait_ui,
)
from playwright.sync_api import Browser, Page, expect
from vendor_replay import VendorReplay, expected

pytestmark = pytest.mark.e2e

KEY = "sk-test-h9-focus-3b8e5d1a7c"  # made up: the point is to find where it goes
GOAL = "Plan a week-long trip to Japan"
BUDGET = "Budget under 2000 USD"
FLIGHTS = "No flight longer than 12 hours"
FOOD = "Vegetarian meals only"
FIRST_MESSAGE = "I want to plan a week-long trip to Japan."


def panel(page: Page):
    return page.get_by_role("region", name="Focus memory")


def open_panel(page: Page) -> None:
    """The panel is closed until the user opens it with the top bar's Focus button (then remembered)."""
    expect(panel(page)).to_be_hidden()
    page.get_by_role("button", name="Focus", exact=True).click()
    expect(panel(page)).to_be_visible()


def item(page: Page, text: str):
    return panel(page).locator("li.focus-item", has_text=text)


def turn(page: Page, vendor: VendorReplay, name: str, text: str, classification: bytes) -> None:
    """One turn: the vendor's streamed reply, then the classifier's answer for focus.update."""
    vendor.script(CHAT[name])
    vendor.script_body("classifier", classification)
    send(page, text)
    wait_idle(page)
    expect(last_reply(page).locator(".content")).to_have_text(expected(CHAT[name])["text"].strip())
    expect(panel(page)).not_to_have_attribute("data-updating", "true", timeout=REPLY_TIMEOUT_MS)


def chat_requests(vendor: VendorReplay, name: str):
    return [r for r in vendor.model_requests if not is_classifier_request(name, r.json)]


def test_focus_memory_keeps_goal_and_constraints_through_edits_reload_export_and_import(
        browser: Browser, site_url: str, vendor: VendorReplay, tmp_path: Path):
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    open_panel(page)
    # Off by default: the whole conversation goes each turn.
    switch = panel(page).get_by_role("switch", name="Focus memory")
    expect(switch).not_to_be_checked()
    switch.check()
    expect(panel(page).get_by_text("No goal yet")).to_be_visible()

    turn(page, vendor, "openai", FIRST_MESSAGE,
         answer("openai", labelled(["PROBLEM_DEFINITION"], "states the goal", problem=GOAL)))
    expect(panel(page).locator(".focus-goal-text")).to_have_text(GOAL)
    expect(panel(page).locator(".focus-status")).to_have_text("Last message: PROBLEM_DEFINITION: states the goal")

    turn(page, vendor, "openai", "Keep it under 2000 USD.",
         answer("openai", labelled(["CONSTRAINT_ADDITION"], "adds a budget", constraints=[BUDGET])))
    turn(page, vendor, "openai", "No flights over 12 hours, and I only eat vegetarian.",
         answer("openai", labelled(["CONSTRAINT_ADDITION"], "two constraints", constraints=[FLIGHTS, FOOD])))
    for text in (BUDGET, FLIGHTS, FOOD):
        expect(item(page, text)).to_have_count(1)
    # The classifier ran once per message, at the cost each answer reported.
    calls = 3
    expect(panel(page).locator(".focus-cost")).to_have_text(
        f"Classifier: {calls} calls · {calls * USAGE[0]:,} in / {calls * USAGE[1]:,} out tokens")

    # A later turn: the vendor gets the mission and every constraint in its system prompt.
    turn(page, vendor, "openai", "Which city should I start in?",
         answer("openai", labelled(["QUESTION"], "asks a question")))
    system = system_of("openai", chat_requests(vendor, "openai")[-1].json)
    for text in (GOAL, BUDGET, FLIGHTS, FOOD):
        assert text in system
    classifier_request = vendor.model_requests[-1].json
    assert classifier_request["tool_choice"]["function"]["name"] == "record_classification"
    asked = "Which city should I start in?"
    assert classifier_request["messages"][-1]["content"] in (asked, [{"type": "text", "text": asked}])

    # The user edits one, pins one, deletes one.
    flights = item(page, FLIGHTS)
    flights_id = flights.get_attribute("data-id")
    flights.get_by_role("button", name="Edit").click()
    field = panel(page).locator(f"li.focus-item[data-id={flights_id}]").get_by_role("textbox", name="Edit text")
    field.fill("No flight longer than 10 hours")
    field.press("Enter")
    expect(item(page, "No flight longer than 10 hours")).to_have_count(1)
    item(page, BUDGET).get_by_role("button", name="Pin").click()
    expect(item(page, BUDGET)).to_have_class("focus-item pinned")
    item(page, FOOD).get_by_role("button", name="Delete").click()
    expect(item(page, FOOD)).to_have_count(0)

    turn(page, vendor, "openai", "What about Kyoto?", answer("openai", labelled(["QUESTION"], "asks about Kyoto")))
    system = system_of("openai", chat_requests(vendor, "openai")[-1].json)
    assert f"[pinned] {BUDGET}" in system and "No flight longer than 10 hours" in system
    assert FLIGHTS not in system and FOOD not in system
    # Only the last exchanges go, not the whole transcript: the first message is in no request message.
    sent = json.dumps(chat_requests(vendor, "openai")[-1].json["messages"][1:])
    assert FIRST_MESSAGE not in sent

    # The classifier answers garbage (twice: the retry too): the chat goes on, the panel says so.
    vendor.script(CHAT["openai"])
    broken = answer("openai", raw='{"labels": ["QUESTION"], "reason": "cut off')
    vendor.script_body("classifier-broken", broken)
    vendor.script_body("classifier-broken", broken)
    send(page, "And Osaka?")
    wait_idle(page)
    expect(last_reply(page).locator(".content")).to_have_text(expected(CHAT["openai"])["text"].strip())
    expect(panel(page).locator(".focus-status.error")).to_contain_text("Classifier failed")
    expect(panel(page).locator(".focus-cost")).to_contain_text("2 failed")
    expect(panel(page).locator(".focus-goal-text")).to_have_text(GOAL)  # nothing lost
    turn(page, vendor, "openai", "Thanks, one more: trains or planes?",
         answer("openai", labelled(["QUESTION"], "asks about transport")))
    assert "No flight longer than 10 hours" in system_of("openai", chat_requests(vendor, "openai")[-1].json)

    # The key is in no stored focus state.
    dump = browser_storage_dump(page)
    assert BUDGET in dump and KEY not in dump

    # A reload finds the focus state with the conversation (and the panel still open).
    page.reload()
    wait_core(page)
    page.get_by_role("complementary").get_by_role("button", name=FIRST_MESSAGE, exact=True).click()
    expect(panel(page).get_by_role("switch", name="Focus memory")).to_be_checked()
    expect(panel(page).locator(".focus-goal-text")).to_have_text(GOAL)
    expect(item(page, BUDGET)).to_have_class("focus-item pinned")
    expect(item(page, "No flight longer than 10 hours")).to_have_count(1)
    expect(item(page, FOOD)).to_have_count(0)

    # Export carries focus: {core, evolving, turn}, and no key.
    page.get_by_role("button", name="Export", exact=True).click()
    with page.expect_download() as download:
        page.get_by_role("button", name="This conversation (JSON)").click()
    exported = tmp_path / "focus.json"
    download.value.save_as(exported)
    text = exported.read_text()
    assert KEY not in text
    focus = json.loads(text)["conversations"][0]["focus"]
    assert focus["enabled"] is True and focus["core"]["text"] == GOAL
    assert [(i["text"], i["pinned"]) for i in focus["evolving"]] == [(BUDGET, True),
                                                                     ("No flight longer than 10 hours", False)]
    assert focus["turn"] and focus["turn"][-1]["user"] == "Thanks, one more: trains or planes?"
    page.context.close()

    # Another browser: a bad focus state is refused by name and nothing is written; the good file
    # brings the conversation back with its focus memory.
    other = open_app(browser, site_url)
    wait_ui(other)  # a first run: the setup card shows in the chat, nothing to close
    data = json.loads(text)
    data["conversations"][0]["focus"]["evolving"][0]["id"] = "budget"
    bad = tmp_path / "bad-focus.json"
    bad.write_text(json.dumps(data))
    choose_file(other, "Import", bad)
    # The first focus.validate loads the focus models in the worker: allow it a turn's time.
    alert = other.get_by_role("alert")
    expect(alert).to_contain_text("Import failed, nothing was changed", timeout=REPLY_TIMEOUT_MS)
    expect(alert).to_contain_text(f"conversations[0] ({FIRST_MESSAGE}): focus state: evolving.0.id")
    expect(other.get_by_role("complementary").locator(".conversations li")).to_have_count(0)

    choose_file(other, "Import", exported)
    expect(other.get_by_text("Imported 1 conversation(s).")).to_be_visible()
    other.get_by_role("complementary").get_by_role("button", name=FIRST_MESSAGE, exact=True).click()
    open_panel(other)
    expect(panel(other).get_by_role("switch", name="Focus memory")).to_be_checked()
    expect(panel(other).locator(".focus-goal-text")).to_have_text(GOAL)
    expect(item(other, BUDGET)).to_have_class("focus-item pinned")
    other.context.close()


@pytest.mark.parametrize("name", ["anthropic", "gemini"])
def test_the_classifier_answers_in_each_vendors_format(browser: Browser, site_url: str, vendor: VendorReplay,
                                                       name: str):
    page = open_app(browser, site_url)
    model = {"anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-flash"}[name]
    configure(page, vendor=name, base=vendor.url, key=KEY, model=model)
    open_panel(page)
    panel(page).get_by_role("switch", name="Focus memory").check()
    turn(page, vendor, name, "Plan a week-long trip to Japan; budget under 2000 USD.",
         answer(name, labelled(["PROBLEM_DEFINITION", "CONSTRAINT_ADDITION"], "goal and budget", problem=GOAL,
                               constraints=[BUDGET])))
    expect(panel(page).locator(".focus-goal-text")).to_have_text(GOAL)
    expect(item(page, BUDGET)).to_have_count(1)
    # Malformed output (twice) does not stop the chat; the next turn still carries the constraint.
    vendor.script(CHAT[name])
    broken = answer(name, raw="labels: QUESTION")
    vendor.script_body("broken", broken)
    vendor.script_body("broken", broken)
    send(page, "Where first?")
    wait_idle(page)
    expect(panel(page).locator(".focus-status.error")).to_contain_text("Classifier failed")
    turn(page, vendor, name, "And then?", answer(name, labelled(["QUESTION"], "asks")))
    system = system_of(name, chat_requests(vendor, name)[-1].json)
    assert GOAL in system and BUDGET in system
    page.context.close()


def test_the_prompt_templates_are_edited_checked_previewed_used_and_reset_in_the_app(
        browser: Browser, site_url: str, vendor: VendorReplay):
    page = open_app(browser, site_url)
    configure(page, vendor="openai", base=vendor.url, key=KEY, model="gpt-4o-mini")
    open_panel(page)
    panel(page).get_by_role("switch", name="Focus memory").check()
    templates = panel(page).locator("details.focus-templates")
    templates.locator("summary").click()
    templates.get_by_label("Template", exact=True).select_option("system.j2")
    source = templates.get_by_label("Template source (Jinja)")
    default = source.input_value()
    assert "{%" in default or "{{" in default  # the core's own template, shown to edit

    source.fill("{% if %}broken")
    templates.get_by_role("button", name="Save template").click()
    expect(templates.get_by_role("status")).to_contain_text("Not saved:")
    expect(templates.get_by_role("status")).to_contain_text("line 1")

    source.fill("ANSWER AS A HAIKU.\n" + default)
    templates.get_by_role("button", name="Preview").click()
    preview = templates.locator(".focus-template-preview")
    expect(preview).to_contain_text("[system]\nANSWER AS A HAIKU.")
    expect(preview).to_contain_text("(your next message)")
    templates.get_by_role("button", name="Save template").click()
    expect(templates.get_by_role("status")).to_have_text("Saved: the next turn uses it.")

    turn(page, vendor, "openai", FIRST_MESSAGE,
         answer("openai", labelled(["PROBLEM_DEFINITION"], "states the goal", problem=GOAL)))
    assert system_of("openai", chat_requests(vendor, "openai")[-1].json).startswith("ANSWER AS A HAIKU.")

    page.reload()
    templates = panel(page).locator("details.focus-templates")
    templates.locator("summary").click()
    templates.get_by_label("Template", exact=True).select_option("system.j2")
    expect(templates.get_by_label("Template source (Jinja)")).to_have_value("ANSWER AS A HAIKU.\n" + default)
    templates.get_by_role("button", name="Reset to default").click()
    expect(templates.get_by_label("Template source (Jinja)")).to_have_value(default)


def test_templates_that_cannot_be_loaded_say_why_instead_of_loading_forever(browser: Browser, site_url: str):
    """Focus memory's templates come from jinja2, a wheel the worker installs after start-up; when it could not be
    fetched, opening the templates said "Loading the templates…" for ever: the error had no place to go."""
    context = browser.new_context(service_workers="block")
    context.route("**/jinja2-*.whl", lambda route: route.abort())
    page = open_app(browser, site_url, context=context)
    open_panel(page)
    panel(page).get_by_role("switch", name="Focus memory").check()
    templates = panel(page).locator("details.focus-templates")
    templates.locator("summary").click()
    expect(templates.get_by_role("alert")).to_contain_text("jinja2")
    expect(templates).not_to_contain_text("Loading the templates")
    context.close()
