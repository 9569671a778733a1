"""Boot benchmark: the app's page against bare Pyodide pages, cold and warm, in headless Chromium.

    .venv/bin/python bench/boot/run.py [--runs 5] [--dist DIR] [--no-sw] [--sw NAME=FILE ...]
    .venv/bin/python bench/boot/run.py --first-visit [--runs 5] [--dist DIR]
    (after `python3 build.py build`)

``--first-visit`` measures only cold visits on an emulated link (CDP Network.emulateNetworkConditions:
20 Mbit/s down, 40 ms latency, fresh profile) and adds ``bytes``: what crossed the wire (the
resource timing ``transferSize`` of the page's and its workers' requests, headers included) before
core ready; beside ``app`` it loads ``bare-pyodide``, loadPyodide in a worker and nothing else.

Pages, interleaved in every round so that they see the same machine:
- ``app``: dist/index.html (Pyodide in a worker, our wheels, ``import pycore.wire``), with the
  site's service worker (dist/sw.js) as a user gets it;
- ``app-nosw`` (``--no-sw``): the same page with service workers blocked in the browser — the
  plain HTTP cache alone, to show what the service worker costs or saves;
- ``app-NAME`` (``--sw NAME=FILE``): the same page served with FILE as the service worker's code
  (dist/sw.js's first line, the precache list, kept), to compare caching strategies side by side;
  (``--site NAME=DIST``): another build of the site, e.g. with a change to the page;
- ``bare-worker``: Pyodide in a worker, the same wheels minus pycore, ``import pydantic, jinja2``;
- ``bare-main``: the same on the main thread.
The bare pages never register a service worker, and every page gets a fresh profile, so no
service worker ever controls them: they stay the plain-HTTP-cache reference they always were.
Cold = a fresh browser profile; warm = a second visit with the same profile. Between the two,
every page settles the same way: its service worker, if it registered one, has finished
installing (precache) and is active — the state a user's real second visit finds — and at least
``--settle`` seconds have passed since core ready, the same for every page (the browser writes its
compiled-wasm cache in the background once the hot code is optimised: a page given less time
than another would find a colder cache).
Times are from navigation start: ``ui`` until the page's handlers are attached, ``ready`` until
``data-core=ready``; ``snapshot`` says whether the app's core started from the memory snapshot its first visit
kept (1, ``data-core-boot=snapshot``) or afresh (0); ``cpu`` is the CPU time all the browser's processes spent
over that span (it moves far less than wall time with the load of a shared machine); ``sw`` says whether a service
worker controlled the visit (1) or not (0).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "bench"))
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from served import arguments, serve  # noqa: E402

BARE = ["bare-worker", "bare-main"]
LINK = {"offline": False, "latency": 40, "downloadThroughput": 20e6 / 8, "uploadThroughput": 20e6 / 8}


def make_variant(dist: Path, out: Path, sw_code: Path) -> None:
    """dist/ with sw.js's code replaced by ``sw_code`` (its first line, the precache list, kept)."""
    shutil.copytree(dist, out, dirs_exist_ok=True)
    first_line = (dist / "sw.js").read_text().split("\n", 1)[0]
    (out / "sw.js").write_text(first_line + "\n" + sw_code.read_text())


def make_site(dist: Path, out: Path) -> None:
    """dist/ plus the two bare pages, which reuse dist/'s boot manifest."""
    shutil.copytree(dist, out, dirs_exist_ok=True)
    html = (dist / "index.html").read_text()
    boot = re.search(r'<script type="application/json" id="boot">.*?</script>', html, re.S).group(0)
    shutil.copy2(HERE / "bare.js", out / "bare.js")
    for mode in ("worker", "main", "pyodide"):
        (out / f"bare-{mode}.html").write_text(
            f'<!doctype html><html data-mode="{mode}"><head><meta charset="utf-8">{boot}'
            '<script type="module" src="bare.js"></script></head><body>bare</body></html>'
        )


def browser_cpu_ms(profile: str) -> dict[int, float]:
    """CPU time (user + system, ms) so far of every process of the browser using ``profile``."""
    tick = 1000 / os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    family: set[int] = set()  # the browser and its zygotes (they carry the flag), then their children
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if f"--user-data-dir={profile}" in (entry / "cmdline").read_text():
                family.add(int(entry.name))
        except OSError:
            continue
        stats[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) * tick)
    grew = True
    while grew:
        more = {pid for pid, (ppid, _) in stats.items() if ppid in family} - family
        family |= more
        grew = bool(more)
    return {pid: stats[pid][1] for pid in family if pid in stats}


