"""200 turns of one conversation, per vendor: the classifier's answers come through the vendor's
adapter from replayed bodies in its real wire format, faults included."""

from __future__ import annotations

import asyncio
import json

import focus_conversation as conv
import pytest
from focus_scripts import VENDORS

from pycore.adapters import get_adapter
from pycore.client import ChatClient
from pycore.focus import Classifier, FocusState, estimate_prompt, synthesize, update_focus
from pycore.http.replay import ReplayTransport
from pycore.messages import Message

BUDGET = 2000


async def no_wait(seconds: float) -> None:
    await asyncio.sleep(0)


_RUNS: dict[str, tuple] = {}  # one run per vendor serves the three tests (it is deterministic)


async def run_conversation(vendor: str):
    if vendor not in _RUNS:
        _RUNS[vendor] = await _run(vendor)
    state, per_turn, transport = _RUNS[vendor]
    return state.model_copy(deep=True), per_turn, transport


async def _run(vendor: str):
    turns = conv.conversation()
    transport = ReplayTransport(conv.recordings(vendor, turns))
    classifier = Classifier(ChatClient(get_adapter(vendor, api_key="sk-test-focus-000000000000"), transport),
                            "small-model", sleep=no_wait)
    state = FocusState(enabled=True)
    history: list[Message] = []
    per_turn: list[dict] = []
    for t in turns:
        prompt = synthesize(state, t.user, budget=BUDGET)  # before the reply: what the chat sends
        per_turn.append({"turn": t.number, "tokens": prompt.tokens, "system": prompt.system, "over": prompt.over_budget,
                         "full": estimate_prompt(None, [*history, Message.user(t.user)])})
        result = await update_focus(state, message_id=f"m{t.number}", text=t.user, reply=t.reply, classifier=classifier)
        per_turn[-1].update(ok=result.ok, labels=result.classification.labels, cost=result.cost)
        state = result.state
        history += [Message.user(t.user), Message.assistant(t.reply)]
    return state, per_turn, transport


@pytest.mark.pyodide
@pytest.mark.parametrize("vendor", VENDORS)
async def test_two_hundred_turns_keep_the_goal_and_every_constraint(vendor):
    state, per_turn, transport = await run_conversation(vendor)

    # every recorded answer was asked for exactly once: one retry per fault, never more
    assert len(transport.requests) == len(transport.recordings)
    # the constraint of turn 2 is in the prompt synthesized at turn 200, and so is every other one
    final = synthesize(state, "What is left to book?", budget=BUDGET)
    assert conv.BUDGET in final.system
    for _, constraint in conv.CONSTRAINTS.values():
        assert constraint in final.system
    assert conv.DIRECT in final.system and conv.DECISION in final.system
    # the core was replaced when the user redefined the trip
    assert state.core is not None and state.core.text == conv.REDEFINED and state.core.source_id == "m150"
    assert conv.REDEFINED in final.system and conv.PROBLEM not in final.system
    # the repeated budget was deduplicated and linked to both messages
    budget_items = [i for i in state.evolving if "6000 EUR" in i.text]
    assert len(budget_items) == 1 and budget_items[0].source_id == "m2" and budget_items[0].repeated_in == ["m120"]
    # each constraint links to the message that stated it
    assert {i.text: i.source_id for i in state.evolving}[conv.CONSTRAINTS[81][1]] == "m81"
    # bounded: every synthesized prompt stayed within the budget, while the full history grew past it
    assert all(not p["over"] and p["tokens"] <= BUDGET for p in per_turn)
    assert per_turn[-1]["full"] > 10 * BUDGET
    assert len(state.turn) == state.window and state.seen == conv.TURNS


@pytest.mark.pyodide
@pytest.mark.parametrize("vendor", VENDORS)
async def test_a_contradiction_is_flagged_on_both_sides(vendor):
    state, per_turn, transport = await run_conversation(vendor)
    old = next(i for i in state.evolving if i.text == conv.FLIGHT)
    new = next(i for i in state.evolving if i.text == conv.DIRECT)
    assert old.id == "c4" and new.conflicts_with == [old.id] and old.conflicts_with == [new.id]
    # the classifier was shown the ids it reports: the request at turn 140 listed the old rule as c4
    request_140 = transport.requests[_request_index(140)]
    assert f"c4: {conv.FLIGHT}" in json.dumps(json.loads(request_140.body))
    # the synthesized prompt says which one is newer
    final = synthesize(state, "Book the flights.", budget=BUDGET)
    assert f'overrides: "{conv.FLIGHT}"' in final.system
    # nothing else is flagged
    assert [i.id for i in state.evolving if i.conflicts_with] == sorted([old.id, new.id], key=lambda s: int(s[1:]))


@pytest.mark.pyodide
@pytest.mark.parametrize("vendor", VENDORS)
async def test_malformed_classifier_output_never_breaks_the_chat(vendor):
    state, per_turn, transport = await run_conversation(vendor)
    by_turn = {p["turn"]: p for p in per_turn}
    for n in conv.FAULTS:
        failed = n in conv.FAILED_TURNS
        assert by_turn[n]["ok"] is not failed, n
        assert by_turn[n]["cost"].calls == 2 and by_turn[n]["cost"].failures == len(conv.FAULTS[n])
        if failed:
            assert by_turn[n]["labels"] == ["UNCLEAR"]
    assert by_turn[81]["ok"] and conv.CONSTRAINTS[81][1] in [i.text for i in state.evolving]
    # the chat went on: every turn was synthesized and recorded, the faults changed nothing else
    assert len(per_turn) == conv.TURNS and state.seen == conv.TURNS
    assert len(state.evolving) == len(conv.CONSTRAINTS) + 2  # + the direct-flights rule + the decision
    # the cost is what the vendor reported, summed over every call, faults included
    assert state.cost.calls == len(transport.requests)
    assert state.cost.failures == sum(len(f) for f in conv.FAULTS.values())
    expected_input = sum(280 + t for t in range(1, conv.TURNS + 1) if t not in conv.FAILED_TURNS)
    assert state.cost.input_tokens >= expected_input
    # the key never reaches the state
    assert "sk-test-focus" not in state.model_dump_json()


def _request_index(turn: int) -> int:
    """Index of the (last) classifier request made for ``turn``."""
    index = 0
    for n in range(1, turn + 1):
        index += max(1, len(conv.FAULTS.get(n, []))) + (1 if 0 < len(conv.FAULTS.get(n, [])) < 2 else 0)
    return index - 1
