"""Long histories: the app with 2,000 conversations and one of 5,000 messages, in headless Chromium.

    .venv/bin/python bench/history/run.py [--runs 3] [--dist DIR] [--conversations 2000] [--messages 5000]
    (after `python3 build.py build`)

Each run takes a fresh browser profile, lets the app create its database, fills it through IndexedDB
(``--conversations`` conversations of 10 messages each, plus one of ``--messages`` messages; realistic
markdown text, dates spread over a year so the sidebar has all its groups), reloads, and measures:

- ``sidebar``: navigation to the sidebar drawn (``ui-usable``: the list is read and shown);
- ``scroll max task``: the longest main-thread task (Long Tasks API, 50 ms and up) while the sidebar is
  scrolled from top to bottom a screen at a time, one step per frame; ``none`` when no task reached 50 ms;
- ``search``: typing a word to its hits drawn, and the part after the sidebar's 150 ms typing pause
  (the store's search over every message plus drawing the hits);
- ``open``: a click on the 5,000-message conversation to its messages painted (next frame);
- ``export all``: a click on "All conversations (JSON)" to the download;
- memory: the page's JS heap (``performance.memory``) after boot and after opening the long one.

Targets (issue 22 item 5, issue 19 item 4): open ≤ 300 ms, no task over 50 ms while scrolling, search
≤ 200 ms, export ≤ 2 s.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "bench"))
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from served import arguments, serve  # noqa: E402

FILL = """async ({conversations, messages}) => {
  const words = ("the model streams tokens while the page renders markdown safely and keeps every delta " +
    "in storage so that nothing is lost when a tab closes; tools run through MCP servers the user " +
    "connected, each call shown on its card with its arguments and result").split(" ");
  const text = (seed, n) => Array.from({length: n}, (_, i) => words[(seed * 7 + i * 13) % words.length])
    .join(" ");
  const reply = (seed) => `## Part ${seed}\\n\\n${text(seed, 60)}.\\n\\n- ${text(seed + 1, 12)}\\n` +
    `- ${text(seed + 2, 12)}\\n\\n` +
    "```python\\nprint(" + seed + ")\\n```\\n\\n" + text(seed + 3, 40) + ".";
  const db = await new Promise((ok, fail) => {
    const r = indexedDB.open("orizuru");
    r.onsuccess = () => ok(r.result);
    r.onerror = () => fail(r.error);
  });
  const year = 365 * 24 * 3600 * 1000;
  const now = Date.now();
  const put = (convs) => new Promise((ok, fail) => {
    const tx = db.transaction(["conversations", "messages"], "readwrite");
    for (const {conversation, list} of convs) {
      tx.objectStore("conversations").put(conversation);
      for (const m of list) tx.objectStore("messages").put(m);
    }
    tx.oncomplete = ok; tx.onerror = () => fail(tx.error);
  });
  const make = (c, count, when) => {
    const id = `c${c}`;
    const list = [];
    let parent = null;
    for (let i = 0; i < count; i++) {
      const m = {id: `${id}-m${i}`, conversation_id: id, parent_id: parent, role: i % 2 ? "assistant" : "user",
        parts: [{type: "text", text: i % 2 ? reply(c + i) : text(c + i, 25) + "?"}], status: "complete",
        created: when + i};
      if (i % 2) Object.assign(m, {vendor: "openai", model: "gpt-4o-mini",
                                   usage: {input_tokens: 100, output_tokens: 200}});
      list.push(m);
      parent = m.id;
    }
    return {conversation: {id, title: text(c, 6), created: when, updated: when + count, current_leaf: parent}, list};
  };
  let batch = [];
  for (let c = 0; c < conversations; c++) {
    batch.push(make(c, 10, now - Math.floor((c / conversations) * year)));
    if (batch.length === 100) { await put(batch); batch = []; }
  }
  batch.push(make("long", messages, now - 3600 * 1000));
  batch[batch.length - 1].conversation.title = "The long conversation";
  await put(batch);
  db.close();
}"""

SCROLL = """async () => {
  const list = document.getElementById("conversations");
  const tasks = [];
  const observer = new PerformanceObserver((l) => tasks.push(...l.getEntries().map((e) => e.duration)));
  observer.observe({type: "longtask"});
  const frame = () => new Promise((ok) => requestAnimationFrame(() => ok()));
  const scroller = list.closest(".sidebar");
  const target = [list, scroller].find((el) => el.scrollHeight > el.clientHeight + 10) ?? list;
  const steps = Math.ceil(target.scrollHeight / target.clientHeight);
  for (let i = 0; i <= steps; i++) { target.scrollTop = i * target.clientHeight; await frame(); }
  await new Promise((ok) => setTimeout(ok, 100));
  observer.disconnect();
  const max = tasks.length ? Math.max(...tasks) : 0;
  return {steps, rows: list.querySelectorAll("li").length, max, count: tasks.length};
}"""

SEARCH = """async (word) => {
  const box = document.getElementById("search");
  const results = document.getElementById("search-results");
  const drawn = new Promise((ok) => new MutationObserver((_, o) => {
    if (results.children.length) { o.disconnect(); ok(performance.now()); } }).observe(results, {childList: true}));
  const t0 = performance.now();
  box.value = word;
  box.dispatchEvent(new Event("input", {bubbles: true}));
  const t1 = await drawn;
  await new Promise((ok) => requestAnimationFrame(() => setTimeout(ok)));
  return {typed: performance.now() - t0, drawn: t1 - t0, hits: results.children.length};
}"""

OPEN = """async () => {
  const item = [...document.querySelectorAll("#conversations li")]
    .find((li) => li.textContent.includes("The long conversation"));
  const transcript = document.getElementById("transcript");
  const shown = new Promise((ok) => new MutationObserver((_, o) => {
    if (!transcript.querySelector("li.msg")) return;
    o.disconnect();
    requestAnimationFrame(() => setTimeout(() => ok(performance.now())));
  }).observe(transcript, {childList: true, subtree: true}));
  const t0 = performance.now();
  (item.querySelector("button") ?? item).click();
  const t1 = await shown;
  return {ms: t1 - t0, drawn: transcript.querySelectorAll("li.msg").length};
}"""

HEAP = "() => performance.memory ? performance.memory.usedJSHeapSize : 0"


def one_run(pw, url: str, conversations: int, messages: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=[
            *CHROMIUM_ARGS, "--enable-precise-memory-info"], viewport={"width": 1280, "height": 800},
            accept_downloads=True)
        page: Page = context.pages[0]
        page.goto(url)
        page.wait_for_selector("html[data-ui=ready]", state="attached")
        page.evaluate(FILL, {"conversations": conversations, "messages": messages})
        page.goto("about:blank")
        page.goto(url)
        page.wait_for_selector("html[data-core=ready]", state="attached", timeout=180_000)
        out: dict[str, float] = {}
        out["sidebar_ms"] = page.evaluate("performance.getEntriesByName('ui-usable')[0].startTime")
        out["heap_boot_mb"] = page.evaluate(HEAP) / 1e6
        scroll = page.evaluate(SCROLL)
        out["scroll_max_task_ms"] = scroll["max"]
        out["scroll_long_tasks"] = scroll["count"]
        out["rows"] = scroll["rows"]
        search = page.evaluate(SEARCH, "tokens")
        out["search_typed_ms"] = search["typed"]
        out["search_after_pause_ms"] = search["typed"] - 150
        out["search_hits"] = search["hits"]
        page.fill("#search", "")
        page.dispatch_event("#search", "input")
        page.wait_for_selector("#search-results", state="hidden")
        opened = page.evaluate(OPEN)
        out["open_ms"] = opened["ms"]
        out["open_drawn"] = opened["drawn"]
        out["heap_open_mb"] = page.evaluate(HEAP) / 1e6
        page.get_by_role("button", name="Export", exact=True).click()
        started = page.evaluate("performance.now()")
        with page.expect_download(timeout=120_000) as download:
            page.get_by_role("button", name="All conversations (JSON)").click()
        out["export_ms"] = page.evaluate("performance.now()") - started
        out["export_mb"] = Path(download.value.path()).stat().st_size / 1e6
        context.close()
    return out


def main() -> None:
    parser = arguments(__doc__, runs=3)
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=5000)
    args = parser.parse_args()
    proc, url = serve(args.dist)
    try:
        with sync_playwright() as pw:
            runs = []
            for i in range(args.runs):
                runs.append(one_run(pw, url, args.conversations, args.messages))
                print(f"run {i + 1}/{args.runs}: " + ", ".join(f"{k} {v:.0f}" for k, v in runs[-1].items()),
                      file=sys.stderr)
    finally:
        proc.terminate()
    rows = [("sidebar drawn (ms from navigation)", "sidebar_ms", "—"),
            ("longest task while scrolling the sidebar (ms; 0 = none ≥ 50)", "scroll_max_task_ms", "no task > 50"),
            ("search: typing to hits drawn (ms)", "search_typed_ms", "—"),
            ("search: after the 150 ms typing pause (ms)", "search_after_pause_ms", "≤ 200"),
            ("open the 5,000-message conversation to first paint (ms)", "open_ms", "≤ 300"),
            ("export all as JSON (ms)", "export_ms", "≤ 2000"),
            ("page JS heap after boot (MB)", "heap_boot_mb", "—"),
            ("page JS heap with the long conversation open (MB)", "heap_open_mb", "—")]
    lines = ["| measure | median [min–max] | target |", "|---|---|---|"]
    for label, key, target in rows:
        values = [r[key] for r in runs]
        lines.append(f"| {label} | {statistics.median(values):.0f} [{min(values):.0f}–{max(values):.0f}] | {target} |")
    last = runs[-1]
    load = Path("/proc/loadavg").read_text().split()[:3]
    print("\n".join(lines) + f"\n\n{args.conversations} conversations + one of {args.messages} messages; "
          f"{last['rows']:.0f} sidebar rows, {last['search_hits']:.0f} search hits, {last['open_drawn']:.0f} "
          f"messages drawn on open, export {last['export_mb']:.1f} MB; medians of {args.runs} runs; "
          f"load average: {' '.join(load)}")


if __name__ == "__main__":
    main()
