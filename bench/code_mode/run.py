"""Code mode (issue #33 item 1): one question over a tool that returns 5,000 records, of which the answer needs 3,
answered with the tool called directly and through code, on the same scripted model behaviour (one tool call,
then the answer), in headless Chromium against the built site.

    .venv/bin/python bench/code_mode/run.py [--runs 3] [--dist DIR]
    (after `python3 build.py build`)

An MCP server (the official Python SDK, on loopback) offers ``list_orders``: 5,000 orders as JSON text, three of
them from Kyoto over 900. A loopback vendor replays recorded OpenAI bytes in which the model calls, in one mode,
``list_orders`` itself, and in the other ``python`` with code that calls ``await tools.orders.list_orders()``, keeps
the three and prints them; then it answers. The user allowed ``list_orders`` in Tools, so neither asks.

Measured per mode, for the question in a new chat and then asked again in that chat: what each turn sent to the
vendor (its request bodies: bytes, and tokens estimated as characters ÷ 4, the usual figure for English and JSON
with OpenAI's tokenizers; no tokenizer is locked in this project), and its wall time, from Send to the page idle
(the tool's result drawn on its card included). A new chat's first python call starts its sandbox (a Pyodide of
its own); asked again, the sandbox is up. Target: at least 10× fewer tokens through code.
"""

from __future__ import annotations

import contextlib
import json
import random
import statistics
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import uvicorn
from mcp.server.mcpserver import MCPServer
from playwright.sync_api import Page, sync_playwright
from starlette.middleware.cors import CORSMiddleware

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "bench"))
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from journeys import NO_AUTO_TITLE, add_server, close_tools, configure, send, wait_idle  # noqa: E402
from journeys_tool_servers import MCP_HEADERS, free_port  # noqa: E402
from served import arguments, serve  # noqa: E402
from vendor_replay import VendorReplay, with_text, with_tool_call  # noqa: E402

TOOL_TURN, TEXT_TURN = "openai/chat-stream-tool-call", "openai/chat-stream-text-usage"
SSE = "text/event-stream; charset=utf-8"
QUESTION = "Which orders from Kyoto are over 900?"
ANSWER = "Three: K-1, K-2 and K-3."
CODE = ("import json\n"
        "from orizuru import tools\n"
        "orders = json.loads(await tools.orders.list_orders())\n"
        "print(json.dumps([o for o in orders if o['city'] == 'Kyoto' and o['total'] > 900]))\n")
CITIES = ["Osaka", "Tokyo", "Nagoya", "Sapporo", "Fukuoka", "Sendai", "Kobe", "Hiroshima"]


