"""Boot benchmark: the app's page against bare Pyodide pages, cold and warm, in headless Chromium.

    .venv/bin/python bench/boot/run.py [--runs 5]      (after `python3 build.py build`)

Pages, interleaved in every round so that they see the same machine:
- ``app``: dist/index.html (Pyodide in a worker, our wheels, ``import pycore.wire``);
- ``bare-worker``: Pyodide in a worker, the same wheels minus pycore, ``import pydantic, jinja2``;
- ``bare-main``: the same on the main thread.
Cold = a fresh browser profile; warm = a second visit with the same profile. Times are from
navigation start: ``ui`` until the page's handlers are attached, ``ready`` until ``data-core=ready``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

PAGES = ["app", "bare-worker", "bare-main"]


def make_site(dist: Path, out: Path) -> None:
    """dist/ plus the two bare pages, which reuse dist/'s boot manifest."""
    shutil.copytree(dist, out, dirs_exist_ok=True)
    html = (dist / "index.html").read_text()
    boot = re.search(r'<script type="application/json" id="boot">.*?</script>', html, re.S).group(0)
    shutil.copy2(HERE / "bare.js", out / "bare.js")
    for mode in ("worker", "main"):
        (out / f"bare-{mode}.html").write_text(
            f'<!doctype html><html data-mode="{mode}"><head><meta charset="utf-8">{boot}'
            '<script type="module" src="bare.js"></script></head><body>bare</body></html>'
        )


def serve(site: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "server", "--dist", str(site), "--port", "0"],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True)
    url = re.search(r"(http://\S+?/)#", proc.stdout.readline()).group(1)
    return proc, url


def measure(page, url: str) -> dict[str, float]:
    page.goto(url)
    page.wait_for_selector("html[data-core=ready]", state="attached", timeout=180_000)
    marks = page.evaluate("Object.fromEntries(performance.getEntriesByType('mark').map(m => [m.name, m.startTime]))")
    result = {"ui": marks["ui-usable"], "ready": marks["core-ready"]}
    if page.workers and "bare-main" not in url:
        # Worker marks are relative to the worker's own time origin.
        offset = page.workers[-1].evaluate("performance.timeOrigin") - page.evaluate("performance.timeOrigin")
        stages = page.workers[-1].evaluate(
            "Object.fromEntries(performance.getEntriesByType('mark').map(m => [m.name, m.startTime]))")
        result.update({k.removeprefix("stage:"): v + offset for k, v in stages.items()})
    return result


def one_round(pw, base: str) -> dict[str, dict[str, dict[str, float]]]:
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name in PAGES:
        url = base + ("" if name == "app" else f"{name}.html")
        with tempfile.TemporaryDirectory() as profile:
            context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = context.pages[0]
            cold = measure(page, url)
            page.goto("about:blank")
            warm = measure(page, url)
            context.close()
        out[name] = {"cold": cold, "warm": warm}
    return out


def summarize(rounds: list[dict]) -> dict:
    summary: dict = {}
    for name in PAGES:
        for visit in ("cold", "warm"):
            keys = rounds[0][name][visit].keys()
            summary.setdefault(name, {})[visit] = {
                k: round(statistics.median(r[name][visit][k] for r in rounds)) for k in keys
            }
    return summary


def table(summary: dict) -> str:
    lines = ["| page | visit | UI usable (ms) | core ready (ms) | ready ÷ best bare |", "|---|---|---|---|---|"]
    for visit in ("cold", "warm"):
        best = min(summary[p][visit]["ready"] for p in PAGES if p != "app")
        for name in PAGES:
            s = summary[name][visit]
            lines.append(f"| {name} | {visit} | {s['ui']} | {s['ready']} | {s['ready'] / best:.2f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        make_site(args.dist, Path(tmp))
        proc, base = serve(Path(tmp))
        try:
            with sync_playwright() as pw:
                rounds = []
                for i in range(args.runs):
                    started = time.monotonic()
                    rounds.append(one_round(pw, base))
                    print(f"round {i + 1}/{args.runs} in {time.monotonic() - started:.1f} s", file=sys.stderr)
        finally:
            proc.terminate()
            proc.wait()
    summary = summarize(rounds)
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    (results / "latest.json").write_text(json.dumps({"summary": summary, "rounds": rounds}, indent=1))
    print(table(summary))
    print("\napp stage marks (median ms from navigation):", json.dumps(
        {v: {k: summary["app"][v][k] for k in ("runtime", "packages", "core", "ready")} for v in ("cold", "warm")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
