"""Folding classifications into the tiers: core replaced, constraints deduplicated and linked,
contradictions flagged on both sides, the turn tier bounded."""

from __future__ import annotations

import pytest

from pycore.focus import Classification, FocusState, apply, record_exchange
from pycore.focus.state import Item

pytestmark = pytest.mark.pyodide


def c(labels, **fields) -> Classification:
    return Classification(labels=labels, reason="r", **fields)


def test_a_problem_definition_sets_then_replaces_the_core():
    state = apply(FocusState(), c(["PROBLEM_DEFINITION"], problem="Write a CLI in Go"), message_id="m1", text="...")
    assert state.core.text == "Write a CLI in Go" and state.core.source_id == "m1"
    state = apply(state, c(["PROBLEM_DEFINITION"]), message_id="m9", text="Make it a web app instead.")
    assert state.core.text == "Make it a web app instead." and state.core.source_id == "m9"


def test_questions_and_unclear_change_nothing():
    state = FocusState(evolving=[Item(id="c1", text="Use Go")])
    for labels in (["QUESTION"], ["UNCLEAR"]):
        after = apply(state, c(labels, constraints=["Use Rust"], contradicts=["c1"]), message_id="m2", text="?")
        assert after == state


def test_same_constraint_said_again_is_one_item_linked_to_both_messages():
    state = apply(FocusState(), c(["CONSTRAINT_ADDITION"], constraints=["No external dependencies."]),
                  message_id="m1", text="...")
    for n in range(2, 9):
        state = apply(state, c(["CONSTRAINT_ADDITION"], constraints=["no  external dependencies"]),
                      message_id=f"m{n}", text="...")
    assert len(state.evolving) == 1
    assert state.evolving[0].source_id == "m1" and state.evolving[0].repeated_in == ["m4", "m5", "m6", "m7", "m8"]


def test_different_constraints_each_get_an_id_and_a_kind():
    state = apply(FocusState(), c(["CONSTRAINT_ADDITION", "REFINEMENT"], constraints=["Python 3.11"],
                                  decisions=["Use SQLite"]), message_id="m1", text="...")
    assert [(i.id, i.kind, i.text) for i in state.evolving] == [("c1", "constraint", "Python 3.11"),
                                                                ("c2", "decision", "Use SQLite")]


def test_a_contradiction_is_flagged_on_both_sides_and_both_stay():
    state = FocusState(evolving=[Item(id="c1", text="Use SQLite"), Item(id="c2", text="Tests in pytest")])
    state = apply(state, c(["CONSTRAINT_ADDITION"], constraints=["Use PostgreSQL"], contradicts=["c1", "c9"]),
                  message_id="m5", text="...")
    new = state.item("c3")
    assert new.conflicts_with == ["c1"] and state.item("c1").conflicts_with == ["c3"]
    assert state.item("c2").conflicts_with == []


def test_a_contradiction_without_a_restated_rule_keeps_the_message_as_the_new_rule():
    state = FocusState(evolving=[Item(id="c1", text="Budget under 100 EUR")])
    state = apply(state, c(["REFINEMENT"], contradicts=["c1"]), message_id="m3", text="Forget the  budget limit.")
    assert state.item("c2").text == "Forget the budget limit." and state.item("c1").conflicts_with == ["c2"]


def test_pinned_and_edited_items_keep_their_words():
    state = FocusState(evolving=[Item(id="c1", text="Use Go 1.22", pinned=True, edited=True)])
    state = apply(state, c(["CONSTRAINT_ADDITION"], constraints=["use go 1.22"]), message_id="m2", text="...")
    assert state.evolving[0].text == "Use Go 1.22" and state.evolving[0].repeated_in == ["m2"]


@pytest.mark.parametrize("window", [0, 1, 3])
def test_the_turn_tier_keeps_the_last_window_exchanges(window):
    state = FocusState(window=window)
    for n in range(5):
        state = record_exchange(state, message_id=f"m{n}", user=f"u{n}", assistant=f"a{n}")
    assert [e.id for e in state.turn] == [f"m{n}" for n in range(5 - window, 5)] and state.seen == 5


def test_apply_does_not_change_the_state_it_is_given():
    state = FocusState()
    apply(state, c(["CONSTRAINT_ADDITION"], constraints=["x"]), message_id="m1", text="x")
    assert state.evolving == []
