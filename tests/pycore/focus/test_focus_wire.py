"""The focus.* wire methods as the page calls them: JSON in, JSON out, through pycore.wire.start;
the classifier's vendor answers come from replayed recordings."""

from __future__ import annotations

import json

import focus_scripts as fs
import pytest

from pycore import wire
from pycore.http.replay import ReplayTransport
from pycore.methods._provider import use_transport

pytestmark = pytest.mark.pyodide
KEY = "sk-ant-wirefocustestkey00000000"
CLASSIFIER = {"provider": {"vendor": "anthropic", "api_key": KEY}, "model": "claude-haiku-4-5"}
ANSWER = {"labels": ["PROBLEM_DEFINITION", "CONSTRAINT_ADDITION"], "reason": "states the goal and a limit",
          "problem": "Write a CLI that renames photos by date.", "constraints": ["Python standard library only."],
          "decisions": [], "contradicts": []}


async def call(name: str, params: dict) -> dict:
    events: list[str] = []
    return json.loads(await wire.start(name, json.dumps(params), events.append))


@pytest.fixture
def vendor():
    transport = ReplayTransport([fs.answer("anthropic", ANSWER, usage=(412, 57))])
    use_transport(lambda: transport)
    yield transport
    use_transport(None)


async def test_update_classifies_folds_and_returns_the_new_state_and_the_cost(vendor):
    message = {"id": "m1", "text": "I need a CLI that renames photos by date, stdlib only."}
    result = await call("focus.update", {"state": None, "message": message, "reply": {"text": "Sure."},
                                         "classifier": CLASSIFIER})
    assert set(result) == {"state", "classification", "ok", "cost"}  # no error: left out, as every None is
    assert result["ok"]
    assert result["classification"] == ANSWER
    assert result["cost"] == {"calls": 1, "failures": 0, "input_tokens": 412, "output_tokens": 57}
    state = result["state"]
    assert state["core"] == {"text": ANSWER["problem"], "source_id": "m1", "edited": False}
    assert state["evolving"][0] == {"id": "c1", "text": "Python standard library only.", "kind": "constraint",
                                          "source_id": "m1", "repeated_in": [], "pinned": False, "edited": False,
                                          "conflicts_with": []}
    assert state["turn"] == [{"id": "m1", "user": message["text"], "assistant": "Sure."}]
    assert state["cost"] == result["cost"] and KEY not in json.dumps(result)
    assert json.loads(vendor.requests[0].body)["tool_choice"]["type"] == "tool"


async def test_synthesize_returns_the_system_prompt_and_messages_for_chat_run(vendor):
    updated = await call("focus.update", {"message": {"id": "m1", "text": "photos CLI"}, "classifier": CLASSIFIER})
    state = updated["state"]
    result = await call("focus.synthesize", {"state": state, "text": "Add a --dry-run flag.", "system": "Be brief.",
                                             "budget": 500, "locale": "en"})
    assert set(result) == {"system", "messages", "tokens", "budget", "recent", "omitted", "over_budget", "warnings"}
    assert "Python standard library only." in result["system"] and result["system"].startswith("Be brief.")
    assert result["messages"] == [{"role": "user", "parts": [{"type": "text", "text": "photos CLI", "refusal": False}]},
                                  {"role": "user", "parts": [{"type": "text", "text": "Add a --dry-run flag.",
                                                              "refusal": False}]}]
    assert 0 < result["tokens"] <= 500 and result["recent"] == 1


async def test_classify_alone_and_update_with_its_result_make_one_vendor_call(vendor):
    classified = await call("focus.classify", {"classifier": CLASSIFIER, "text": "photos CLI, stdlib only"})
    assert set(classified) == {"classification", "ok", "attempts", "cost", "strategy"}
    assert classified["strategy"] == "tool" and classified["attempts"] == 1
    result = await call("focus.update", {"message": {"text": "photos CLI, stdlib only"}, "classified": classified,
                                         "classifier": CLASSIFIER})
    assert result["state"]["evolving"][0]["text"] == "Python standard library only." and len(vendor.requests) == 1


async def test_a_failing_classifier_is_a_result_not_an_error():
    transport = ReplayTransport([fs.rate_limited("anthropic")])
    use_transport(lambda: transport)
    try:
        result = await call("focus.update", {"message": {"id": "m1", "text": "hello"}, "classifier": CLASSIFIER})
    finally:
        use_transport(None)
    assert not result["ok"] and result["classification"]["labels"] == ["UNCLEAR"]
    assert result["error"] == "vendor error 429 rate_limit_error" and result["state"]["turn"][0]["user"] == "hello"


@pytest.mark.parametrize(("name", "params", "message"), [
    ("focus.synthesize", {"state": {"evolving": [{"id": "7", "text": "x"}]}, "text": "hi"}, "evolving.0.id"),
    ("focus.synthesize", {"text": 5}, "text: must be a string"),
    ("focus.synthesize", {"text": "hi", "budget": "lots"}, "budget must be a positive number"),
    ("focus.update", {"message": "hi"}, "message: Input should be a valid dictionary"),
    ("focus.classify", {"classifier": {"provider": {"vendor": "anthropic"}}, "text": "x"},
     "classifier.model: Field required"),
    ("focus.classify", {"classifier": {**CLASSIFIER, "strategy": "xml"}, "text": "x"},
     "classifier.strategy: strategy must be auto, tool or json"),
    ("focus.validate", {"state": {"turn": "all"}}, "turn"),
])
async def test_bad_params_are_errors_that_name_the_param(name, params, message):
    with pytest.raises(ValueError, match=message):
        await call(name, params)


async def test_templates_gives_the_editable_sources_and_checks_edits():
    result = await call("focus.templates",
                        {"locale": "ja", "templates": {"system.j2": "{% if %}", "current.j2": "{{ message }}"}})
    assert result["locale"] == "ja" and result["locales"] == ["en", "ja"]
    assert "## 目的" in result["templates"]["system.j2"]
    assert list(result["errors"]) == ["system.j2"] and "line 1" in result["errors"]["system.j2"]


async def test_validate_round_trips_an_exported_state():
    state = {"enabled": True, "core": {"text": "Goal"}, "evolving": [{"id": "c2", "text": "Rule", "pinned": True}],
             "turn": []}
    result = await call("focus.validate", {"state": state})
    assert result["state"]["evolving"][0]["pinned"] and result["state"]["core"]["text"] == "Goal"
