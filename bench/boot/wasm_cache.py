"""Does a service worker strategy keep Chromium's compiled-wasm cache? (run by hand)

    .venv/bin/python bench/boot/wasm_cache.py [--dist DIR] [--visits 3] [--rounds 3] [--sw NAME=FILE ...]

For each strategy — no service worker, dist's own sw.js, and every ``--sw NAME=FILE`` (FILE as the
service worker's code) — a fresh profile boots the app once (which installs the service worker),
waits until the worker is active, then opens a probe page ``--visits`` times that times
``WebAssembly.compileStreaming(fetch(pyodide.asm.wasm))``. A hit in the compiled-code cache is
tens of milliseconds; a miss compiles 10 MB of wasm. This isolates the one effect that made a
cache-first service worker slow on warm boots, and unlike whole boots it stays readable on a busy
machine (both cases slow down, the gap stays). Strategies are interleaved per round.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import CHROMIUM, CHROMIUM_ARGS, ROOT, make_variant, serve  # noqa: E402

SETTLE_SW = "async () => { if (await navigator.serviceWorker?.getRegistration()) await navigator.serviceWorker.ready; }"


def probe_site(site: Path) -> None:
    """The probe page beside the app, with the app's boot manifest (it names the wasm's folder)."""
    boot = re.search(r'<script type="application/json" id="boot">.*?</script>', (site / "index.html").read_text(), re.S)
    (site / "wasm-probe.html").write_text(f'<!doctype html><html><head><meta charset="utf-8">{boot.group(0)}'
                                          '<script type="module" src="wasm_probe.js"></script></head><body>probe</body></html>')
    (site / "wasm_probe.js").write_text((HERE / "wasm_probe.js").read_text())


def one(pw, base: str, block_sw: bool, visits: int, settle: float) -> list[dict]:
    with tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                                        service_workers="block" if block_sw else "allow")
        page = context.pages[0]
        page.goto(base)
        page.wait_for_selector("html[data-core=ready]", state="attached", timeout=180_000)
        page.evaluate(SETTLE_SW)
        time.sleep(settle)
        results = []
        for _ in range(visits):
            page.goto("about:blank")
            page.goto(base + "wasm-probe.html")
            page.wait_for_selector("html[data-probe]", state="attached", timeout=180_000)
            results.append(json.loads(page.get_attribute("html", "data-probe")))
            time.sleep(settle)
        context.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--sw", action="append", default=[], metavar="NAME=FILE")
    parser.add_argument("--visits", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=float, default=2.0)
    args = parser.parse_args()
    procs = []
    runs: dict[str, list[list[dict]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            shutil.copytree(args.dist, Path(tmp) / "site")
            probe_site(Path(tmp) / "site")
            proc, base = serve(Path(tmp) / "site")
            procs.append(proc)
            strategies = {"no-sw": (base, True), "dist-sw": (base, False)}
            for spec in args.sw:
                name, _, file = spec.partition("=")
                make_variant(args.dist, Path(tmp) / name, Path(file))
                probe_site(Path(tmp) / name)
                proc, variant_base = serve(Path(tmp) / name)
                procs.append(proc)
                strategies[name] = (variant_base, False)
            with sync_playwright() as pw:
                for i in range(args.rounds):
                    for name, (url, block) in strategies.items():
                        runs.setdefault(name, []).append(one(pw, url, block, args.visits, args.settle))
                    print(f"round {i + 1}/{args.rounds}: " + "; ".join(
                        f"{n} {[round(v['compile']) for v in r[-1]]}" for n, r in runs.items()), file=sys.stderr)
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait()
    load = Path("/proc/loadavg").read_text().split()[:3]
    print("| strategy | " + " | ".join(f"visit {v + 1} compile (ms)" for v in range(args.visits)) + " | controlled |")
    print("|---|" + "---|" * (args.visits + 1))
    for name, rounds in runs.items():
        medians = [round(statistics.median(r[v]["compile"] for r in rounds)) for v in range(args.visits)]
        controlled = "yes" if all(v["controlled"] for r in rounds for v in r) else "no"
        print(f"| {name} | " + " | ".join(map(str, medians)) + f" | {controlled} |")
    print(f"\nmedians of {args.rounds} interleaved rounds; load average at the end: {' '.join(load)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
