"""Prompt synthesis: jinja2 templates (en, ja, user-edited) under an estimated token budget."""

from __future__ import annotations

import pytest

from pycore.focus import FocusState, estimate_tokens, synthesize
from pycore.focus.prompts import default_source, render
from pycore.focus.state import Core, Exchange, Item
from pycore.messages import Message

pytestmark = pytest.mark.pyodide


def state(exchanges: int = 3, words: int = 50) -> FocusState:
    return FocusState(
        core=Core(text="Build a budgeting app"),
        evolving=[Item(id="c1", text="Offline first"), Item(id="c2", text="Use SQLite", kind="decision"),
                  Item(id="c3", text="No ads", pinned=True)],
        turn=[Exchange(id=f"m{n}", user=f"question {n} " + "word " * words, assistant=f"answer {n} " + "word " * words)
              for n in range(exchanges)],
        seen=40,
    )


def test_the_prompt_has_mission_constraints_recent_exchanges_and_the_current_message():
    result = synthesize(state(), "What next?", base_system="You are helpful.")
    assert result.system.startswith("You are helpful.\n\n## Mission\nBuild a budgeting app")
    assert result.system.index("[pinned] No ads") < result.system.index("Offline first")  # pinned first
    assert "Decided: Use SQLite" in result.system
    assert "37 earlier ones" in result.system  # 40 seen, 3 kept verbatim
    assert [m.role for m in result.messages] == ["user", "assistant"] * 3 + ["user"]
    assert result.messages[-1] == Message.user("What next?") and result.recent == 3 and not result.over_budget


def test_over_budget_the_oldest_exchanges_go_first_and_constraints_never():
    full = synthesize(state(words=200), "Next?", budget=100_000)
    tight = synthesize(state(words=200), "Next?", budget=full.tokens - 10)
    assert tight.recent == 2 and tight.omitted == 1 and tight.tokens <= tight.budget
    assert tight.messages[0].parts[0].text.startswith("question 1")
    tiny = synthesize(state(words=200), "Next?", budget=50)
    assert tiny.recent == 0 and tiny.over_budget and len(tiny.messages) == 1
    for text in ("Offline first", "Use SQLite", "No ads", "Build a budgeting app"):
        assert text in tiny.system


def test_japanese_templates():
    result = synthesize(state(), "次は何をしますか？", locale="ja-JP")
    assert "## 目的" in result.system and "## 制約と決定事項" in result.system and "［固定］No ads" in result.system
    assert "決定：Use SQLite" in result.system
    assert synthesize(state(), "x", locale="fr").system.count("## Mission") == 1  # no French: English


def test_an_edited_template_is_used_and_a_broken_one_falls_back_with_a_warning():
    template = "GOAL={{ mission }};{% for c in constraints %}{{ c.text }}|{% endfor %}"
    edited = synthesize(state(), "hi", overrides={"system.j2": template})
    assert edited.system == "GOAL=Build a budgeting app;No ads|Offline first|Use SQLite|" and not edited.warnings
    broken = synthesize(state(), "hi", overrides={"system.j2": "{% for c in constraints %}"})
    assert "## Mission" in broken.system
    assert broken.warnings and "template system.j2, line 1" in broken.warnings[0]


def test_an_edited_template_cannot_reach_python_internals():
    result = synthesize(state(), "hi", overrides={"current.j2": "{{ message.__class__.__mro__[1].__subclasses__() }}"})
    assert result.warnings and "unsafe" in result.warnings[0].lower()
    assert result.messages[-1].parts[0].text == "hi"  # the shipped template, not the override


def test_the_default_sources_are_what_the_editor_starts_from():
    assert "## Mission" in default_source("system.j2", "en") and "## 目的" in default_source("system.j2", "ja")
    assert render("current.j2", {"message": "as is"}) == "as is"


def test_the_token_estimate_counts_cjk_by_character():
    assert estimate_tokens("a" * 400) == 100
    assert estimate_tokens("予算は六千ユーロ以内") == 10
    assert estimate_tokens("café " * 20) == 30  # 80 ASCII chars / 4 + 20 accented / 2
