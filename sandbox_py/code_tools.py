"""Code mode (issue #33): the conversation's tools, callable from the notebook's Python.

    from orizuru import tools, ToolDenied
    text = await tools.call("everything.get-sum", {"a": 1, "b": 2})
    text = await tools.everything.get_sum(a=1, b=2)       # a stub per tool: signature and docstring from its definition

The page sends, with each run, the tools this run may call (its catalog: :class:`Entry`) and the worker hands this
module a *channel* (:class:`Channel`): one request out to the page, one answer back. A call never leaves for a
server from here: the page passes it to the core, which asks the user exactly as for the model's own calls
(pycore.methods.mcp_apps, ``mcp.code_call_tool``). So nothing here is a boundary: model code may call the channel
itself, with anything; the page checks each request against the catalog it sent, and the core's approval decides.

    install(channel) -> the ``orizuru`` module (also in sys.modules)     define(catalog_json)     the run's tools

A call's value: the tool's ``structuredContent`` when it sent one, else its text (items joined by a new line), else
its content items. A denied call raises :class:`ToolDenied`; a tool's own error (``isError``) or a refused request
raises :class:`ToolError`. Results stay here unless the code prints or returns them.
"""

from __future__ import annotations

import inspect
import json
import keyword
import sys
import types
from collections.abc import Awaitable, Callable
from typing import Any, NotRequired, TypedDict

Channel = Callable[[str], Awaitable[str]]
"""Sends ``{"server", "tool", "arguments"}`` (JSON) to the page; answers ``{"result"} | {"denied"} | {"error"}``."""

JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list,
                              "object": dict, "null": type(None)}


class Entry(TypedDict):
    """One tool of the run, as the page names it for Python: ``server`` and ``tool`` are identifiers (the
    page's naming: web/sandbox/code_mode.js), ``name`` the tool's own name on its server, ``ref`` what the page
    checks when the call comes back (the server's id and that name)."""

    server: str
    tool: str
    name: str
    description: str
    inputSchema: dict[str, Any]
    ref: dict[str, str]
    outputSchema: NotRequired[dict[str, Any] | None]  # its structured result's: the stub then returns that dict


class ToolDenied(PermissionError):
    """The user said no to this call (Deny on its card), or the user's choices deny the tool."""


class ToolError(RuntimeError):
    """The tool ran and failed (``isError``), or the page refused the request (not a tool of this run)."""


def value_of(result: dict[str, Any]) -> Any:
    """What a call returns to the code: structured content, else the text, else the content items."""
    content = result.get("content") or []
    text = "\n".join(str(item.get("text", "")) for item in content if item.get("type") == "text")
    if result.get("isError"):
        raise ToolError(text or "the tool failed")
    if result.get("structuredContent") is not None:
        return result["structuredContent"]
    if all(item.get("type") == "text" for item in content):
        return text
    return content


def signature_of(schema: dict[str, Any], output: dict[str, Any] | None = None) -> inspect.Signature:
    """Keyword-only parameters from an input schema: the required ones first, the others default to None; it
    returns a dict when the tool declares an output schema (its structured content), else its text or content."""
    properties = schema.get("properties") or {}
    required = [name for name in schema.get("required") or [] if name in properties]
    optional = [name for name in properties if name not in required]
    params = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation(properties[name]),
                                **({} if name in required else {"default": None}))
              for name in [*required, *optional] if name.isidentifier() and not keyword.iskeyword(name)]
    return inspect.Signature(params, return_annotation=dict if output else Any)


def annotation(schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, dict) else None
    return JSON_TYPES.get(kind, Any) if isinstance(kind, str) else Any


def docstring_of(entry: Entry) -> str:
    """The tool's description, then each parameter's, as a docstring's Args section."""
    properties = entry["inputSchema"].get("properties") or {}
    lines = [entry["description"].strip() or f"{entry['name']} of {entry['server']}."]
    described = [(name, str(p.get("description", "")).strip()) for name, p in properties.items() if isinstance(p, dict)]
    if described:
        lines += ["", "Args:", *(f"    {name}: {text}".rstrip() for name, text in described)]
    output = entry.get("outputSchema") or {}
    returned = [(name, str(p.get("description", "")).strip()) for name, p in (output.get("properties") or {}).items()
                if isinstance(p, dict)]
    if returned:
        lines += ["", "Returns a dict:", *(f"    {name}: {text}".rstrip() for name, text in returned)]
    return "\n".join(lines)


