"""The code interpreter: its sandbox's cold start (the first `python` call of a page) and a warm call's
overhead (`1+1`), against a bare Pyodide worker's start, in headless Chromium.

    .venv/bin/python bench/interpreter/run.py [--runs 5] [--dist DIR]
    (after `python3 build.py build`)

Each run takes a fresh browser profile, opens the app, sets up a profile on a loopback vendor that replays
a recorded OpenAI stream with the model calling `python` twice (`1+1`, then `1+1` again), and reads how long
each call took as the page measured it (from the call handed to the sandbox to its result back: the
first includes starting the sandbox, the frame, the worker and Pyodide from the site's files). In the same
profile (so with the same warm HTTP cache the sandbox had) it then opens bench/boot's bare page that only
runs loadPyodide in a worker, and reads its time to ready.

Then (issue 32: each conversation has a sandbox of its own) a second conversation's first call (`1+1`), so a
second sandbox's start in a page whose first is up, and what that sandbox costs in memory: the proportional set
size (PSS, /proc/PID/smaps_rollup) of every process of the browser, summed, before and after it. The page's
performance.memory would not see it (a worker's heap is not the page's), and measureUserAgentSpecificMemory needs
cross-origin isolation, which the app does not have.

Targets (issue 21): cold ≤ 1.5 × the bare Pyodide worker, warm ≤ 20 ms.
"""

from __future__ import annotations

import importlib.util
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "bench"))
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from journeys import NO_AUTO_TITLE, configure, send, wait_idle  # noqa: E402
from served import arguments, serve  # noqa: E402
from vendor_replay import VendorReplay, with_text, with_tool_call  # noqa: E402

TOOL_TURN, TEXT_TURN = "openai/chat-stream-tool-call", "openai/chat-stream-text-usage"
SSE = "text/event-stream; charset=utf-8"
RAN = re.compile(r"\(ran in (\d+) ms\)")


def boot_bench():
    """bench/boot/run.py as a module, for its bare pages (make_site)."""
    spec = importlib.util.spec_from_file_location("boot_bench", ROOT / "bench" / "boot" / "run.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def one_run(pw, url: str, vendor: VendorReplay) -> dict[str, float]:
    for i in range(2):
        vendor.script_body(f"python {i}", with_tool_call(TOOL_TURN, "python", {"code": "1+1"}, f"call_{i}"),
                           content_type=SSE)
    vendor.script_body("answer", with_text(TEXT_TURN, "2"), content_type=SSE)
    with tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context.add_init_script(NO_AUTO_TITLE)  # no title request after the reply: the last request is the run's
        page = context.pages[0]
        page.goto(url)
        page.wait_for_selector("html[data-core=ready]", state="attached", timeout=180_000)
        configure(page, vendor="openai", base=vendor.url, key="sk-bench", model="gpt-4o-mini")
        page.get_by_label("Assistant", exact=True).select_option(label="Data analyst")
        send(page, "What is 1+1?")
        wait_idle(page, timeout=180_000)
        told = [m["content"] for m in vendor.model_requests[-1].json["messages"] if m["role"] == "tool"]
        cold, warm = (float(RAN.search(t if isinstance(t, str) else str(t)).group(1)) for t in told)
        before = browser_pss()
        page.get_by_role("button", name="New chat").first.click()
        vendor.script_body("python 2", with_tool_call(TOOL_TURN, "python", {"code": "1+1"}, "call_2"),
                           content_type=SSE)
        vendor.script_body("answer 2", with_text(TEXT_TURN, "2"), content_type=SSE)
        send(page, "And in a second chat?")
        wait_idle(page, timeout=180_000)
        [second] = [m["content"] for m in vendor.model_requests[-1].json["messages"] if m["role"] == "tool"]
        extra = float(RAN.search(second if isinstance(second, str) else str(second)).group(1))
        extra_mb = (browser_pss() - before) / 1024
        page.goto(url.replace("index.html", "") + "bare-pyodide.html")
        page.wait_for_selector("html[data-core=ready]", state="attached", timeout=180_000)
        bare = page.evaluate("performance.getEntriesByName('core-ready')[0].startTime")
        context.close()
    return {"cold": cold, "warm": warm, "bare": bare, "extra": extra, "extra_mb": extra_mb}


def browser_pss() -> int:
    """KiB: the proportional set size of every process under this one (Playwright's driver and the browser)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    mine, grew = {os.getpid()}, True
    while grew:
        found = {pid for pid, parent in parents.items() if parent in mine} - mine
        mine |= found
        grew = bool(found)
    total = 0
    for pid in mine - {os.getpid()}:
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        total += sum(int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:"))
    return total


def main() -> None:
    parser = arguments(__doc__, runs=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        boot_bench().make_site(args.dist, site)
        proc, url = serve(site)
        vendor = VendorReplay()
        try:
            with sync_playwright() as pw:
                runs = []
                for i in range(args.runs):
                    runs.append(one_run(pw, url, vendor))
                    print(f"run {i + 1}/{args.runs}: " + ", ".join(
                        f"{k} {v:.0f} {'MB' if k.endswith('_mb') else 'ms'}" for k, v in runs[-1].items()),
                          file=sys.stderr)
        finally:
            vendor.close()
            proc.terminate()
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    ratio = statistics.median(r["cold"] / r["bare"] for r in runs)
    load = Path("/proc/loadavg").read_text().split()[:3]
    print("| measure | median [min–max] | target |\n|---|---|---|\n"
          f"| first call (sandbox cold start + `1+1`) | {med['cold']:.0f} ms "
          f"[{min(r['cold'] for r in runs):.0f}–{max(r['cold'] for r in runs):.0f}] | — |\n"
          f"| bare Pyodide worker, same cache | {med['bare']:.0f} ms | — |\n"
          f"| first call ÷ bare worker, paired | {ratio:.2f} | ≤ 1.5 |\n"
          f"| warm call (`1+1`) | {med['warm']:.0f} ms "
          f"[{min(r['warm'] for r in runs):.0f}–{max(r['warm'] for r in runs):.0f}] | ≤ 20 ms |\n"
          f"| a second conversation's first call (its own sandbox's start + `1+1`) | {med['extra']:.0f} ms "
          f"[{min(r['extra'] for r in runs):.0f}–{max(r['extra'] for r in runs):.0f}] | — |\n"
          f"| memory of that second sandbox (browser PSS, after − before) | {med['extra_mb']:.0f} MB "
          f"[{min(r['extra_mb'] for r in runs):.0f}–{max(r['extra_mb'] for r in runs):.0f}] | — |\n\n"
          f"medians of {args.runs} runs; load average: {' '.join(load)}")


if __name__ == "__main__":
    main()
