"""Streaming end to end (issue 22 item 4): the app's pipeline against a JS-only one, same page, same bytes.

    python3 build.py build && .venv/bin/python bench/stream-e2e/run.py [--dist DIST] [--tokens 6000]
        [--rates 3000,0] [--runs 5] [--warmup 2] [--text markdown|recorded] [--every-frame-runs 2]
        [--no-trace] [--no-jspi]

The stream: OpenAI's recorded Chat Completions stream (tests/fixtures/vendors/openai/
chat-stream-text-usage.sse) stretched to --tokens delta events: its first event (the role), then one
event per token built from its first content delta (the vendor's own JSON, id, fields and framing, only
`delta.content` changed), then its last three (finish_reason, usage, [DONE]). The tokens are a markdown
reply cut into model-sized pieces (bench/render/reply.py: prose, lists, tables, code); --text recorded
repeats the recording's own deltas instead ("The capital of the UK is London." over and over: one
endless paragraph). A loopback server in this process sends it at --rates tokens per second, each
event as soon as it is due (one socket write per event at 3,000/s unless the writer fell behind), or
all at once (rate 0, "full speed").

The page (page.js, bundled by the project's esbuild, served with the built site by the real relay
under the site's CSP, headless Chromium with the tests' flags) runs, alternating run by run in a
rotating order, after uncounted warm-up runs of each:
  app  the real pipeline: the built site's worker (unchanged; tap.js, imported first, only notes read
       times) runs chat.run, pycore fetches and parses with its OpenAI adapter and posts text_delta
       events; the page appends each to web/render's StreamRenderer, as web/app/message_view.js does
  js   on the page: fetch, eventsource-parser (pinned in package.json) + JSON.parse, the same renderer
(The app's chat.js also queues a store write per event; that is storage, not streaming, and is left out
of both.)

CPU, the headline: the main thread's and the core worker's own CPU time ("worker + page"), from a
light Chrome trace around every run (CDP tracing, category `toplevel`: each task's slice carries its
thread time, `tdur`, summed per thread between the page's bench-start / bench-end marks). Thread time
is what the thread itself ran, so other processes on the shared machine barely move it, and it names the
thread, which the alternative does not: CDP Performance.getMetrics `ProcessTime` (read before and after
each run, printed beside it as context) is the whole renderer process: also the compositor, the raster
and IO threads and V8's helper threads, which both paths share and which dilute any ratio. Neither counts
the network process, the relay or the loopback vendor (the same bytes for both paths). Reported per
1,000 tokens; A ÷ B is the median of each round's own ratio (A and B back to back), the ratio of the
medians in brackets. Target <= 1.5. Where the time goes: one more run of each path under V8's sampling
profiler (trace category `disabled-by-default-v8.cpu_profiler`; slower, so not among the counted runs)
gives self time by script and function per thread; Pyodide's WebAssembly has no function names, so
pyprofile.py profiles the same chat.run under CPython for the Python side.

Latency: for every read of the body that completes at least one new token (its time taken by whoever
reads the body: the worker for A, the page for B), the time until the end of the first frame that
painted text up to that token: StreamRenderer updates the DOM in animation-frame callbacks; a message
posted from such a callback is handled right after that frame's paint (page.js). Each run's p50 / p95
over its reads; the table gives their medians over the runs [min–max]; target p95 <= 16 ms. It is
split into arrival -> append (the pipeline: for A the parse, the worker's postMessage and the page's
handler) and append -> paint (the renderer: it updates at most every 30 ms, web/render/markdown.js
FRAME_UPDATE_INTERVAL_MS, the same for both paths). Not computed at full speed, where the renderer
deliberately falls behind the text.
Long tasks: PerformanceObserver('longtask') on the page (tasks over 50 ms); target none. Every run's
trace also gives the longest main-thread task of any length (wall time: a busy machine stretches it).

Diagnostics: --every-frame-runs (default 2) more runs of each path with the renderer flushed at every
frame instead of its own pace; --write-every-ms N makes the vendor write what is due only every N ms,
so reads come in fewer, bigger chunks (what coalescing reads would save); --no-jspi hides
WebAssembly.Suspending from the core's worker, so Pyodide runs without JavaScript Promise Integration
(the shipped app uses it where the browser has it).

Results are printed and written to bench/stream-e2e/results/.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "bench" / "render"), str(ROOT / "tests" / "e2e")]
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from harness import SITE_CSP  # noqa: E402
from reply import make_reply, tokenize  # noqa: E402
from served import serve  # noqa: E402

RECORDING = ROOT / "tests" / "fixtures" / "vendors" / "openai" / "chat-stream-text-usage.sse"
PATHS = ("app", "js")
TARGET_RATIO = 1.5
TARGET_P95_MS = 16.0
TARGET_TASK_MS = 50.0
THREAD_CATEGORIES = ["toplevel", "blink.user_timing"]
PROFILE_CATEGORIES = [*THREAD_CATEGORIES, "disabled-by-default-v8.cpu_profiler"]


# ------------------------------------------------------------------ the stream


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def build_stream(n_tokens: int, text: str) -> dict[str, Any]:
    """The recording stretched to ``n_tokens`` delta events; each event's end offset and the text (in the
    page's UTF-16 characters) complete once the body up to that offset has arrived."""
    events = [e + b"\n\n" for e in RECORDING.read_bytes().split(b"\n\n") if e.strip()]
    head, deltas, tail = events[:1], events[1:-3], events[-3:]
    if text == "recorded":
        body_events = [deltas[i % len(deltas)] for i in range(n_tokens)]
    else:
        template = json.loads(deltas[0][len(b"data: "):])
        body_events = []
        for token in tokenize(make_reply(n_tokens * 4), n_tokens):
            template["choices"][0]["delta"]["content"] = token
            body_events.append(b"data: " + json.dumps(template, separators=(",", ":"), ensure_ascii=False).encode()
                               + b"\n\n")
    all_events = head + body_events + tail
    ends, chars, offset, shown = [], [0], 0, 0
    for event in all_events:
        offset += len(event)
        payload = event[len(b"data: "):].strip()
        if payload.startswith(b"{"):
            for choice in json.loads(payload).get("choices") or []:
                shown += utf16_len((choice.get("delta") or {}).get("content") or "")
        ends.append(offset)
        chars.append(shown)
    return {"events": all_events, "body": b"".join(all_events), "ends": ends, "chars": chars, "tokens": n_tokens}


