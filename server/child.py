"""One stdio MCP server process, run through the official SDK's ``stdio_client``.

The SDK does the parts that are easy to get wrong: argv list without a shell, its own process group
(``start_new_session``), an environment of only ``HOME LOGNAME PATH SHELL TERM USER`` plus the
configured ``env`` (shell functions skipped), newline-delimited JSON-RPC framing, and the shutdown
sequence close stdin -> 2 s -> SIGTERM to the group -> 2 s -> SIGKILL, shielded from cancellation.
This module adds what the relay needs around it: stderr captured into a bounded log.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field

import anyio
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, stdio_client

from server.config import ServerSpec

log = logging.getLogger("orizuru.relay")

STDERR_CHUNK = 4096


@dataclass
class ServerLog:
    """The last lines a server's processes wrote to stderr (and the relay's notes about them), bounded."""

    max_lines: int = 200
    max_line_bytes: int = 2048
    lines: deque[dict[str, object]] = field(default_factory=deque)

    def add(self, session: str, text: str, kind: str = "stderr") -> None:
        if len(text) > self.max_line_bytes:
            text = text[: self.max_line_bytes] + " …[truncated]"
        self.lines.append({"t": round(time.time(), 3), "session": session, "kind": kind, "text": text})
        while len(self.lines) > self.max_lines:
            self.lines.popleft()

    def recent(self, n: int = 50) -> list[dict[str, object]]:
        return list(self.lines)[-n:]


class _LineSplitter:
    """Feeds raw stderr bytes, yields complete lines; a line longer than the cap is cut, never buffered whole."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buffer = b""

    def feed(self, data: bytes) -> list[str]:
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        if len(self.buffer) > self.cap:
            lines.append(self.buffer)
            self.buffer = b""
        return [line.decode("utf-8", "replace").rstrip("\r") for line in lines]

    def finish(self) -> list[str]:
        rest, self.buffer = self.buffer, b""
        return [rest.decode("utf-8", "replace")] if rest else []


async def _drain_stderr(fd: int, sink: ServerLog, session: str) -> None:
    """Reads the stderr pipe until every writer (the child and its descendants) has closed it."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    pipe = os.fdopen(fd, "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    splitter = _LineSplitter(sink.max_line_bytes)
    try:
        while chunk := await reader.read(STDERR_CHUNK):
            for line in splitter.feed(chunk):
                sink.add(session, line)
        for line in splitter.finish():
            sink.add(session, line)
    finally:
        transport.close()


@asynccontextmanager
async def spawn(spec: ServerSpec, sink: ServerLog, session: str) -> AsyncIterator[TransportStreams]:
    """Starts ``spec`` and yields the SDK's (read, write) streams; on exit the process tree is gone."""
    params = StdioServerParameters(command=spec.command, args=list(spec.args), env=dict(spec.env), cwd=spec.cwd)
    read_fd, write_fd = os.pipe()
    errlog = os.fdopen(write_fd, "w")
    drain = asyncio.ensure_future(_drain_stderr(read_fd, sink, session))
    try:
        async with stdio_client(params, errlog=errlog) as streams:
            errlog.close()  # the child holds its own copy; ours would keep the pipe open forever
            yield streams
    finally:
        errlog.close()
        # A grandchild may still hold the pipe: read what is there, then stop waiting.
        with anyio.CancelScope(shield=True), anyio.move_on_after(0.5), suppress(Exception):
            await drain
        drain.cancel()
