"""The MCP registry: search it for servers by name, as the Tools panel does (``mcp.registry_search``).

The official registry (``https://registry.modelcontextprotocol.io``; any registry serving the same generic API)
answers ``GET /v0.1/servers?search=<name>&version=latest&limit=<n>`` with ``{servers: [{server, _meta}],
metadata}``, each ``server`` a ``server.json``: its ``name``, ``title``, ``description``, ``version``, the
``remotes`` it is reachable at (``streamable-http`` or ``sse``, a URL that may hold ``{variables}``) and the
``packages`` it is published as (``npm``, ``pypi``, ``oci``, … run over ``stdio``). :func:`search` asks once, only
when called (the user searched), reads at most :data:`MAX_BYTES`, and keeps of each server only what the panel
shows, as plain, bounded text: a remote with an ``http(s)`` URL (its variables filled with their defaults; one
without a default cannot be connected in one click and says so), and for a stdio package the exact
``mcpServers`` entry for the relay (``npx -y``, ``uvx``, ``docker run -i --rm``), its required environment
variables as ``<NAME>`` placeholders to fill in. Entries the registry marks deleted are left out. Nothing here
connects anything: a remote is connected by the page, through the same review and trust choices as a URL typed in.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlencode, urlsplit

from pycore.exceptions import APIConnectionError
from pycore.http import Request, Transport, default_transport, is_redirect
from pycore.mcp._base import read_message
from pycore.mcp.errors import MCPError

OFFICIAL = "https://registry.modelcontextprotocol.io"
MAX_BYTES = 2 * 1024 * 1024
LIMIT = 20  # servers asked for per search
TEXT = 500  # the longest description kept
RUNNERS = {"npm": ("npx", ["-y"]), "pypi": ("uvx", []), "oci": ("docker", ["run", "-i", "--rm"])}
_VARIABLE = re.compile(r"\{([A-Za-z0-9_]+)\}")


class RegistryError(MCPError):
    """The registry could not be asked, or its answer is not the registry API's (``mcp_error``: its sentence)."""


async def search(base: str, query: str, *, http: Transport | None = None, timeout: float = 20.0,
                 ) -> list[dict[str, Any]]:
    """The servers whose names hold ``query``, as :func:`entry` shapes them."""
    base = base.strip().rstrip("/")
    if urlsplit(base).scheme not in ("http", "https") or not urlsplit(base).netloc:
        raise RegistryError(f"{base[:200]!r} is not an http(s) URL; the official registry is {OFFICIAL}")
    url = f"{base}/v0.1/servers?" + urlencode({"search": query.strip()[:200], "version": "latest", "limit": LIMIT})
    client = http or default_transport()
    try:
        response = await client.send(Request("GET", url, {"accept": "application/json"}, None, timeout=timeout))
        if is_redirect(response) or response.status != 200:
            await response.aclose()
            raise RegistryError(f"the registry at {base} answered HTTP {response.status} to the search")
        body = await read_message(response, url, MAX_BYTES)
    except APIConnectionError as e:
        raise RegistryError(f"the registry at {base} could not be reached (it may not allow this page's origin "
                            f"in its CORS, or be down): {e}") from e
    finally:
        if http is None:
            await client.aclose()
    try:
        listed = json.loads(body).get("servers")
    except (ValueError, AttributeError):
        listed = None
    if not isinstance(listed, list):
        raise RegistryError(f"the answer of {base} is not a registry's server list (no servers)")
    return [shaped for item in listed if (shaped := entry(item)) is not None]


def entry(item: Any) -> dict[str, Any] | None:
    """One listed server as the panel shows it; ``None`` for one without a name, or marked deleted."""
    server = item.get("server") if isinstance(item, dict) else None
    if not isinstance(server, dict) or not _text(server.get("name")):
        return None
    official = (item.get("_meta") or {}).get("io.modelcontextprotocol.registry/official") \
        if isinstance(item.get("_meta"), dict) else None
    if isinstance(official, dict) and official.get("status") == "deleted":
        return None
    name = _text(server.get("name"))
    return {
        "name": name, "title": _text(server.get("title")), "description": _text(server.get("description"), TEXT),
        "version": _text(server.get("version"), 60),
        "remotes": [r for remote in _list(server.get("remotes")) if (r := _remote(remote)) is not None],
        "packages": [p for package in _list(server.get("packages")) if (p := _package(name, package)) is not None],
    }


def _remote(remote: Any) -> dict[str, Any] | None:
    if not isinstance(remote, dict) or remote.get("type") not in ("streamable-http", "sse"):
        return None
    template = _text(remote.get("url"), 2000)
    variables = _dict(remote.get("variables"))
    missing: list[str] = []

    def fill(match: re.Match[str]) -> str:
        default = (variables.get(match[1]) or {}).get("default") if isinstance(variables.get(match[1]), dict) else None
        if not isinstance(default, str) or not default:
            missing.append(match[1])
            return match[0]
        return default

    url = _VARIABLE.sub(fill, template)
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
        return None
    headers = [{"name": _text(h.get("name"), 100), "required": h.get("isRequired") is True}
               for h in _list(remote.get("headers")) if isinstance(h, dict) and _text(h.get("name"))]
    return {"type": remote["type"], "url": url, "needs": missing, "headers": headers}


def _package(name: str, package: Any) -> dict[str, Any] | None:
    if not isinstance(package, dict):
        return None
    kind, identifier = _text(package.get("registryType"), 40), _text(package.get("identifier"), 300)
    version = _text(package.get("version"), 60)
    transport = _dict(package.get("transport"))
    if not identifier or transport.get("type", "stdio") != "stdio":
        return None
    shaped: dict[str, Any] = {"registry_type": kind, "identifier": identifier, "version": version, "entry": None}
    runner = RUNNERS.get(kind)
    if runner is None:
        return shaped  # a package kind the relay has no runner for: shown, with no entry to copy
    command, args = runner
    pinned = identifier + (("==" if kind == "pypi" else ":" if kind == "oci" else "@") + version if version else "")
    required = [_text(v.get("name"), 100) for v in _list(package.get("environmentVariables"))
                if isinstance(v, dict) and v.get("isRequired") is True]
    env = {name: f"<{name}>" for name in required if name}
    arguments = [a for argument in _list(package.get("packageArguments")) for a in _argument(argument)]
    config: dict[str, Any] = {"command": command, "args": [*args, pinned, *arguments]}
    if env:
        config["env"] = env
    key = re.sub(r"[^A-Za-z0-9_-]+", "-", name.rsplit("/", 1)[-1]).strip("-")[:40] or "server"
    shaped["entry"] = {"mcpServers": {key: config}}
    return shaped


def _argument(argument: Any) -> list[str]:
    """A package argument as the command line holds it: a value the registry gives, else ``<its hint>``."""
    if not isinstance(argument, dict):
        return []
    hint = _text(argument.get("valueHint"), 60)
    value = _text(argument.get("value"), 300) or (f"<{hint}>" if hint else "")
    if argument.get("type") == "named":
        flag = _text(argument.get("name"), 100)
        return [flag, value] if flag and value else [flag] if flag else []
    return [value] if value else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value[:50] if isinstance(value, list) else []


def _text(value: Any, limit: int = 200) -> str:
    if not isinstance(value, str):
        return ""
    cleaned = "".join(ch for ch in value if ch.isprintable() or ch == " ").strip()
    return cleaned if len(cleaned) <= limit else cleaned[:limit - 1] + "…"