def orders() -> list[dict[str, Any]]:
    """5,000 orders; exactly three from Kyoto over 900 (and a few from Kyoto under it)."""
    rng = random.Random(33)
    out = [{"id": f"O-{i:05d}", "customer": f"customer {rng.randrange(10_000):04d}", "city": rng.choice(CITIES),
            "total": round(rng.uniform(5, 1000), 2), "status": rng.choice(["paid", "shipped", "returned"]),
            "created": f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"} for i in range(4_992)]
    for n, total in enumerate([950.5, 912.0, 999.9, 120.0, 880.0, 15.5, 640.0, 899.99]):
        order = {"id": f"K-{n + 1}" if total > 900 else f"k-{n + 1}", "customer": "customer 0000", "city": "Kyoto",
                 "total": total, "status": "paid", "created": "2026-04-01"}
        out.insert(rng.randrange(len(out)), order)
    return out


@contextlib.contextmanager
def serve_orders(origin: str) -> Iterator[str]:
    """The orders server on loopback (streamable HTTP, CORS for the site); yields its MCP URL."""
    mcp = MCPServer(name="orders", version="1.0.0")
    records = json.dumps(orders())

    @mcp.tool(structured_output=False)
    def list_orders() -> str:
        """All orders: id, customer, city, total, status, created (JSON)."""
        return records

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app = CORSMiddleware(mcp.streamable_http_app(), allow_origins=[origin], allow_methods=["GET", "POST", "DELETE"],
                             allow_headers=MCP_HEADERS, expose_headers=["Mcp-Session-Id"])
    port = free_port()
    runner = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    while not runner.started:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        runner.should_exit = True
        thread.join(10)


def turn(page: Page, vendor: VendorReplay, mode: str, call_id: str, *, new_chat: bool) -> dict[str, float]:
    """The question (in a new chat, or again in this one); what its requests to the vendor carried, its wall time."""
    if mode == "direct":
        call = with_tool_call(TOOL_TURN, "list_orders", {}, call_id)
    else:
        call = with_tool_call(TOOL_TURN, "python", {"code": CODE}, call_id)
    vendor.script_body(f"{mode} call", call, content_type=SSE)
    vendor.script_body(f"{mode} answer", with_text(TEXT_TURN, ANSWER), content_type=SSE)
    if new_chat:
        page.get_by_role("button", name="New chat").first.click()
    first = len(vendor.model_requests)
    started = time.perf_counter()
    send(page, QUESTION)
    wait_idle(page, timeout=300_000)
    wall = (time.perf_counter() - started) * 1000
    bodies = [r.body.decode() for r in vendor.model_requests[first:]]
    assert len(bodies) == 2, f"{mode}: {len(bodies)} requests"
    told = json.dumps([m for m in json.loads(bodies[-1])["messages"] if m["role"] == "tool"])
    assert all(f"K-{n}" in told for n in (1, 2, 3)), f"{mode}: the three orders did not reach the model"
    chars = sum(len(b) for b in bodies)
    return {"bytes": sum(len(b.encode()) for b in bodies), "tokens": chars / 4, "wall": wall}


def one_run(pw: Any, url: str, vendor: VendorReplay, server: str) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context.add_init_script(NO_AUTO_TITLE)  # no title request after the reply: the turn's requests only
        page = context.pages[0]
        page.goto(url)
        page.wait_for_selector("html[data-core=ready]", state="attached", timeout=180_000)
        configure(page, vendor="openai", base=vendor.url, key="sk-bench", model="gpt-4o-mini")
        add_server(page, server).get_by_role("combobox", name="Approval for list_orders").select_option("allow")
        close_tools(page)
        out = {}
        area = page.locator("#chat-settings-area")
        for mode in ("direct", "code"):
            if area.get_by_role("button", name="Chat settings").get_attribute("aria-expanded") != "true":
                area.get_by_role("button", name="Chat settings").click()
            area.get_by_label("Tools", exact=True).select_option(mode)
            area.get_by_role("button", name="Save to assistant").click()  # new chats start from it
            first = turn(page, vendor, mode, f"call_{mode}_1", new_chat=True)
            again = turn(page, vendor, mode, f"call_{mode}_2", new_chat=False)
            out[mode] = {**first, **{f"again_{k}": v for k, v in again.items()}}
        context.close()
    return out


def main() -> None:
    parser = arguments(__doc__, runs=3)
    args = parser.parse_args()
    proc, url = serve(args.dist)
    parts = urlsplit(url)
    vendor = VendorReplay()
    runs = []
    try:
        with serve_orders(f"{parts.scheme}://{parts.netloc}") as server, sync_playwright() as pw:
            for i in range(args.runs):
                runs.append(one_run(pw, url, vendor, server))
                print(f"run {i + 1}/{args.runs}: {json.dumps(runs[-1])}", file=sys.stderr)
    finally:
        vendor.close()
        proc.terminate()

    def med(mode: str, key: str) -> float:
        return statistics.median(r[mode][key] for r in runs)

    def span(mode: str, key: str) -> str:
        values = [r[mode][key] for r in runs]
        return f"{med(mode, key):,.0f} [{min(values):,.0f}–{max(values):,.0f}]"

    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print("| measure | tools directly | through code |\n|---|---|---|\n"
          f"| bytes sent to the vendor, new chat (2 requests) | {med('direct', 'bytes'):,.0f} | "
          f"{med('code', 'bytes'):,.0f} |\n"
          f"| ≈ tokens sent, new chat (characters ÷ 4) | {med('direct', 'tokens'):,.0f} | "
          f"{med('code', 'tokens'):,.0f} |\n"
          f"| fewer tokens through code | — | **{med('direct', 'tokens') / med('code', 'tokens'):.0f} ×** |\n"
          f"| ≈ tokens sent, asked again in that chat | {med('direct', 'again_tokens'):,.0f} | "
          f"{med('code', 'again_tokens'):,.0f} |\n"
          f"| wall time, new chat, ms (code: its sandbox starts) | {span('direct', 'wall')} | "
          f"{span('code', 'wall')} |\n"
          f"| wall time, asked again, ms (code: the sandbox is up) | {span('direct', 'again_wall')} | "
          f"{span('code', 'again_wall')} |\n\n"
          f"medians of {args.runs} runs; load average: {load}")


if __name__ == "__main__":
    main()
