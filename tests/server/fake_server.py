"""A stdio MCP server for the relay's fault and security tests (run as a child by the relay under test)."""

from __future__ import annotations

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
    """Write a line that is not JSON-RPC to stdout, then answer normally."""
    os.write(1, b"this is not json-rpc\n")
    return "ok"


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
    script = "import signal, time\nif %r: signal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(300)" % ignore_term
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    return str(proc.pid)


if __name__ == "__main__":
    server.run()
