"""Render benchmark: a 30,000-token markdown reply streamed at full speed into the renderer.

    .venv/bin/python bench/render/run.py [--tokens 30000] [--runs 5] [--naive-cap-s 60] [--rate 0]

The reply (prose, lists, tables, code in several languages; reply.py) is cut into ~4-character
tokens and posted by a worker to the page one message per token as fast as it can, as the app's
worker posts text deltas (the target's definition). --rate N paces the stream at N tokens per
second instead, a model's realistic speed (use fewer --tokens: 30,000 at 100/s take 5 minutes).
The page (page.js, bundled and served by the real relay under the site's CSP, in headless
Chromium) runs, interleaved run by run so a busy machine slows all alike:
  none         only collects the tokens: the stream's own duration
  incremental  web/render StreamRenderer (finished blocks rendered once, the open block per frame)
  naive        marked.parse + DOMPurify.sanitize of the whole text and innerHTML on every token;
               it is stopped after --naive-cap-s and reports how many tokens it got through
Reported (medians): total time until the final DOM is laid out, its ratio to the stream's own
duration (target <= 1.2), the longest main-thread task seen by PerformanceObserver('longtask') and
the longest single update (target <= 50 ms), and the CPU time the page's renderer process used
during the run (CDP Performance.getMetrics ProcessTime: the main thread plus the stream worker),
which other load on the machine barely moves, unlike the wall times. Then the floor: the final text
rendered once (marked, DOMPurify, insert and layout), the least work any renderer built on the same
libraries does in total. Results are also written to bench/render/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT / "tests" / "e2e")]
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from harness import HarnessSite  # noqa: E402
from reply import make_reply, tokenize  # noqa: E402

MODES = ("none", "incremental", "naive")


def cpu_seconds(cdp) -> float:
    """CPU time the page's renderer process has used (its main thread and the stream worker): unlike
    wall time, barely moved by other processes competing for the cores."""
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return metrics["ProcessTime"]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=30_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--naive-cap-s", type=float, default=60.0)
    parser.add_argument("--naive-runs", type=int, default=1, help="the naive renderer is slow: run it fewer times")
    parser.add_argument("--rate", type=float, default=0, help="tokens per second; 0 (default): as fast as possible")
    args = parser.parse_args()

    tokens = tokenize(make_reply(args.tokens * 4), args.tokens)
    text = "".join(tokens)
    print(f"reply: {len(tokens)} tokens, {len(text)} characters, {text.count(chr(10))} lines, "
          f"{text.count('```') // 2} code blocks, {text.count('|---')} tables; load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")

    site = HarnessSite(Path(tempfile.mkdtemp(prefix="bench-render-")))
    site.add_page("bench", entry=HERE / "page.js", body='<div id="out"></div>', css=ROOT / "web/render/render.css")
    site.add_page("stream_worker", entry=HERE / "stream_worker.js")
    url = site.start()
    results: dict[str, list[dict]] = {mode: [] for mode in MODES}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1000, "height": 800})
            page.goto(url + "bench.html")
            page.wait_for_selector("html[data-bench=ready]", state="attached")
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            for run in range(args.runs):
                modes = ["none", "incremental"] if run % 2 else ["incremental", "none"]
                if run < args.naive_runs:
                    modes.append("naive")
                for mode in modes:
                    before = cpu_seconds(cdp)
                    result = page.evaluate("([m, t, cap, rate]) => window.bench.run(m, t, cap, rate)",
                                           [mode, tokens, args.naive_cap_s * 1000, args.rate])
                    result["cpuMs"] = (cpu_seconds(cdp) - before) * 1000
                    result.update(page.evaluate("() => window.bench.highlightDeferred()"))
                    results[mode].append(result)
                    print(f"  run {run + 1} {mode:11} total {result['totalMs']:8.1f} ms  delivered "
                          f"{result['deliveredMs']:8.1f} ms  longest task {result['longestTaskMs']:6.1f} ms  "
                          f"longest update {result['longestUpdateMs']:6.1f} ms  "
                          f"render work {result['renderWorkMs']:7.1f} ms  page CPU {result['cpuMs']:7.1f} ms  "
                          f"finish {result['finishMs']:5.1f} ms  lazily highlighted {result['deferredBlocks']}/"
                          f"{result['codeBlocks']} code blocks ({result['deferredHighlightMs']:.0f} ms for all)"
                          + (f"  (stopped after {result['capped']} tokens)" if result.get("capped") else ""),
                          flush=True)
            floor = [page.evaluate("(t) => window.bench.oneShot(t)", tokens) for _ in range(args.runs)]
            browser.close()
    finally:
        site.stop()
    report(results, len(tokens), args)
    print("one-shot render of the final text (the floor for any marked + DOMPurify renderer), median ms: "
          + ", ".join(f"{key[:-2]} {median([f[key] for f in floor]):.1f}"
                      for key in ("markedMs", "sanitizeMs", "insertMs", "totalMs"))
          + f" for {floor[0]['htmlChars']:,} characters of HTML")


def report(results: dict[str, list[dict]], n_tokens: int, args: argparse.Namespace) -> None:
    stream = median([r["totalMs"] for r in results["none"]])
    speed = f"{args.rate:g} tokens/s" if args.rate else "full speed"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nmedians of {args.runs} runs ({args.naive_runs} for naive), {speed}; load average now {load} "
          f"on {os.cpu_count()} cores (a shared machine)")
    print(f"{'renderer':12} {'total ms':>10} {'x stream':>9} {'longest task':>13} {'longest update':>15} "
          f"{'page CPU ms':>12}  tokens rendered")
    summary = {}
    for mode in MODES:
        rows = results[mode]
        if not rows:
            continue
        total = median([r["totalMs"] for r in rows])
        row = {
            "total_ms": round(total, 1),
            "ratio_to_stream": round(total / stream, 2),
            "longest_task_ms": round(median([r["longestTaskMs"] for r in rows]), 1),
            "longest_update_ms": round(median([r["longestUpdateMs"] for r in rows]), 1),
            "page_cpu_ms": round(median([r["cpuMs"] for r in rows]), 1),
            "tokens_rendered": int(median([r["capped"] or r["tokensRendered"] for r in rows])),
            "runs": rows,
        }
        summary[mode] = row
        print(f"{mode:12} {row['total_ms']:10.1f} {row['ratio_to_stream']:9.2f} {row['longest_task_ms']:13.1f} "
              f"{row['longest_update_ms']:15.1f} {row['page_cpu_ms']:12.1f}  {row['tokens_rendered']} of {n_tokens}")
    inc = summary["incremental"]
    print(f"\ntargets: longest task <= 50 ms -> {inc['longest_task_ms']} ms "
          f"({'met' if inc['longest_task_ms'] <= 50 else 'NOT met'}); total <= 1.2 x stream -> "
          f"{inc['ratio_to_stream']} ({'met' if inc['ratio_to_stream'] <= 1.2 else 'NOT met'})")
    out = HERE / "results" / f"{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"tokens": n_tokens, "args": vars(args), "load_average": os.getloadavg(),
                               "summary": summary}, indent=1))
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
