"""A stdio MCP server for the relay's fault and security tests (run as a child by the relay under test);
``fake_server.py modern`` speaks only MCP 2026-07-28, ``fake_server.py legacy`` only the handshake revisions."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

sys.path.append(str(Path(__file__).resolve().parents[1] / "pycore" / "mcp"))
import stdio_eras  # noqa: E402

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
def grandchild(ignore_term: bool = False, new_session: bool = False) -> str:
    """Start a long-lived grandchild, in this process group or (``new_session``) after setsid(); return its pid."""
    script = f"import signal, time\nif {ignore_term!r}: signal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(300)"
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            start_new_session=new_session)
    return str(proc.pid)


DAEMON = """\
import os, sys, time
os.setsid()
pid = os.fork()
if pid:
    print(pid, flush=True)
    os._exit(0)
devnull = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(devnull, fd)
time.sleep(300)
"""


@server.tool()
def daemon() -> str:
    """Daemonize the classic way (setsid, fork, the middle exits): the daemon is orphaned at once; return its pid."""
    proc = subprocess.Popen([sys.executable, "-c", DAEMON], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    pid = proc.stdout.readline().strip().decode()
    proc.wait()
    return pid


if __name__ == "__main__":
    if sys.argv[1:] in (["modern"], ["legacy"]):  # a server that speaks only MCP 2026-07-28, or only the older ones
        stdio_eras.serve(server, sys.argv[1])
    else:
        server.run()
