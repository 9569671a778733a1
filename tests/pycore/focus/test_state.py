"""Export and import of the focus state: ``focus: {core, evolving, turn}`` round-trips, and a bad
import names what is wrong."""

from __future__ import annotations

import json

import pytest

from pycore.focus import FocusState, FocusStateError
from pycore.focus.state import Core, Exchange, Item

pytestmark = pytest.mark.pyodide


def sample() -> FocusState:
    return FocusState(enabled=True, core=Core(text="Plan a trip", source_id="m1"),
                      evolving=[Item(id="c1", text="Under 6000 EUR", source_id="m2", pinned=True),
                                Item(id="c2", text="Direct flights", source_id="m9", conflicts_with=["c3"]),
                                Item(id="c3", text="No flight over 12 h", conflicts_with=["c2"])],
                      turn=[Exchange(id="m9", user="direct only", assistant="ok")], seen=9)


def test_export_has_the_three_tiers_and_import_restores_it_exactly():
    exported = json.loads(json.dumps(sample().to_export()))
    assert {"core", "evolving", "turn"} <= set(exported)
    assert exported["core"] == {"text": "Plan a trip", "source_id": "m1", "edited": False}
    assert FocusState.from_export(exported) == sample()


def test_missing_focus_imports_as_an_empty_state():
    assert FocusState.from_export(None) == FocusState()


@pytest.mark.parametrize(("data", "message"), [
    ("focus", "must be an object"),
    ({"core": {"text": ""}}, "core.text"),
    ({"evolving": [{"id": "x1", "text": "a"}]}, "evolving.0.id"),
    ({"evolving": [{"id": "c1", "text": "a"}, {"id": "c1", "text": "b"}]}, "share an id"),
    ({"turn": [{"user": 3}]}, "turn.0.user"),
    ({"window": 99}, "window"),
    ({"surprise": 1}, "surprise"),
    ({"version": 2}, "version"),
])
def test_a_bad_import_names_the_field(data, message):
    with pytest.raises(FocusStateError, match=message):
        FocusState.from_export(data)


def test_flags_pointing_at_deleted_items_are_dropped_on_import():
    exported = sample().to_export()
    exported["evolving"] = [i for i in exported["evolving"] if i["id"] != "c3"]  # the user deleted c3
    state = FocusState.from_export(exported)
    assert state.item("c2").conflicts_with == [] and state.next_item_id() == "c3"


def test_pinned_items_come_first():
    state = FocusState(evolving=[Item(id="c1", text="a"), Item(id="c2", text="b", pinned=True)])
    assert [i.id for i in state.ordered_items()] == ["c2", "c1"]
