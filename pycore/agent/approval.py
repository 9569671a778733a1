"""Who may run a tool: ``allow`` (runs at once), ``ask`` (the user decides each call), ``deny``.

The user's choices. A choice is for one tool of one source, never for a name:

- ``source``: where the tool comes from, as :class:`~pycore.agent.tools.AgentTool` says: ``mcp:<server id>``
  (the page's id for a server is ``url:<the URL the user added>`` or ``relay:<the relay's name for it>``,
  never a name the server gives itself), ``python:<set id>`` or ``page``;
- ``tool``: the tool's own name in that source, not the name the model sees (that one may carry a
  prefix, and changes with what else is connected);
- ``policy``: ``allow``, ``ask`` or ``deny``;
- ``fingerprint``: required with ``allow``: :func:`fingerprint` of the definition the user allowed. When the
  tool's definition changes (its name, description, input schema or annotations), the ``allow`` no
  longer holds and the tool asks again. ``ask`` and ``deny`` hold whatever the definition.

So "always allow" for one server's tool never lets another server's tool of the same name run, nor the
same tool once it says something else about itself.

During a run, the user's answer to an approval is ``allow`` (this call), ``deny`` (this call) or ``always``
(this call, and :meth:`ApprovalPolicy.remember` allows this definition of this tool of this source for
the rest of the run; the page keeps the choice for later runs).

A *trusted* server (``trusted``: the sources of the servers the user marked trusted in the Tools panel;
off by default) is the user saying "run this server's tools without asking".

The rule. An MCP tool runs without asking only if the user allowed it (this tool of this server, this
definition) or marked its server trusted. Everything else asks. Annotations (``readOnlyHint``,
``destructiveHint``, ``openWorldHint``, ...) are the server's claims, not facts: they may make a tool
ask *more*, never less. So, when the user has made no choice for the tool:

- a tool of a server that is not trusted asks, whatever its hints say (``readOnlyHint: true`` included);
- a tool of a trusted server runs, unless it says ``destructiveHint: true`` (contradictory hints,
  read-only *and* destructive, included) or it was added or changed since the server was connected
  (``AgentTool.changed``: ``notifications/tools/list_changed`` brought it): those ask.

A per-tool choice wins over trust and hints (the user chose for that definition: ``ask``, ``deny``, or
``allow`` with its fingerprint). One more ask is the loop's (:mod:`pycore.agent.loop`): in one run, a call
of an MCP tool whose ``openWorldHint`` is not ``false`` asks, even if allowed, once another server's tool
results have entered the conversation (data read from one server could leave through another).

Python tools the user wrote in the app, and the page's own JavaScript tools: ``allow`` by default.

A ``deny`` tool is not offered to the model; a call to it anyway gets an ``is_error`` result.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pycore.agent.pending import Pending
from pycore.agent.tools import AgentTool

Policy = Literal["ask", "allow", "deny"]
POLICIES: tuple[Policy, ...] = ("ask", "allow", "deny")


def default_policy(tool: AgentTool, *, trusted: bool = False) -> Policy:
    """The policy when the user made no choice for the tool (the module's docstring: the rule)."""
    if not tool.source.startswith("mcp:"):
        return "allow"
    if not trusted or tool.changed or hints_ask(tool.annotations):
        return "ask"
    return "allow"


def hints_ask(annotations: Mapping[str, Any] | None) -> bool:
    """Whether the tool's hints ask for more care: it says it is destructive (read-only too, or not)."""
    return (annotations or {}).get("destructiveHint") is True


def fingerprint(tool: AgentTool) -> str:
    """SHA-256 (hex) of the tool's definition: its own name, description, input schema and annotations
    (as canonical JSON: keys sorted, so the order a server lists them in does not count)."""
    definition = {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema,
                  "annotations": tool.annotations or {}}
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Choice:
    source: str
    tool: str
    policy: Policy
    fingerprint: str | None = None

    @classmethod
    def parse(cls, entry: Any) -> Choice:
        if not isinstance(entry, Mapping):
            raise ValueError(f"a choice is {{source, tool, policy, fingerprint?}}, not {entry!r}")
        source, tool, policy = entry.get("source"), entry.get("tool"), entry.get("policy")
        if not isinstance(source, str) or not source or not isinstance(tool, str) or not tool:
            raise ValueError(f"a choice names its tool's source and the tool's own name: {dict(entry)!r}")
        if policy not in POLICIES:
            raise ValueError(f"policy for tool {tool!r} of {source} is {policy!r}; expected one of "
                             f"{', '.join(POLICIES)}")
        given = entry.get("fingerprint")
        if policy == "allow" and (not isinstance(given, str) or not given):
            raise ValueError(f"allowing tool {tool!r} of {source} needs the fingerprint of the definition "
                             "the user allowed")
        return cls(source, tool, policy, given if isinstance(given, str) else None)


class ApprovalPolicy:
    """The user's choices (per source and tool, see the module's docstring) over the defaults; ``trusted``:
    the sources (``mcp:<server id>``) of the servers the user marked trusted."""

    def __init__(self, choices: Iterable[Mapping[str, Any] | Choice] | None = None, *,
                 trusted: Iterable[str] = ()) -> None:
        self.trusted = frozenset(trusted)
        if isinstance(choices, Mapping):
            raise ValueError("choices are a list of {source, tool, policy, fingerprint?}; a choice by a bare "
                             "tool name would cover every tool of that name, from any source")
        self.choices: dict[tuple[str, str], Choice] = {}
        for entry in choices or ():
            choice = entry if isinstance(entry, Choice) else Choice.parse(entry)
            self.choices[(choice.source, choice.tool)] = choice

    def for_tool(self, tool: AgentTool) -> Policy:
        choice = self.choices.get((tool.source, tool.name))
        if choice is None:
            return default_policy(tool, trusted=tool.source in self.trusted)
        if choice.policy == "allow" and choice.fingerprint != fingerprint(tool):
            return "ask"  # allowed as it was; it has changed since
        return choice.policy

    def remember(self, tool: AgentTool, policy: Policy) -> None:
        """The user's choice for this tool of this source, as it is defined now."""
        self.choices[(tool.source, tool.name)] = Choice(tool.source, tool.name, policy, fingerprint(tool))


def crossing(tool: AgentTool, read_from: Iterable[str]) -> dict[str, Any] | None:
    """Why a call of ``tool`` asks although allowed, after results of the sources ``read_from`` were read (by this
    run, or by the code making the call): another server's results, and the tool may reach the open world (its
    ``openWorldHint`` is not ``false``); ``None`` if that is not so."""
    if not tool.source.startswith("mcp:") or (tool.annotations or {}).get("openWorldHint") is False:
        return None
    others = sorted(set(read_from) - {tool.source})
    return {"kind": "cross_server", "from": others} if others else None


async def ask_user(approvals: Pending, emit: Callable[[dict[str, Any]], None], *, step: int, call_id: str, name: str,
                   tool: AgentTool, arguments: dict[str, Any], reason: dict[str, Any] | None = None) -> str:
    """The one way the core asks the user whether a tool may run, whoever wants it run (the model in the loop, an
    MCP App view through ``mcp.app_call_tool``): the wait is registered before the ``approval`` event goes out, so
    the answer (``chat.approve``) can never come first; the event names who asks (``source``), the tool's own name,
    the arguments and, where there is one, why it asks although allowed. Resolves to ``allow``, ``deny`` or
    ``always``; what ``always`` also means is the caller's (the loop remembers it for the run)."""
    from pycore.contract import ApprovalEvent, CrossServerReason, to_wire

    answer = approvals.expect(call_id)
    emit(to_wire(ApprovalEvent(step=step, call_id=call_id, name=name, original_name=tool.name, arguments=arguments,
                               source=tool.source, fingerprint=fingerprint(tool),
                               reason=CrossServerReason.model_validate(reason) if reason else None)))
    decision = await answer
    return "allow" if decision is True else str(decision) if decision in ("allow", "deny", "always") else "deny"
