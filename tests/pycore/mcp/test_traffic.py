"""The traffic inspector's record (pycore.mcp.traffic) against a real server on the official SDK: every message
in and out with its time, no secret in it, and a replay of the exported file with the server gone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_servers import sdk_server

from pycore import wire
from pycore.mcp import ClientSession
from pycore.mcp.replay import replay
from pycore.mcp.traffic import FORMAT, export

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "tok-traffic-0123456789"


async def call(method: str, params: dict) -> dict:
    return json.loads(await wire.start(method, json.dumps(params), lambda _text: None))


async def recorded_session(tmp_path: Path) -> Path:
    """A session's traffic, exported to a file while the server still runs; the server is gone afterwards."""
    server, url = sdk_server("http")
    with server:
        await call("mcp.connect", {"id": "rec", "url": url, "transport": "streamable-http",
                                   "headers": {"Authorization": f"Bearer {TOKEN}"}})
        from pycore.methods._state import STATE

        session: ClientSession = STATE.connections["rec"].session
        assert (await session.call_tool("echo", {"message": f"my key is sk-ant-{'x' * 20}"})).text().startswith("Echo")
        await session.call_tool("chatty", {"secret": TOKEN})
        await session.call_tool("weather", {"city": "Kyoto"})
        record = await call("mcp.traffic", {"id": "rec"})
        await call("mcp.disconnect", {"id": "rec"})
    path = tmp_path / "traffic.json"
    path.write_text(json.dumps(record))
    return path


async def test_every_message_is_recorded_in_order_with_its_time_and_no_secret(tmp_path: Path) -> None:
    record = json.loads((await recorded_session(tmp_path)).read_text())
    assert record["format"] == FORMAT and record["server"]["name"] == "orizuru-test" and record["dropped"] == 0
    messages = record["messages"]
    probe, first = messages[0], messages[1]  # an older server: the probe got HTTP 400, no JSON-RPC answer
    assert probe["dir"] == "out" and probe["message"]["method"] == "server/discover"
    assert first["dir"] == "out" and first["message"]["method"] == "initialize"
    assert messages[2]["dir"] == "in" and messages[2]["message"]["id"] == first["message"]["id"]
    methods = [m["message"].get("method") for m in messages if m["dir"] == "out"]
    assert methods[:4] == ["server/discover", "initialize", "notifications/initialized", "tools/list"]
    assert methods.count("tools/call") == 3
    logs = [m for m in messages if m["dir"] == "in" and m["message"].get("method") == "notifications/message"]
    assert len(logs) == 4  # chatty's, between its call and its answer
    times = [m["t"] for m in messages]
    assert times == sorted(times) and times[-1] > 0
    text = json.dumps(record)
    assert TOKEN not in text and "sk-ant-xxxx" not in text and "[redacted]" in text


async def test_a_record_replays_against_the_client_with_the_server_gone(tmp_path: Path) -> None:
    path = await recorded_session(tmp_path)
    report: list[dict[str, Any]] = await replay(json.loads(path.read_text()))
    assert report[0] == {"method": "initialize", "result": {"server": "orizuru-test", "protocol": "2025-11-25"}}
    calls = [r for r in report if r["method"] == "tools/call"]
    assert [c["params"]["name"] for c in calls] == ["echo", "chatty", "weather"]
    assert calls[1]["result"]["content"] == [{"type": "text", "text": "logged"}]
    assert calls[2]["result"]["structured"] == {"city": "Kyoto", "celsius": 21.5}
    # The same from a terminal, as a bug report would be read.
    done = subprocess.run([sys.executable, "-m", "pycore", "mcp", "replay", str(path)], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [r["method"] for r in json.loads(done.stdout)] == [r["method"] for r in report]


def test_what_is_not_a_record_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "not.json"
    path.write_text('{"messages": []}')
    done = subprocess.run([sys.executable, "-m", "pycore", "mcp", "replay", str(path)], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and "not an MCP traffic record" in done.stderr


def test_the_export_keeps_the_last_messages_and_counts_the_rest() -> None:
    from pycore.mcp import traffic

    record = traffic.Traffic(secrets=["Bearer abcdefgh"])
    for i in range(traffic.KEEP + 5):
        record.record("out", {"jsonrpc": "2.0", "method": "ping", "id": i, "params": {"api_key": "k-123456",
                                                                                         "note": "abcdefgh"}})
    out = export("http://h/mcp?token=abcdefgh", record)
    assert len(out["messages"]) == traffic.KEEP and out["dropped"] == 5
    assert out["messages"][0]["message"]["id"] == 5
    assert out["messages"][0]["message"]["params"] == {"api_key": "[redacted]", "note": "[redacted]"}
    assert out["url"] == "http://h/mcp?token=[redacted]"


@pytest.fixture(autouse=True)
def _no_leftover_connections():
    yield
    from pycore.methods._state import STATE

    assert "rec" not in STATE.connections
