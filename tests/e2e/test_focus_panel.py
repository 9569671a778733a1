"""web/focus/panel.js in real Chromium, under the site's real CSP: the "Focus memory" switch, the
goal and constraints edited, pinned and deleted, contradiction flags, the classifier's cost, both
languages, and model-written text kept as text.

The harness entry is written here (it mounts the panel on a sample state and prints every state the
panel hands to onChange into #out), bundled with esbuild and served by the real relay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import HarnessSite
from playwright.sync_api import Browser, Page, expect

pytestmark = pytest.mark.e2e
WEB = Path(__file__).resolve().parents[2] / "web"
HOSTILE = '<img src=x onerror="document.title=\'pwned\'">Budget under 6000 EUR'
STATE = {
    "version": 1, "enabled": False, "window": 3, "seen": 41, "turn": [],
    "core": {"text": "Plan a family trip to Japan", "source_id": "m1", "edited": False},
    "evolving": [
        {"id": "c1", "text": HOSTILE, "kind": "constraint", "source_id": "m2", "repeated_in": [], "pinned": False,
         "edited": False, "conflicts_with": []},
        {"id": "c2", "text": "No flight longer than 12 hours", "kind": "constraint", "source_id": "m37",
         "repeated_in": [], "pinned": False, "edited": False, "conflicts_with": ["c3"]},
        {"id": "c3", "text": "Direct flights only", "kind": "constraint", "source_id": "m40", "repeated_in": [],
         "pinned": False, "edited": False, "conflicts_with": ["c2"]},
        {"id": "c4", "text": "Stay in a ryokan in Kyoto", "kind": "decision", "source_id": "m41", "repeated_in": [],
         "pinned": False, "edited": False, "conflicts_with": []},
    ],
    "cost": {"calls": 42, "failures": 2, "input_tokens": 13120, "output_tokens": 1480},
}
ENTRY = """
import { mountFocusPanel } from "%(web)s/focus/panel.js";
import { translator } from "%(web)s/app/i18n.js";
const lang = new URLSearchParams(location.search).get("lang") || "en";
const out = document.getElementById("out");
const panel = mountFocusPanel(document.getElementById("panel"), {
  state: %(state)s,
  t: translator(lang),
  onChange: (state) => { out.textContent = JSON.stringify(state); },
});
panel.setStatus({ok: true, classification: {labels: ["CONSTRAINT_ADDITION"], reason: "adds a flight rule"},
                 cost: {calls: 1, failures: 0, input_tokens: 412, output_tokens: 57}});
