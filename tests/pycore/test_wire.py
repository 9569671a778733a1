"""The Python half of the page <-> worker protocol (web/protocol.js is the other half)."""

import asyncio
import json

import pytest

from pycore import __version__, wire

pytestmark = pytest.mark.pyodide


def test_info_names_version_python_and_methods():
    info = json.loads(wire.info())
    assert info["version"] == __version__
    assert "core.echo" in info["methods"]
    assert info["python"].count(".") == 2


async def test_echo_streams_events_then_returns_the_result():
    events = []
    task = wire.start("core.echo", json.dumps({"text": "hello brave world"}), events.append)
    result = json.loads(await task)
    assert result == {"text": "hello brave world"}
    decoded = [json.loads(e) for e in events]
    assert [e["type"] for e in decoded] == ["text_delta"] * 3
    assert "".join(e["text"] for e in decoded) == "hello brave world"


def test_unknown_method_is_a_clear_error():
    with pytest.raises(wire.UnknownMethodError, match="unknown method 'nope'.*core.echo"):
        wire.start("nope", "{}", lambda _: None)


async def test_a_running_call_can_be_cancelled():
    events = []
    task = wire.start("core.echo", json.dumps({"text": "a b c d"}), events.append)
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(events) < 4