class Tools:
    """``tools``: ``await tools.call("<server>.<tool>", {...})`` and ``tools.<server>.<tool>(...)``."""

    def __init__(self) -> None:
        self._channel: Channel | None = None
        self._entries: dict[str, Entry] = {}
        self._servers: dict[str, types.SimpleNamespace] = {}

    def define(self, catalog: list[Entry]) -> None:
        """This run's tools: the stubs are made again from them (a server gone is gone from here too)."""
        self._entries = {}
        servers: dict[str, dict[str, Any]] = {}
        for entry in catalog:
            if not (entry["server"].isidentifier() and entry["tool"].isidentifier()):
                raise ValueError(f"not Python names: {entry['server']!r}.{entry['tool']!r}")
            self._entries[f"{entry['server']}.{entry['name']}"] = entry
            self._entries[f"{entry['server']}.{entry['tool']}"] = entry
            servers.setdefault(entry["server"], {})[entry["tool"]] = self._stub(entry)
        self._servers = {name: types.SimpleNamespace(**stubs) for name, stubs in servers.items()}

    def _stub(self, entry: Entry) -> Callable[..., Awaitable[Any]]:
        signature = signature_of(entry["inputSchema"], entry.get("outputSchema"))

        async def stub(**kwargs: Any) -> Any:
            bound = signature.bind(**kwargs)  # a wrong or missing argument: TypeError here, as for any function
            return await self._send(entry, dict(bound.arguments))

        stub.__name__ = stub.__qualname__ = entry["tool"]
        stub.__doc__ = docstring_of(entry)
        stub.__signature__ = signature  # type: ignore[attr-defined]  # what help() and inspect show
        return stub

    def __getattr__(self, name: str) -> types.SimpleNamespace:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._servers[name]
        except KeyError:
            raise AttributeError(f"no server {name!r} in this run (servers: {', '.join(self._servers) or 'none'})") \
                from None

    def __dir__(self) -> list[str]:
        return sorted({*self._servers, "call", "names"})

    def names(self) -> list[str]:
        """Every tool of this run, as ``<server>.<tool>``."""
        return sorted({f"{e['server']}.{e['tool']}" for e in self._entries.values()})

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Call ``<server>.<tool>`` (the tool's own name or its Python name) with ``arguments``."""
        entry = self._entries.get(name)
        if entry is None:
            raise ToolError(f"no tool {name!r} in this run (tools: {', '.join(self.names()) or 'none'})")
        return await self._send(entry, dict(arguments or {}))

    async def _send(self, entry: Entry, arguments: dict[str, Any]) -> Any:
        if self._channel is None:
            raise ToolError("tools can be called only while a python call runs")
        request = {"server": entry["ref"]["server"], "tool": entry["ref"]["tool"], "arguments": arguments}
        answer = json.loads(await self._channel(json.dumps(request, default=str)))
        if "denied" in answer:
            raise ToolDenied(str(answer["denied"]))
        if "error" in answer:
            raise ToolError(str(answer["error"]))
        return value_of(answer["result"])


tools = Tools()


def install(channel: Channel) -> types.ModuleType:
    """The ``orizuru`` module the code imports, its calls sent through ``channel``."""
    tools._channel = channel
    module = types.ModuleType("orizuru", "Orizuru's tools in the code interpreter: `from orizuru import tools`.")
    module.tools = tools  # type: ignore[attr-defined]
    module.ToolDenied = ToolDenied  # type: ignore[attr-defined]
    module.ToolError = ToolError  # type: ignore[attr-defined]
    sys.modules["orizuru"] = module
    return module


def define(catalog: str) -> None:
    """The run's tools, as JSON text from the page (a list of :class:`Entry`)."""
    tools.define(json.loads(catalog))
