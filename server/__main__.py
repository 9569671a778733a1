"""``python -m server``: run the relay on loopback and print the page's URL."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import logging
import secrets
import socket
import sys
from pathlib import Path
from typing import Literal, TypedDict

import uvicorn
from starlette.applications import Starlette

from server import config, reaper
from server.app import create_app
from server.remote import RemoteBridge, RemoteConfigError, RemoteLimits, parse_targets
from server.security import Policy, canonical_origin
from server.sessions import Relay
from server.webdav import WebDavBridge, parse_folders

LOOPBACK = {"127.0.0.1", "::1", "localhost"}
OMIT_TOKEN_WARNING = """\
WARNING: --dangerously-omit-token: /mcp, /sse, /api, /remote and /webdav accept requests WITHOUT a token.
Any local program, and any web page you allow with --allow-origin, can start the configured servers.
Use this only for clients that cannot send headers (such as the MCP conformance suite)."""


class FastPaths(TypedDict):
    """The uvicorn.Config arguments that choose its event loop and HTTP parser."""

    loop: Literal["asyncio"]
    http: Literal["httptools", "h11"]


def fast_paths() -> FastPaths:
    """uvicorn's HTTP parser: httptools (C) where installed, else h11; the event loop stays asyncio's.

    httptools is in the ``server`` extra; bench/relay measures what it saves per call. uvloop is left
    out on purpose: its subprocesses get a socketpair instead of a pipe as stdin and inherit uvloop's
    own descriptors, which changes what a stdio server is handed.
    """
    return {"loop": "asyncio", "http": "httptools" if importlib.util.find_spec("httptools") is not None else "h11"}


class FrontDoor(TypedDict, total=False):
    """The uvicorn.Config arguments for the HTTP parser, with the relay's caps on request heads."""

    loop: Literal["asyncio"]
    http: type[asyncio.Protocol] | Literal["h11"]
    h11_max_incomplete_event_size: int


def front_door(paths: FastPaths, limits: config.FrontLimits | None = None) -> FrontDoor:
    """httptools with the relay's guard (server/front.py); without httptools, h11 with h11's head cap only.

    Not ``limit_concurrency``: it counts half-sent connections and then answers 503 to every new request,
    so a flood of them would keep the page out rather than the flood (see server/front.py).
    """
    limits = limits or config.FrontLimits()
    if paths["http"] == "httptools":
        from server.front import guarded_httptools

        return {"loop": paths["loop"], "http": guarded_httptools(limits)}
    logging.getLogger("orizuru.relay").warning(
        "httptools is not installed: request heads are capped at %d bytes by h11, but half-sent requests get no "
        "deadline and open connections no limit; install the relay's extra (pip install '.[server]')",
        limits.max_head_bytes)
    return {"loop": paths["loop"], "http": "h11", "h11_max_incomplete_event_size": limits.max_head_bytes}


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, argparse.ArgumentParser]:
    parser = argparse.ArgumentParser(prog="python -m server", description="Serve Orizuru and its MCP relay.")
    parser.add_argument("--dist", type=Path, default=Path("dist"), help="the built site (default: dist)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--dangerously-bind-non-loopback", action="store_true",
                        help="allow --host to be something other than loopback")
    parser.add_argument("--config", type=Path, help='stdio servers, {"mcpServers": {name: {command, args, env, cwd}}}'
                        " (default: the bundled demo server)")
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                        help="another page origin allowed to use the relay, exact match (repeatable)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="HOST:PORT",
                        help="another Host header value to accept besides the loopback names (repeatable)")
    parser.add_argument("--dangerously-omit-token", action="store_true",
                        help="accept /mcp, /sse, /api, /remote and /webdav requests without the bearer token")
    parser.add_argument("--max-sessions", type=int, default=config.Limits.max_sessions)
    parser.add_argument("--idle-timeout", type=float, default=config.Limits.idle_timeout,
                        help="seconds before an idle MCP session and its process are stopped")
    parser.add_argument("--allow-remote", action="append", default=[], metavar="[NAME=]URL",
                        help="forward /remote/NAME to this remote MCP URL, exactly (repeatable); only public "
                             "addresses are ever connected to; NAME defaults to the host")
    parser.add_argument("--allow-webdav", action="append", default=[], metavar="[NAME=]URL",
                        help="forward /webdav/NAME/ to this WebDAV sync folder (a server without CORS headers) and "
                             "the files directly in it (repeatable); only public addresses; NAME defaults to the host")
    parser.add_argument("--max-body", type=int, default=config.Limits.max_body_bytes, help="bytes (413 above)")
    return parser.parse_args(argv), parser


def build(args: argparse.Namespace, parser: argparse.ArgumentParser, port: int, token: str | None) -> Starlette:
    try:
        servers = config.load(args.config) if args.config else config.bundled()
        origins = tuple(canonical_origin(o) for o in args.allow_origin)
        remotes = parse_targets(args.allow_remote)
        folders = parse_folders(args.allow_webdav)
    except (config.ConfigError, RemoteConfigError, ValueError) as e:
        parser.error(str(e))
    limits = config.Limits(max_sessions=args.max_sessions, idle_timeout=args.idle_timeout,
                           max_body_bytes=args.max_body)
    policy = Policy.for_port(port, token, origins, tuple(args.allow_host))
    remote = RemoteBridge(remotes, RemoteLimits(max_body_bytes=args.max_body)) if remotes else None
    webdav = WebDavBridge(folders) if folders else None
    for bridge in (b for b in (remote, webdav) if b is not None):
        for target in bridge.targets.values():
            if target.url.startswith("http:"):
                print(f"WARNING: {bridge.flag} {target.url} is plain http: its traffic and credentials cross the "
                      "network unencrypted", file=sys.stderr, flush=True)
            logging.getLogger("orizuru.relay").info("%s %s -> %s", bridge.kind, target.route, target.url)
    relay = Relay(servers, limits, adopts_orphans=reaper.become_subreaper())
    return create_app(args.dist, relay, policy, remote, webdav)


def main(argv: list[str] | None = None) -> int:
    args, parser = parse_args(argv)
    if args.host not in LOOPBACK and not args.dangerously_bind_non_loopback:
        parser.error(f"refusing to bind {args.host}: only loopback unless --dangerously-bind-non-loopback")
    if not (args.dist / "index.html").is_file():
        parser.error(f"{args.dist} has no index.html; run `python3 build.py build` first")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s relay %(message)s", stream=sys.stderr)
    logging.getLogger("mcp").setLevel(logging.WARNING)
    token = secrets.token_urlsafe(32)
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(2048)  # before printing the URL: connections queue until uvicorn accepts them
    port = sock.getsockname()[1]
    app = build(args, parser, port, None if args.dangerously_omit_token else token)
    if args.dangerously_omit_token:
        print(OMIT_TOKEN_WARNING, file=sys.stderr, flush=True)
    host = f"[{args.host}]" if family == socket.AF_INET6 else args.host
    # The token travels in the fragment, which browsers never send to a server.
    print(f"Orizuru is running at http://{host}:{port}/#token={token}", flush=True)
    # No access log: the relay logs what matters (spawns, stops, refusals) itself.
    server_config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=3,
                                   **front_door(fast_paths()))
    uvicorn.Server(server_config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
