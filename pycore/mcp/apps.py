"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension, SEP-1865): what a tool says about its view.

A tool with ``_meta.ui.resourceUri`` (or the older flat ``_meta["ui/resourceUri"]``) names a ``ui://``
resource, an HTML document (``text/html;profile=mcp-app``) the page renders beside the tool's result in a
sandboxed frame. ``_meta.ui.visibility`` says who may call the tool: ``model`` (offered to the model), ``app``
(callable by views of the same server); both when it is absent. The client advertises the extension
(:data:`CLIENT_EXTENSION`) so servers that branch on it (the SDKs' ``client_supports_apps``) send their views.
The page does the rest: web/mcp_app/view.js.
"""

from __future__ import annotations

from typing import Any

import mcp_types as t

EXTENSION_ID = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"
CLIENT_EXTENSION: dict[str, dict[str, Any]] = {EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}}
VISIBILITIES = ("model", "app")


def ui_resource(tool: t.Tool) -> str | None:
    """The ``ui://`` URI of the tool's view, if it has one."""
    meta = tool.meta or {}
    ui = meta.get("ui")
    uri = ui.get("resourceUri") if isinstance(ui, dict) else None
    uri = uri if uri is not None else meta.get("ui/resourceUri")
    return uri if isinstance(uri, str) and uri.startswith("ui://") else None


def visibility(tool: t.Tool) -> list[str]:
    """Who may call the tool: a subset of ``["model", "app"]`` (both unless the tool says otherwise; unknown
    words are ignored, and a list of nothing known means both, as if it said nothing)."""
    ui = (tool.meta or {}).get("ui")
    said = ui.get("visibility") if isinstance(ui, dict) else None
    known = [v for v in said if v in VISIBILITIES] if isinstance(said, list) else []
    return known or list(VISIBILITIES)


def for_model(tool: t.Tool) -> bool:
    return "model" in visibility(tool)


def for_app(tool: t.Tool) -> bool:
    return "app" in visibility(tool)