class _Vendor(BaseHTTPRequestHandler):
    server: _VendorServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _cors(self) -> None:
        self.send_header("Access-Control-Allow-Origin", self.headers.get("Origin") or "*")

    def do_OPTIONS(self) -> None:
        self.send_response(204)
        self._cors()
        self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", self.headers.get("Access-Control-Request-Headers", "*"))
        self.send_header("Access-Control-Max-Age", "600")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        events, rate, every = self.server.events, self.server.rate, self.server.write_every_s
        self.send_response(200)
        self._cors()
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        if not rate:
            self.wfile.write(b"".join(events))
            self.wfile.flush()
            return
        # Event i is due i / rate seconds after the first; each goes out as soon as it is due, with any
        # others already due (when this thread woke late) in the same write.
        start, sent = time.perf_counter(), 0
        while sent < len(events):
            due = min(len(events), int((time.perf_counter() - start) * rate) + 1)
            self.wfile.write(b"".join(events[sent:due]))
            self.wfile.flush()
            sent = due
            wait = sent / rate - (time.perf_counter() - start)
            if every:  # --write-every-ms: only at the next tick, all that is due by then in one write
                wait = every - (time.perf_counter() - start) % every
            if wait > 0:
                time.sleep(wait)


class _VendorServer(ThreadingHTTPServer):
    daemon_threads = True
    events: list[bytes]
    rate: float
    write_every_s: float = 0.0


