"""``python -m server``: run the relay on loopback and print the page's URL."""

from __future__ import annotations

import argparse
import secrets
import socket
import sys
from pathlib import Path

import uvicorn

from server.app import create_app

LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m server", description="Serve Orizuru and its MCP relay.")
    parser.add_argument("--dist", type=Path, default=Path("dist"), help="the built site (default: dist)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--dangerously-bind-non-loopback", action="store_true",
                        help="allow --host to be something other than loopback")
    args = parser.parse_args(argv)
    if args.host not in LOOPBACK and not args.dangerously_bind_non_loopback:
        parser.error(f"refusing to bind {args.host}: only loopback unless --dangerously-bind-non-loopback")
    if not (args.dist / "index.html").is_file():
        parser.error(f"{args.dist} has no index.html; run `python3 build.py build` first")
    token = secrets.token_urlsafe(32)
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    port = sock.getsockname()[1]
    host = f"[{args.host}]" if family == socket.AF_INET6 else args.host
    # The token travels in the fragment, which browsers never send to a server.
    print(f"Orizuru is running at http://{host}:{port}/#token={token}", flush=True)
    config = uvicorn.Config(create_app(args.dist), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
