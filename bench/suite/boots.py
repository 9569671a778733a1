"""Where the browser tests' time goes: a pytest plugin, run by hand, that counts the app's Pyodide boots per test
(requests for pyodide.asm.wasm in any context the tests open) and samples, once a second, the CPU time and the
PSS of every process the run started (Chromium's included, whose renderers `time` does not see).

    PYTHONPATH=bench/suite ORIZURU_DIST=$PWD/dist .venv/bin/python -m pytest tests/e2e/test_journeys_chat.py \
        -p boots -q   # writes $TMPDIR/orizuru-boots.json (or $BOOTS_OUT)

CPU is a better measure than wall time on a shared machine: it moves far less with the load of other runs.
"""

from __future__ import annotations

import collections
import json
import os
import tempfile
import threading
import time
from pathlib import Path

from playwright.sync_api import Browser, BrowserType

BOOTS: collections.Counter[str] = collections.Counter()
CURRENT = ["?"]
PEAK_PSS_MB = [0.0]
CPU_S: dict[tuple[int, str], float] = {}  # (pid, start time) -> CPU seconds last seen


def _watch(context):
    context.on("request", lambda r: r.url.endswith("pyodide.asm.wasm") and BOOTS.update([CURRENT[0]]))
    return context


_new_context, _launch_persistent = Browser.new_context, BrowserType.launch_persistent_context
Browser.new_context = lambda self, *a, **k: _watch(_new_context(self, *a, **k))  # type: ignore[method-assign]
BrowserType.launch_persistent_context = (  # type: ignore[method-assign]
    lambda self, *a, **k: _watch(_launch_persistent(self, *a, **k)))


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _ours() -> set[int]:
    parent = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            parent[int(pid)] = int(_read(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    ours, grown = {os.getpid()}, True
    while grown:
        new = {pid for pid, up in parent.items() if up in ours} - ours
        ours |= new
        grown = bool(new)
    return ours


def _sample() -> None:
    tick = os.sysconf("SC_CLK_TCK")
    while True:
        pss_kb = 0
        for pid in _ours():
            try:
                stat = _read(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()
                CPU_S[(pid, stat[19])] = (int(stat[11]) + int(stat[12])) / tick
                pss_kb += sum(int(line.split()[1]) for line in _read(f"/proc/{pid}/smaps_rollup").splitlines()
                              if line.startswith("Pss:"))
            except (OSError, IndexError, ValueError):
                continue
        PEAK_PSS_MB[0] = max(PEAK_PSS_MB[0], pss_kb / 1024)
        time.sleep(1)


threading.Thread(target=_sample, daemon=True).start()


def pytest_runtest_setup(item) -> None:
    CURRENT[0] = item.nodeid


def pytest_sessionfinish(session) -> None:
    out = Path(os.environ.get("BOOTS_OUT", Path(tempfile.gettempdir()) / "orizuru-boots.json"))
    out.write_text(json.dumps({"boots": sum(BOOTS.values()), "peak_pss_mb": round(PEAK_PSS_MB[0]),
                               "cpu_s": round(sum(CPU_S.values()), 1), "boots_per_test": BOOTS}, indent=1))