def start_vendor() -> tuple[_VendorServer, str]:
    server = _VendorServer(("127.0.0.1", 0), _Vendor)
    server.events, server.rate = [], 0.0
    threading.Thread(target=server.serve_forever, name="vendor", daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


# ------------------------------------------------------------------ the site


def make_site(dist: Path, out: Path, no_jspi: bool = False) -> None:
    """The built site, plus the bench page and a worker that is the site's own worker with tap.js first
    (and, for --no-jspi, WebAssembly.Suspending removed before the worker loads Pyodide)."""
    shutil.copytree(dist, out, dirs_exist_ok=True)
    boot = json.loads((dist / "boot.json").read_text())
    assets = out / "assets"
    subprocess.run([ROOT / "node_modules/.bin/esbuild", HERE / "page.js", "--bundle", "--format=esm",
                    "--target=es2022", f"--outfile={assets / 'bench-page.js'}", "--log-level=warning"],
                   check=True, cwd=ROOT)
    shutil.copy(HERE / "tap.js", assets / "bench-tap.js")
    worker = Path(boot["worker"]).name
    no_jspi_line = "delete WebAssembly.Suspending; // --no-jspi: Pyodide then runs without JSPI\n" if no_jspi else ""
    (assets / "bench-worker.js").write_text(f'import "./bench-tap.js";\nimport "./{worker}";\n{no_jspi_line}')
    shutil.copy(ROOT / "web" / "render" / "render.css", assets / "bench.css")
    boot["worker"] = "assets/bench-worker.js"
    (out / "bench.html").write_text(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">{SITE_CSP}<title>stream-e2e</title>'
        '<link rel="stylesheet" href="assets/bench.css"></head><body><div id="out"></div>'
        f'<script type="application/json" id="boot">{json.dumps(boot)}</script>'
        '<script type="module" src="assets/bench-page.js"></script></body></html>')


# ------------------------------------------------------------------ figures


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def first_at_least(pairs: list[float], chars: int) -> float | None:
    """pairs = [t, chars, t, chars, ...] with chars rising: the first t whose chars >= ``chars``."""
    counts = pairs[1::2]
    i = bisect.bisect_left(counts, chars)
    return pairs[2 * i] if i < len(counts) else None


def figures(raw: dict[str, Any], stream: dict[str, Any], cpu_ms: float, paced: bool) -> dict[str, Any]:
    taps, ends, chars = raw["taps"], stream["ends"], stream["chars"]
    latency, delivery, render = [], [], []
    shown = 0
    for t, got in zip(taps[0::2], taps[1::2], strict=True):
        need = chars[bisect.bisect_right(ends, got)]
        if need <= shown:
            continue  # no new token completed by this read
        shown = need
        appended, painted = first_at_least(raw["appends"], need), first_at_least(raw["paints"], need)
        if appended is None or painted is None:
            raise RuntimeError(f"text up to {need} characters was never appended/painted")
        latency.append(painted - t)
        delivery.append(appended - t)
        render.append(painted - appended)
    if raw["chars"] != chars[-1]:
        raise RuntimeError(f"the renderer got {raw['chars']} characters, the stream has {chars[-1]}")
    out = {
        "cpu_ms": cpu_ms,
        "cpu_per_1k": cpu_ms * 1000 / stream["tokens"],
        "reads": len(taps) // 2,
        "wall_ms": raw["finalPaint"] - raw["start"],
        "body_ms": taps[-2] - taps[0],
        "last_byte_to_final_paint_ms": raw["finalPaint"] - taps[-2],
        "long_tasks": len(raw["longTasks"]),
        "longest_task_ms": max(raw["longTasks"], default=0.0),
        "paints": len(raw["paints"]) // 2,
        "jspi": raw.get("jspi"),
    }
    if paced:
        for name, values in (("latency", latency), ("delivery", delivery), ("render", render)):
            out[f"{name}_p50"] = percentile(values, 0.5)
            out[f"{name}_p95"] = percentile(values, 0.95)
        out["latency_max"] = max(latency)
        out["latency_reads"] = len(latency)
    return out


def cpu_seconds(cdp: Any) -> float:
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return float(metrics["ProcessTime"])


# ------------------------------------------------------------------ the traced run


def _window(events: list[dict[str, Any]]) -> tuple[float, float]:
    """The run's span in trace time (µs): page.js marks its start and its final paint."""
    marks = {e["name"]: e["ts"] for e in events if e.get("name") in ("bench-start", "bench-end") and "ts" in e}
    return marks.get("bench-start", 0.0), marks.get("bench-end", float("inf"))


def _page_process(events: list[dict[str, Any]]) -> tuple[int | None, dict[tuple[int, int], str]]:
    names = {(e["pid"], e["tid"]): e["args"]["name"]
             for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    pid = next((pid for (pid, _), name in names.items() if name == "DedicatedWorker thread"), None)
    return pid, names


def thread_cpu(trace: bytes) -> dict[str, Any]:
    """Per thread of the page's process, the thread (CPU) time of its top-level tasks within the run, and
    the longest main-thread task."""
    events = json.loads(trace)["traceEvents"]
    pid, names = _page_process(events)
    start, end = _window(events)
    threads: dict[str, float] = defaultdict(float)
    longest_main = 0.0
    for e in events:
        if (e.get("ph") != "X" or e.get("pid") != pid or e["name"] != "ThreadControllerImpl::RunTask"
                or not start <= e["ts"] <= end):
            continue
        name = names.get((e["pid"], e["tid"]), str(e["tid"]))
        threads[name] += e.get("tdur", 0) / 1000
        if name == "CrRendererMain":
            longest_main = max(longest_main, e.get("dur", 0) / 1000)
    return {"thread_cpu_ms": dict(sorted(threads.items(), key=lambda kv: -kv[1])), "longest_main_task_ms": longest_main}


def profile(trace: bytes) -> dict[str, dict[str, dict[str, float]]]:
    """Per thread of the page's process, the self time of V8's profiler samples within the run, by script
    and by function (the top 15 of each). A sample's time is the gap to the next sample."""
    events = json.loads(trace)["traceEvents"]
    pid, names = _page_process(events)
    start, end = _window(events)
    thread_of = {e["id"]: e["tid"] for e in events if e.get("name") == "Profile" and e.get("pid") == pid}
    nodes: dict[tuple[str, int], dict[str, Any]] = {}
    samples: dict[str, list[tuple[int, float]]] = defaultdict(list)
    clock: dict[str, float] = {}
    for e in events:
        if e.get("name") == "Profile" and e.get("pid") == pid:
            clock[e["id"]] = e["args"]["data"]["startTime"]
        if e.get("name") != "ProfileChunk" or e.get("pid") != pid:
            continue
        data = e["args"]["data"]
        cpu = data.get("cpuProfile", {})
        for node in cpu.get("nodes", []):
            nodes[(e["id"], node["id"])] = node["callFrame"]
        for sample, delta in zip(cpu.get("samples", []), data.get("timeDeltas", []), strict=False):
            clock[e["id"]] = clock.get(e["id"], 0.0) + delta
            samples[e["id"]].append((sample, clock[e["id"]]))
    out: dict[str, dict[str, dict[str, float]]] = {}
    for profile_id, pairs in samples.items():
        thread = names.get((pid, thread_of.get(profile_id, -1)), str(thread_of.get(profile_id)))
        tables = out.setdefault(thread, {"by_script": defaultdict(float), "by_function": defaultdict(float)})
        for (node, ts), (_, next_ts) in zip(pairs, pairs[1:], strict=False):
            frame = nodes.get((profile_id, node), {})
            function = frame.get("functionName") or "(anonymous)"
            if function == "(idle)" or not start <= ts <= end:
                continue
            url = frame.get("url", "")
            script = ("wasm" if url.startswith("wasm://") else url.rsplit("/", 1)[-1]) or function
            tables["by_function"][f"{function} [{script}]"] += (next_ts - ts) / 1000
            tables["by_script"][script] += (next_ts - ts) / 1000
    return {thread: {kind: dict(sorted(table.items(), key=lambda kv: -kv[1])[:15]) for kind, table in t.items()}
            for thread, t in out.items()}


# ------------------------------------------------------------------ main


def med_range(values: list[float], fmt: str = "{:.1f}") -> str:
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}–{fmt.format(max(values))}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", type=Path, default=Path(os.environ.get("ORIZURU_DIST") or ROOT / "dist"))
    parser.add_argument("--tokens", type=int, default=6000)
    parser.add_argument("--rates", default="3000,0", help="tokens per second, comma-separated; 0: full speed")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2, help="uncounted runs of each path first, at each rate")
    parser.add_argument("--text", choices=("markdown", "recorded"), default="markdown")
    parser.add_argument("--every-frame-runs", type=int, default=2,
                        help="diagnostic runs of each path with the renderer flushed every frame (0: none)")
    parser.add_argument("--no-trace", action="store_true", help="skip the profiled run of each path")
    parser.add_argument("--write-every-ms", type=float, default=0,
                        help="diagnostic: the vendor writes what is due only every N ms (coalesced reads)")
    parser.add_argument("--no-jspi", action="store_true",
                        help="diagnostic: the core's worker hides WebAssembly.Suspending, so Pyodide runs without "
                             "JavaScript Promise Integration (stack switching), as under Node")
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]

    stream = build_stream(args.tokens, args.text)
    load_before = os.getloadavg()
    print(f"stream: {args.tokens} tokens ({args.text}), {len(stream['body']):,} bytes, {stream['chars'][-1]:,} "
          f"characters; load average {', '.join(f'{x:.2f}' for x in load_before)} on {os.cpu_count()} cores",
          flush=True)
    vendor, vendor_url = start_vendor()
    vendor.events = stream["events"]
    vendor.write_every_s = args.write_every_ms / 1000
    if args.write_every_ms:
        print(f"diagnostic: the vendor writes every {args.write_every_ms:g} ms (--write-every-ms)", flush=True)
    if args.no_jspi:
        print("diagnostic: the core's Pyodide runs without JSPI (--no-jspi); the shipped app uses it", flush=True)
    report: dict[str, Any] = {"tokens": args.tokens, "text": args.text, "args": {**vars(args), "dist": str(args.dist)},
                              "load_before": load_before, "rates": {}}
    with tempfile.TemporaryDirectory(prefix="bench-stream-e2e-") as tmp:
        make_site(args.dist, Path(tmp), args.no_jspi)
        relay, base = serve(Path(tmp))
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1000, "height": 800})
                page.on("pageerror", lambda err: print(f"  page error: {err}", file=sys.stderr))
                page.goto(base + "bench.html")
                page.wait_for_selector("html[data-bench=ready]", state="attached")
                page.evaluate("(url) => window.bench.setup(url)", vendor_url)
                cdp = page.context.new_cdp_session(page)
                cdp.send("Performance.enable")
                for rate in rates:
                    vendor.rate = rate
                    report["rates"][str(rate)] = measure_rate(browser, page, cdp, stream, rate, args)
                browser.close()
        finally:
            relay.terminate()
            relay.wait()
            vendor.shutdown()
    report["load_after"] = os.getloadavg()
    out = HERE / "results" / f"{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(f"\nload average before {', '.join(f'{x:.2f}' for x in load_before)}, after "
          f"{', '.join(f'{x:.2f}' for x in report['load_after'])} ({os.cpu_count()} cores, shared); "
          f"written to {out.relative_to(ROOT)}")
    return 0