panel.setPrompt({tokens: 1664, budget: 2000, over_budget: false});
document.body.dataset.ready = "yes";
"""


@pytest.fixture(scope="module")
def panel_url(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("focus")
    entry = root / "entry.js"
    entry.write_text(ENTRY % {"web": WEB.as_posix(), "state": json.dumps(STATE)})
    site = HarnessSite(root)
    site.add_page("focus", entry=entry, css=WEB / "focus" / "panel.css",
                  body='<div id="panel"></div><pre id="out"></pre>')
    url = site.start()
    yield url + "focus.html"
    site.stop()


@pytest.fixture
def page(browser: Browser, panel_url: str):
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # a CSP refusal (an inline style or script of ours) shows up as a console error starting "Refused"
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "Refused" in m.text else None)
    page.goto(panel_url)
    page.wait_for_selector("body[data-ready=yes]", state="attached")
    yield page
    context.close()
    assert errors == []


def last_state(page: Page) -> dict:
    return json.loads(page.locator("#out").text_content() or "null")


def switch_on(page: Page) -> None:
    page.get_by_role("switch", name="Focus memory").check()


def item(page: Page, item_id: str):
    return page.locator(f"li.focus-item[data-id={item_id}]")


def test_the_switch_turns_focus_memory_on_for_the_conversation(page):
    switch = page.get_by_role("switch", name="Focus memory")
    expect(switch).not_to_be_checked()
    expect(page.locator(".focus-off")).to_be_visible()
    expect(page.locator(".focus-items")).to_have_count(0)
    switch.check()
    assert last_state(page)["enabled"] is True
    expect(page.locator(".focus-goal-text")).to_have_text("Plan a family trip to Japan")
    expect(page.locator("li.focus-item")).to_have_count(4)
    switch.uncheck()
    assert last_state(page)["enabled"] is False


def test_the_goal_is_editable_and_deletable(page):
    switch_on(page)
    page.locator(".focus-goal .focus-edit-button").click()
    editor = page.get_by_role("textbox", name="Edit text")
    editor.fill("Plan a 12-day family trip to Japan and Korea")
    page.locator(".focus-goal .focus-save").click()
    assert last_state(page)["core"] == {"text": "Plan a 12-day family trip to Japan and Korea", "source_id": "m1",
                                        "edited": True}
    expect(page.locator(".focus-goal-text")).to_have_text("Plan a 12-day family trip to Japan and Korea")
    page.locator(".focus-goal .focus-delete").click()
    assert last_state(page)["core"] is None
    expect(page.locator(".focus-goal .focus-set-goal")).to_be_visible()


def test_constraints_are_pinnable_editable_deletable_and_addable(page):
    switch_on(page)
    item(page, "c4").get_by_role("button", name="Pin").click()
    assert next(i for i in last_state(page)["evolving"] if i["id"] == "c4")["pinned"] is True
    expect(page.locator("li.focus-item").first).to_have_attribute("data-id", "c4")  # pinned first
    expect(item(page, "c4").get_by_role("button", name="Unpin")).to_have_attribute("aria-pressed", "true")

    item(page, "c2").get_by_role("button", name="Edit").click()
    page.get_by_role("textbox", name="Edit text").fill("No flight longer than 14 hours")
    page.get_by_role("textbox", name="Edit text").press("Enter")
    edited = next(i for i in last_state(page)["evolving"] if i["id"] == "c2")
    assert edited["text"] == "No flight longer than 14 hours" and edited["edited"] is True

    item(page, "c2").get_by_role("button", name="Delete").click()
    state = last_state(page)
    assert [i["id"] for i in state["evolving"]] == ["c1", "c3", "c4"]
    assert next(i for i in state["evolving"] if i["id"] == "c3")["conflicts_with"] == []  # the flag went with it
    expect(page.locator(".focus-conflict")).to_have_count(0)

    page.get_by_role("textbox", name="Add a constraint…").fill("Trains only inside Japan")
    page.get_by_role("button", name="Add", exact=True).click()
    added = last_state(page)["evolving"][-1]
    assert added == {"id": "c5", "text": "Trains only inside Japan", "kind": "constraint", "source_id": None,
                     "repeated_in": [], "pinned": False, "edited": True, "conflicts_with": []}


def test_contradictions_are_flagged_and_can_be_kept(page):
    switch_on(page)
    expect(item(page, "c2").locator(".focus-conflict")).to_have_text("⚠ Conflicts with: Direct flights only")
    expect(item(page, "c3").locator(".focus-conflict")).to_have_text("⚠ Conflicts with: No flight longer than 12 hours")
    item(page, "c3").get_by_role("button", name="Keep both").click()
    assert all(i["conflicts_with"] == [] for i in last_state(page)["evolving"])
    expect(page.locator(".focus-conflict")).to_have_count(0)


def test_the_classifier_cost_and_the_last_labels_are_shown(page):
    switch_on(page)
    expect(page.locator(".focus-cost")).to_have_text("Classifier: 42 calls · 13,120 in / 1,480 out tokens · 2 failed")
    expect(page.locator(".focus-status")).to_have_text("Last message: CONSTRAINT_ADDITION: adds a flight rule")
    expect(page.locator(".focus-prompt")).to_have_text("Prompt: 1664 / 2000 tokens (estimated)")


def test_japanese(browser: Browser, panel_url: str):
    context = browser.new_context()
    page = context.new_page()
    page.goto(panel_url + "?lang=ja")
    page.wait_for_selector("body[data-ready=yes]", state="attached")
    page.get_by_role("switch", name="フォーカスメモリ").check()
    expect(page.locator(".focus-goal h3")).to_have_text("目的")
    expect(page.locator(".focus-constraints h3")).to_have_text("制約と決定事項")
    expect(item(page, "c4").get_by_role("button", name="固定", exact=True)).to_be_visible()
    expect(page.locator(".focus-cost")).to_contain_text("分類器：42 回")
    context.close()


def test_model_written_text_stays_text(page):
    switch_on(page)
    expect(item(page, "c1").locator(".focus-item-text")).to_have_text(HOSTILE)
    expect(page.locator(".focus-panel img")).to_have_count(0)
    assert page.title() != "pwned"
