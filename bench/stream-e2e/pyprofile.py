"""Where the core's Python time goes while it streams: chat.run under CPython's cProfile.

    .venv/bin/python bench/stream-e2e/pyprofile.py [--tokens 6000] [--read-bytes 2300] [--top 25]

run.py's profiled run sees the worker's Python only as anonymous WebAssembly functions (Pyodide's
wasm has no names). This runs the same request the page sends, through pycore.wire (as the worker
calls it: every event to JSON, redacted, handed to `emit`, which parses it back as the worker's
JSON.parse does), against the same stream as run.py, fed by pycore's ReplayTransport in pieces of
--read-bytes (set it to A's bytes per read in run.py's output: body bytes ÷ reads). CPython is not
Pyodide (no JS<->Python crossing, another event loop, a faster interpreter), so read the shares, not
the times. Prints the time per token and the self time by module and by function.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE)]
from run import build_stream  # noqa: E402

from pycore import wire  # noqa: E402
from pycore.http.replay import Recording, ReplayTransport  # noqa: E402
from pycore.methods import _provider  # noqa: E402

PARAMS = {"provider": {"vendor": "openai", "api_key": "sk-bench", "base_url": "http://127.0.0.1:9/v1"},
          "model": "gpt-4o-mini",
          "messages": [{"role": "user", "parts": [{"type": "text", "text": "Write the reply."}]}],
          "tools": {"page": [], "mcp": []}}


def module_of(filename: str) -> str:
    if filename.startswith("~") or filename.startswith("<"):
        return "builtins (C: json, re, str, pydantic-core...)"
    path = Path(filename)
    if "pycore" in path.parts:
        return "pycore/" + "/".join(path.parts[path.parts.index("pycore") + 1:])
    for name in ("asyncio", "json", "re", "pydantic", "typing", "enum", "dataclasses"):
        if name in path.parts or path.stem == name:
            return name
    return path.name


async def one_run(body: bytes, read_bytes: int) -> int:
    events = 0

    def emit(text: str) -> None:
        nonlocal events
        json.loads(text)
        events += 1

    _provider.use_transport(lambda: ReplayTransport([Recording(body, content_type="text/event-stream",
                                                               chunk_size=read_bytes)]))
    try:
        result = json.loads(await wire.call("chat.run", json.dumps(PARAMS), emit))
    finally:
        _provider.use_transport(None)
    if "error" in result:
        raise RuntimeError(result["error"])
    return events


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=6000)
    parser.add_argument("--read-bytes", type=int, default=2300)
    parser.add_argument("--text", choices=("markdown", "recorded"), default="markdown")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    body = build_stream(args.tokens, args.text)["body"]
    asyncio.run(one_run(body, args.read_bytes))  # warm: imports, first-use caches
    start = time.perf_counter()
    events = asyncio.run(one_run(body, args.read_bytes))
    plain = time.perf_counter() - start
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(one_run(body, args.read_bytes))
    profiler.disable()
    reads = -(-len(body) // args.read_bytes)
    print(f"{args.tokens} tokens, {len(body):,} bytes in {reads} reads of {args.read_bytes} bytes, {events} events "
          f"emitted: {plain * 1000:.1f} ms unprofiled = {plain * 1e6 / args.tokens:.1f} µs/token, "
          f"{plain * 1e6 / reads:.0f} µs/read")
    stats = pstats.Stats(profiler)
    total = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
    by_module: dict[str, float] = defaultdict(float)
    rows = []
    for (filename, line, function), (_, calls, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        by_module[module_of(filename)] += tottime
        rows.append((tottime, calls, f"{module_of(filename)}:{line} {function}"))
    print(f"\nself time by module (profiled total {total * 1000:.0f} ms):")
    for module, seconds in sorted(by_module.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  {seconds / total:6.1%}  {module}")
    print(f"\nself time by function (top {args.top}):")
    for tottime, calls, name in sorted(rows, reverse=True)[: args.top]:
        print(f"  {tottime / total:6.1%}  {calls:7}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