def measure(page, url: str, profile: str) -> dict[str, float]:
    before = browser_cpu_ms(profile)
    page.goto(url)
    page.wait_for_selector("html[data-core=ready]", state="attached", timeout=180_000)
    marks = page.evaluate("Object.fromEntries(performance.getEntriesByType('mark').map(m => [m.name, m.startTime]))")
    result = {"ui": marks["ui-usable"], "ready": marks["core-ready"],
              "sw": page.evaluate("navigator.serviceWorker?.controller ? 1 : 0"),
              # the app's core from the memory snapshot an earlier visit kept (web/snapshot.js)
              "snapshot": int(page.get_attribute("html", "data-core-boot") == "snapshot")}
    # The browser's CPU time for the visit: unlike wall time, it barely moves with the machine's
    # load, and it shows compile work (a compiled-wasm cache miss) directly.
    result["cpu"] = sum(ms - before.get(pid, 0) for pid, ms in browser_cpu_ms(profile).items())
    if page.workers and "bare-main" not in url:
        # Worker marks are relative to the worker's own time origin.
        offset = page.workers[-1].evaluate("performance.timeOrigin") - page.evaluate("performance.timeOrigin")
        stages = page.workers[-1].evaluate(
            "Object.fromEntries(performance.getEntriesByType('mark').map(m => [m.name, m.startTime]))")
        result.update({k.removeprefix("stage:"): v + offset for k, v in stages.items()})
    return result


# Bytes of the requests that ended before ``until`` (ms in the page's or the worker's own time origin): what
# comes after ready (the wheels installed later, web/worker.js) is not "before ready".
TRANSFERRED = ("(until) => performance.getEntriesByType('resource')"
               ".filter((e) => e.responseEnd <= until).reduce((n, e) => n + e.transferSize, 0)")
WORKER_READY = "performance.getEntriesByName('stage:ready')[0]?.startTime ?? Infinity"


def first_visit(pw, url: str) -> dict[str, float]:
    """A cold visit on the emulated link: times as in ``measure`` plus the bytes moved before ready."""
    with tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = context.pages[0]
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", LINK)
        result = measure(page, url, profile)
        nav = page.evaluate("performance.getEntriesByType('navigation')[0].transferSize")
        ready = page.evaluate("performance.getEntriesByName('core-ready')[0].startTime")
        result["bytes"] = nav + page.evaluate(TRANSFERRED, ready) + sum(
            w.evaluate(TRANSFERRED, w.evaluate(WORKER_READY)) for w in page.workers)
        context.close()
    return result


def first_visits(pw, pages: dict[str, str], runs: int) -> None:
    rounds = []
    for i in range(runs):
        names = list(pages)
        order = names[i % len(names):] + names[:i % len(names)]
        rounds.append({name: first_visit(pw, pages[name]) for name in order})
        print(f"round {i + 1}/{runs}: " + ", ".join(f"{n} {r['ready']:.0f} ms {r['bytes'] / 1e6:.2f} MB"
                                                    for n, r in rounds[-1].items()), file=sys.stderr)
    lines = ["| page | core ready (ms), median [min–max] | ready ÷ bare-pyodide, paired | MB before ready |",
             "|---|---|---|---|"]
    for name in pages:
        ready = [r[name]["ready"] for r in rounds]
        ratio = statistics.median(r[name]["ready"] / r["bare-pyodide"]["ready"] for r in rounds)
        lines.append(f"| {name} | {statistics.median(ready):.0f} [{min(ready):.0f}–{max(ready):.0f}] | {ratio:.2f} | "
                     f"{statistics.median(r[name]['bytes'] for r in rounds) / 1e6:.2f} |")
    load = Path("/proc/loadavg").read_text().split()[:3]
    print("\n".join(lines) + f"\n\nmedians of {runs} rounds, 20 Mbit/s 40 ms, cold; load average: {' '.join(load)}")


SETTLE_SW = """async () => {
    const registration = await navigator.serviceWorker?.getRegistration();
    if (registration) await navigator.serviceWorker.ready;
    return Boolean(registration);
}"""


def one_round(pw, pages: dict[str, tuple[str, bool]], order: list[str], settle: float) -> dict:
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name in order:
        url, block_sw = pages[name]
        with tempfile.TemporaryDirectory() as profile:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                service_workers="block" if block_sw else "allow")
            page = context.pages[0]
            cold = measure(page, url, profile)
            settled = time.monotonic() + settle
            page.evaluate(SETTLE_SW)
            time.sleep(max(0.0, settled - time.monotonic()))
            page.goto("about:blank")
            warm = measure(page, url, profile)
            context.close()
        out[name] = {"cold": cold, "warm": warm}
    return out


def summarize(rounds: list[dict]) -> dict:
    summary: dict = {}
    for name in rounds[0]:
        for visit in ("cold", "warm"):
            keys = rounds[0][name][visit].keys()
            summary.setdefault(name, {})[visit] = {
                k: round(statistics.median(r[name][visit][k] for r in rounds)) for k in keys
            }
    return summary


