"""A stdio MCP server for the relay's fault and security tests (run as a child by the relay under test)."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="relay-test-fake", version="0.0.1")


@server.tool()
def whoami() -> str:
    """argv (without the interpreter), environment and pid, as JSON."""
    return json.dumps({"argv": sys.argv[1:], "env": dict(os.environ), "pid": os.getpid()})


@server.tool()
def echo(message: str) -> str:
    return message


@server.tool()
def crash() -> str:
    """Exit at once, without answering."""
    os._exit(3)


@server.tool()
def bad_stdout() -> str:
    """Write a line that is not JSON-RPC to the protocol pipe, then answer normally."""
    os.write(_wire_fd(), b"this is not json-rpc\n")
    return "ok"


def _wire_fd() -> int:
    """The SDK diverts fd 1 to stderr and keeps the real stdout pipe on a private duplicate; find it."""
    links = {fd: os.readlink(f"/proc/self/fd/{fd}") for fd in map(int, os.listdir("/proc/self/fd"))
             if os.path.exists(f"/proc/self/fd/{fd}")}
    taken = {links.get(0), links.get(1), links.get(2)}
    return next(fd for fd, link in sorted(links.items()) if fd > 2 and link.startswith("pipe:") and link not in taken
                and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY)


@server.tool()
def spam_stderr(megabytes: int) -> str:
    """Write that many megabytes to stderr, in long and short lines."""
    line = b"x" * 10_000 + b"\n" + b"short line\n" * 10
    for _ in range(megabytes * 1_000_000 // len(line)):
        os.write(2, line)
    return "done"


@server.tool()
def grandchild(ignore_term: bool = False) -> str:
    """Start a long-lived grandchild in this process group; return its pid."""
    script = f"import signal, time\nif {ignore_term!r}: signal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(300)"
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    return str(proc.pid)


if __name__ == "__main__":
    server.run()
