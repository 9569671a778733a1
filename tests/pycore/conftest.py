"""Shared test helpers for pycore: where the recorded vendor fixtures live.

Only the stdlib and pytest here: these helpers are imported by tests that also run inside Pyodide (jsonschema,
for the contract check below, only where it is installed).
"""

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

try:  # CPython only: Pyodide's test run has no jsonschema, and checks the same contract there through these tests
    import jsonschema
except ImportError:  # pragma: no cover - in Pyodide
    jsonschema = None


@pytest.fixture(autouse=True)
def results_follow_the_contract(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every result any test gets over the wire is valid against its method's result schema
    (``results`` of :func:`pycore.commands.contract.json_schema`): the page can rely on the shape, not only on what
    the method's own tests happened to look at."""
    if jsonschema is None:
        yield
        return
    from pycore import wire
    from pycore.commands.contract import json_schema

    schema = json_schema()
    defs = schema["$defs"]
    start = wire.start
    problems: list[str] = []

    def check(name: str, task: asyncio.Task[str]) -> None:
        if task.cancelled() or task.exception() is not None:
            return
        result: Any = json.loads(task.result())
        validator = jsonschema.Draft202012Validator({"$defs": defs, **schema["results"][name]})
        problems.extend(f"{name}: {e.json_path}: {e.message}" for e in validator.iter_errors(result))

    def checked_start(name: str, params_json: str, emit: Any) -> asyncio.Task[str]:
        task = start(name, params_json, emit)
        task.add_done_callback(lambda done: check(name, done))
        return task

    monkeypatch.setattr(wire, "start", checked_start)
    yield
    assert not problems, f"results outside the contract: {problems}"