def paired(rounds: list[dict], name: str, visit: str, key: str) -> float:
    """Median over rounds of ``name``'s ``key`` over the best bare page's in the same round: each
    round's pages ran back to back, so this cancels much of the shared machine's swings."""
    return statistics.median(r[name][visit][key] / min(r[b][visit][key] for b in BARE) for r in rounds)


def table(summary: dict, rounds: list[dict]) -> str:
    lines = ["| page | visit | UI usable (ms) | core ready (ms) | ready ÷ best bare | same, paired per round "
             "| browser CPU (ms) | CPU ÷ best bare, paired | SW controlled | from snapshot |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for visit in ("cold", "warm"):
        best = min(summary[p][visit]["ready"] for p in BARE)
        for name, s in summary.items():
            s = s[visit]
            lines.append(f"| {name} | {visit} | {s['ui']} | {s['ready']} | {s['ready'] / best:.2f} | "
                         f"{paired(rounds, name, visit, 'ready'):.2f} | {s['cpu']} | "
                         f"{paired(rounds, name, visit, 'cpu'):.2f} | {'yes' if s['sw'] else 'no'} | "
                         f"{'yes' if s.get('snapshot') else 'no'} |")
    return "\n".join(lines)


def main() -> int:
    parser = arguments(__doc__, runs=5)
    parser.add_argument("--no-sw", action="store_true", help="also measure the app with service workers blocked")
    parser.add_argument("--sw", action="append", default=[], metavar="NAME=FILE",
                        help="also measure the app with FILE as its service worker's code")
    parser.add_argument("--site", action="append", default=[], metavar="NAME=DIST",
                        help="also measure another build of the site (e.g. with a change to the page)")
    parser.add_argument("--first-visit", action="store_true", help="cold visits on a 20 Mbit/s, 40 ms link, with bytes")
    parser.add_argument("--report", type=Path, help="only print the table of a saved results file")
    parser.add_argument("--settle", type=float, default=8.0, help="least seconds between cold ready and the warm visit")
    args = parser.parse_args()
    if args.report:
        saved = json.loads(args.report.read_text())
        print(table(saved["summary"], saved["rounds"]))
        print(f"\nmedians of {len(saved['rounds'])} interleaved rounds; load average at the end: "
              f"{' '.join(saved.get('load', []))}")
        return 0
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            make_site(args.dist, Path(tmp) / "site")
            proc, base = serve(Path(tmp) / "site")
            procs.append(proc)
            # Every variant on its own server (its own origin), so no service worker sees another's files.
            if args.first_visit:
                with sync_playwright() as pw:
                    first_visits(pw, {"app": base, "bare-pyodide": f"{base}bare-pyodide.html",
                                      "bare-worker": f"{base}bare-worker.html"}, args.runs)
                return 0
            pages = {"app": (base, False)}
            if args.no_sw:
                pages["app-nosw"] = (base, True)
            for spec in args.sw:
                name, _, file = spec.partition("=")
                make_variant(args.dist, Path(tmp) / name, Path(file))
                proc, variant_base = serve(Path(tmp) / name)
                procs.append(proc)
                pages[f"app-{name}"] = (variant_base, False)
            for spec in args.site:
                name, _, dist = spec.partition("=")
                proc, variant_base = serve(Path(dist))
                procs.append(proc)
                pages[f"app-{name}"] = (variant_base, False)
            pages.update({name: (f"{base}{name}.html", False) for name in BARE})
            names = list(pages)
            with sync_playwright() as pw:
                rounds = []
                for i in range(args.runs):
                    started = time.monotonic()
                    order = names[i % len(names):] + names[:i % len(names)]  # rotate: no page always first
                    rounds.append(one_round(pw, pages, order, args.settle))
                    ready = ", ".join(f"{n} {r['cold']['ready']:.0f}/{r['warm']['ready']:.0f}"
                                      for n, r in rounds[-1].items())
                    print(f"round {i + 1}/{args.runs} in {time.monotonic() - started:.1f} s "
                          f"(ready cold/warm ms: {ready})", file=sys.stderr)
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait()
    rounds = [{name: r[name] for name in names} for r in rounds]
    summary = summarize(rounds)
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    (results / "latest.json").write_text(json.dumps({"summary": summary, "rounds": rounds, "load": load}, indent=1))
    print(table(summary, rounds))
    print(f"\nmedians of {args.runs} interleaved rounds; load average at the end: {' '.join(load)}")
    print("\napp stage marks (median ms from navigation):", json.dumps(
        {v: {k: summary["app"][v][k] for k in ("runtime", "packages", "core", "ready")} for v in ("cold", "warm")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
