"""Stream-parsing benchmark: pycore in Pyodide (in a worker) vs plain JS, in headless Chromium.

    python3 build.py build && .venv/bin/python bench/stream/run.py [--sizes 2000,20000,100000] [--runs 5]

For each vendor a long stream is grown from a real recording (streams.py) at each size and fed in
1 KiB chunks, in the same worker, to pycore's stream parser (one JS->Python call per chunk, the
completion built at the end) and to the JS baseline; the two alternate run by run, so a busy
machine slows both alike. A few warm-up runs of each come first and are not counted: V8 compiles
Pyodide's WebAssembly in tiers, and until the hot code is optimized the first runs measure the
compiler. Reports events/s (median of the runs), the ratio to JS, and the cost per event at each
size: it should stay flat as the stream grows. The ratio is the median of each round's own ratio
(pycore and JS run back to back), which cancels most of a shared machine's drift; the ratio of the
medians is printed beside it. ORIZURU_DIST picks the built site.

The target is absolute (issue 18): at least 100,000 events/s for every vendor, about 30 times what the
fastest vendors send; the last line says whether every median met it. The JS ratio is context only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT / "tests" / "e2e")]
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from streams import SOURCES, events_of, grow  # noqa: E402

TARGET = 100_000  # events/s, every vendor

PAGE_JS = """
const boot = JSON.parse(document.getElementById("boot").textContent);
const worker = new Worker(new URL("bench-worker.js", document.baseURI), { type: "module" });
const replies = [];
let wake = null;
worker.onmessage = ({ data }) => { replies.push(data); wake?.(); };
window.next = () => new Promise((resolve) => {
  const take = () => (replies.length ? resolve(replies.shift()) : (wake = take));
  take();
});
window.job = (msg) => { worker.postMessage(msg); return window.next(); };
worker.postMessage({ type: "boot", base: document.baseURI, boot });
"""


def make_site(dist: Path, out: Path, sizes: list[int]) -> dict[tuple[Any, ...], int]:
    shutil.copytree(dist, out, dirs_exist_ok=True)
    subprocess.run([ROOT / "node_modules/.bin/esbuild", HERE / "worker.js", "--bundle", "--format=esm",
                    f"--outfile={out / 'bench-worker.js'}", "--log-level=warning"], check=True, cwd=ROOT)
    boot = re.search(r'<script type="application/json" id="boot">.*?</script>', (dist / "index.html").read_text(),
                     re.S).group(0)
    (out / "bench.js").write_text(PAGE_JS)
    (out / "bench.html").write_text(f'<!doctype html><meta charset="utf-8">{boot}<script src="bench.js"></script>')
    counts = {}
    for vendor in SOURCES:
        for size in sizes:
            body = grow(vendor, size)
            (out / f"{vendor}-{size}.stream").write_bytes(body)
            counts[(vendor, size)] = len(events_of(body, vendor == "ollama"))
            counts[(vendor, size, "bytes")] = len(body)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,20000,100000", help="stream lengths in events, comma-separated")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2, help="uncounted runs of each first")
    parser.add_argument("--chunk-size", type=int, default=1024)
    parser.add_argument("--vendors", default=",".join(SOURCES))
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]
    vendors = args.vendors.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        counts = make_site(Path(os.environ.get("ORIZURU_DIST") or ROOT / "dist"), Path(tmp), sizes)
        proc = subprocess.Popen([sys.executable, "-m", "server", "--dist", tmp, "--port", "0"], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True)
        base = re.search(r"(http://\S+?/)#", proc.stdout.readline()).group(1)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page()
                page.goto(base + "bench.html")
                page.evaluate("window.next()")  # booted
                for vendor in vendors:
                    for size in sizes:
                        row = {"vendor": vendor, "events": counts[(vendor, size)]}
                        ms: dict[str, list[float]] = {"pycore": [], "js": []}
                        for run in range(args.warmup + args.runs):  # interleaved: pycore, js, pycore, js...
                            for impl in ms:
                                job = {"impl": impl, "vendor": vendor, "url": f"{vendor}-{size}.stream",
                                       "chunkSize": args.chunk_size}
                                reply = page.evaluate("(m) => window.job(m)", job)
                                if run >= args.warmup:
                                    ms[impl].append(reply["ms"])
                                row[f"{impl}_unified"] = reply["unified"]
                        for impl, times in ms.items():
                            row[impl] = round(row["events"] / (statistics.median(times) / 1000))
                            row[f"{impl}_best"] = round(row["events"] / (min(times) / 1000))
                        paired = [j / p for p, j in zip(ms["pycore"], ms["js"], strict=True)]
                        row["ratio"] = round(statistics.median(paired), 3)
                        row["pycore_us_per_event"] = round(statistics.median(ms["pycore"]) * 1000 / row["events"], 2)
                        row["bytes_per_event"] = round(counts[(vendor, size, "bytes")] / row["events"])
                        rows.append(row)
                        print(json.dumps(row), file=sys.stderr)
                browser.close()
        finally:
            proc.terminate()
            proc.wait()
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    (results / "latest.json").write_text(json.dumps(rows, indent=1))
    print(f"chunks of {args.chunk_size} bytes; median of {args.runs} interleaved runs after {args.warmup} warm-up "
          "runs (best run in brackets:")
    print("on a busy machine interference only adds time, so the best run is nearer the quiet figure)")
    print("| vendor | events | bytes/event | pycore events/s | JS events/s | pycore ÷ JS, paired (of medians) "
          "| pycore µs/event |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['vendor']} | {r['events']:,} | {r['bytes_per_event']} | {r['pycore']:,} ({r['pycore_best']:,}) "
              f"| {r['js']:,} ({r['js_best']:,}) | **{r['ratio']:.2f}** ({r['pycore'] / r['js']:.2f}) "
              f"| {r['pycore_us_per_event']} |")
    low = min(rows, key=lambda r: r["pycore"])
    print(f"target >= {TARGET:,} events/s for every vendor: {'met' if low['pycore'] >= TARGET else 'NOT met'} "
          f"(lowest median: {low['vendor']}, {low['events']:,} events, {low['pycore']:,} events/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