def run_once(browser: Any, page: Any, cdp: Any, stream: dict[str, Any], path: str, paced: bool,
             every_frame: bool = False) -> dict[str, Any]:
    """One run, traced lightly (top-level task slices only) for each thread's CPU time."""
    browser.start_tracing(page=page, categories=THREAD_CATEGORIES)
    before = cpu_seconds(cdp)
    raw = page.evaluate("([p, e]) => window.bench.run(p, e)", [path, every_frame])
    process_ms = (cpu_seconds(cdp) - before) * 1000
    threads = thread_cpu(browser.stop_tracing())
    r = figures(raw, stream, process_ms, paced)
    main = threads["thread_cpu_ms"].get("CrRendererMain", 0.0)
    worker = threads["thread_cpu_ms"].get("DedicatedWorker thread", 0.0) if path == "app" else 0.0
    per_1k = 1000 / stream["tokens"]
    r.update(main_ms=main, worker_ms=worker, threads_per_1k=(main + worker) * per_1k, main_per_1k=main * per_1k,
             worker_per_1k=worker * per_1k, process_per_1k=r.pop("cpu_per_1k"),
             longest_main_task_ms=threads["longest_main_task_ms"], thread_cpu_ms=threads["thread_cpu_ms"])
    return r


def measure_rate(browser: Any, page: Any, cdp: Any, stream: dict[str, Any], rate: float,
                 args: argparse.Namespace) -> dict[str, Any]:
    label = f"{rate:g} tokens/s" if rate else "full speed"
    paced = rate > 0
    print(f"\n== {label}", flush=True)

    for _ in range(args.warmup):
        for path in PATHS:
            run_once(browser, page, cdp, stream, path, paced)
    runs: dict[str, list[dict[str, Any]]] = {path: [] for path in PATHS}
    for i in range(args.runs):
        for path in PATHS if i % 2 == 0 else PATHS[::-1]:
            r = run_once(browser, page, cdp, stream, path, paced)
            runs[path].append(r)
            lat = (f"latency p50/p95 {r['latency_p50']:5.1f}/{r['latency_p95']:5.1f} ms "
                   f"(to append {r['delivery_p95']:4.1f}) " if paced else "")
            jspi = {True: ", JSPI", False: ", no JSPI", None: ""}[r["jspi"]]
            print(f"  run {i + 1} {path:3}{jspi}  main+worker {r['threads_per_1k']:6.1f} ms/1k tokens (main "
                  f"{r['main_per_1k']:5.1f}, worker {r['worker_per_1k']:5.1f}), process {r['process_per_1k']:6.1f}  "
                  f"{lat}reads {r['reads']:5}  paints {r['paints']:4}  wall {r['wall_ms']:6.0f} ms  longest "
                  f"main task {r['longest_main_task_ms']:5.1f} ms, long tasks {r['long_tasks']}", flush=True)
    a, b = runs["app"], runs["js"]

    def ratios(key: str) -> tuple[float, float]:
        paired = statistics.median(x[key] / y[key] for x, y in zip(a, b, strict=True))
        return paired, statistics.median(x[key] for x in a) / statistics.median(y[key] for y in b)

    summary: dict[str, Any] = {"runs": runs, "ratio_threads": ratios("threads_per_1k"),
                               "ratio_process": ratios("process_per_1k")}
    print(f"\n{label}, {args.tokens} tokens, medians of {args.runs} runs [min–max]; CPU in ms per 1,000 tokens:")
    print("| path | main + worker CPU | main | worker | renderer process CPU | latency p50 ms | latency p95 ms "
          "| p95 arrival → append | reads | wall ms | longest main task ms | tasks > 50 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for path, rows in runs.items():
        def col(key: str, rows: list[dict[str, Any]] = rows) -> str:
            return med_range([r[key] for r in rows]) if paced else "–"
        print(f"| {path} | {med_range([r['threads_per_1k'] for r in rows])} | "
              f"{statistics.median(r['main_per_1k'] for r in rows):.1f} | "
              f"{statistics.median(r['worker_per_1k'] for r in rows):.1f} | "
              f"{med_range([r['process_per_1k'] for r in rows])} | {col('latency_p50')} | {col('latency_p95')} | "
              f"{col('delivery_p95')} | {statistics.median(r['reads'] for r in rows):.0f} | "
              f"{med_range([r['wall_ms'] for r in rows], '{:.0f}')} | "
              f"{max(r['longest_main_task_ms'] for r in rows):.1f} | {sum(r['long_tasks'] for r in rows)} |")
    (t_paired, t_medians), (p_paired, p_medians) = summary["ratio_threads"], summary["ratio_process"]
    print(f"A ÷ B CPU, main + worker threads: {t_paired:.2f} paired ({t_medians:.2f} of medians); whole renderer "
          f"process: {p_paired:.2f} ({p_medians:.2f}) -> target <= {TARGET_RATIO}: "
          f"{'met' if t_paired <= TARGET_RATIO else 'NOT met'}")
    per_read = [1000 * r["worker_ms"] / r["reads"] for r in a]
    print(f"A's worker: {statistics.median(per_read):.0f} µs CPU per body read [{min(per_read):.0f}–"
          f"{max(per_read):.0f}]; B's main thread: "
          f"{statistics.median(1000 * r['main_ms'] / r['reads'] for r in b):.0f} µs per read (everything included)")
    longest = max(r["longest_main_task_ms"] for r in a)
    print(f"A's longest main-thread task {longest:.1f} ms, long tasks {sum(r['long_tasks'] for r in a)} -> "
          f"target none over {TARGET_TASK_MS:g} ms: {'met' if longest <= TARGET_TASK_MS else 'NOT met'}")
    if paced:
        p95 = statistics.median(r["latency_p95"] for r in a)
        print(f"A's latency p95 {p95:.1f} ms -> target <= {TARGET_P95_MS:g} ms: "
              f"{'met' if p95 <= TARGET_P95_MS else 'NOT met'}")
    if paced and args.every_frame_runs:
        summary["every_frame"] = every_frame(browser, page, cdp, stream, args.every_frame_runs)
    if not args.no_trace:
        summary["profile"] = profiled(browser, page)
    return summary


def every_frame(browser: Any, page: Any, cdp: Any, stream: dict[str, Any], runs: int) -> dict[str, Any]:
    """The diagnostic runs with the renderer flushed at every frame."""
    every: dict[str, list[dict[str, Any]]] = {path: [] for path in PATHS}
    for _ in range(runs):
        for path in PATHS:
            every[path].append(run_once(browser, page, cdp, stream, path, True, every_frame=True))
    print("diagnostic, the renderer flushed at every frame (not its own 30 ms pace), medians of "
          f"{runs}: " + "; ".join(
              f"{path} latency p50/p95 {statistics.median(r['latency_p50'] for r in rows):.1f}/"
              f"{statistics.median(r['latency_p95'] for r in rows):.1f} ms (to append p95 "
              f"{statistics.median(r['delivery_p95'] for r in rows):.1f}), main + worker "
              f"{statistics.median(r['threads_per_1k'] for r in rows):.1f} ms/1k tokens"
              for path, rows in every.items()))
    return every


def profiled(browser: Any, page: Any) -> dict[str, Any]:
    """One run of each path under V8's sampling profiler: self time by script and function, per thread."""
    out = {}
    for path in PATHS:
        browser.start_tracing(page=page, categories=PROFILE_CATEGORIES)
        page.evaluate("(p) => window.bench.run(p)", path)
        out[path] = tables = profile(browser.stop_tracing())
        print(f"profiled {path} run (V8 samples, self ms; slower under the profiler):")
        for thread, table in tables.items():
            if thread not in ("CrRendererMain", "DedicatedWorker thread"):
                continue
            scripts = ", ".join(f"{k} {v:.0f}" for k, v in list(table["by_script"].items())[:8])
            print(f"  {thread} by script: {scripts}")
            for fn, ms in list(table["by_function"].items())[:12]:
                print(f"      {ms:7.1f}  {fn}")
    return out


if __name__ == "__main__":
    sys.exit(main())
