"""Who may run a tool: ``allow`` (runs at once), ``ask`` (the user decides each call), ``deny``.

Defaults, when the user has not chosen:

- MCP tools follow their annotations (``readOnlyHint``, ``destructiveHint``, ``openWorldHint``):
  a tool that says it is read-only and does not say it reaches the open world runs (``allow``);
  every other MCP tool asks. Annotations are the server's claims, so a server can only make its
  tools *ask* more by them, never skip the user for a tool that writes.
- Python tools the user wrote in the app, and the page's own JavaScript tools: ``allow``.

A ``deny`` tool is not offered to the model; a call to it anyway gets an ``is_error`` result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pycore.agent.tools import AgentTool

Policy = Literal["ask", "allow", "deny"]
POLICIES: tuple[Policy, ...] = ("ask", "allow", "deny")


def default_policy(tool: AgentTool) -> Policy:
    if not tool.source.startswith("mcp:"):
        return "allow"
    return policy_from_annotations(tool.annotations)


def policy_from_annotations(annotations: Mapping[str, Any] | None) -> Policy:
    hints = annotations or {}
    read_only = hints.get("readOnlyHint") is True
    open_world = hints.get("openWorldHint") is True
    return "allow" if read_only and not open_world else "ask"


class ApprovalPolicy:
    """The user's choices (by the name the model sees, or the tool's own name) over the defaults."""

    def __init__(self, choices: Mapping[str, str] | None = None) -> None:
        self.choices: dict[str, Policy] = {}
        for name, choice in (choices or {}).items():
            if choice not in POLICIES:
                raise ValueError(f"policy for tool {name!r} is {choice!r}; expected one of {', '.join(POLICIES)}")
            self.choices[name] = choice

    def for_tool(self, model_name: str, tool: AgentTool) -> Policy:
        for key in (model_name, tool.name):
            if key in self.choices:
                return self.choices[key]
        return default_policy(tool)
