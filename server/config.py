"""The relay's configuration: which stdio servers may run, and the limits they run under.

Only this file's loader can name a command (R6): requests carry a server *name*, never argv.
The config file has the Claude Desktop form::

    {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}, "cwd": "/tmp"}}}
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
REPO_ROOT = Path(__file__).resolve().parent.parent


class ConfigError(ValueError):
    """The config file is missing, unreadable or not in the expected form."""


@dataclass(frozen=True)
class ServerSpec:
    """One configured stdio server: an argv list, its extra environment and working directory."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]


@dataclass(frozen=True)
class Limits:
    """Resource limits; the defaults suit one person's browser tabs."""

    max_sessions: int = 32
    max_body_bytes: int = 4 * 1024 * 1024
    idle_timeout: float = 600.0
    stderr_lines: int = 200
    stderr_line_bytes: int = 2048


@dataclass(frozen=True)
class FrontLimits:
    """The HTTP front's limits (server/front.py): per request head, and on open connections altogether.

    A browser sends a few kilobytes of head at once and holds at most six connections to a host.
    """

    max_head_bytes: int = 64 * 1024
    head_timeout: float = 10.0
    max_connections: int = 256


def bundled() -> dict[str, ServerSpec]:
    """The config used without ``--config``: our own demo server, run by this same interpreter."""
    demo = ServerSpec("demo", sys.executable, ("-m", "server.demo"), cwd=str(REPO_ROOT))
    return {demo.name: demo}


def load(path: Path) -> dict[str, ServerSpec]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from e
    return parse(raw, base=path.resolve().parent)


def parse(raw: Any, base: Path | None = None) -> dict[str, ServerSpec]:
    servers = raw.get("mcpServers") if isinstance(raw, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError('expected {"mcpServers": {name: {command, args, env, cwd}}}')
    return {name: _server(name, entry, base) for name, entry in servers.items()}


def _server(name: str, entry: Any, base: Path | None) -> ServerSpec:
    if not NAME_PATTERN.fullmatch(name):
        raise ConfigError(f"server name {name!r} must match {NAME_PATTERN.pattern}")
    if not isinstance(entry, dict):
        raise ConfigError(f"{name}: expected an object")
    if "url" in entry:
        raise ConfigError(f"{name}: a remote server is not a command; give the page its URL, "
                          "or start the relay with --allow-remote URL if it sends no CORS headers")
    command, args, env, cwd = entry.get("command"), entry.get("args", []), entry.get("env", {}), entry.get("cwd")
    if not isinstance(command, str) or not command:
        raise ConfigError(f"{name}: 'command' must be a non-empty string")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{name}: 'args' must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ConfigError(f"{name}: 'env' must map strings to strings")
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError(f"{name}: 'cwd' must be a string")
    if cwd is not None and base is not None:
        cwd = str((base / cwd).resolve())
    return ServerSpec(name, command, tuple(args), dict(env), cwd)
