"""Whose tool a choice is for (issue "Trust boundaries" 1; SECURITY.md T-P1, and T-P3's "a changed definition
of an allowed tool asks again").

A choice names the tool's source (``mcp:<server id>``: the page's id for a server is its URL or its relay
name, never a name the server gives itself) and the tool's own name (not the name the model sees, which
may carry a prefix and changes with what else is connected). "allow" holds only for the definition it was
given for: a fingerprint of the tool's name, description, input schema and annotations.

The unit tests build tools directly; the wire tests run ``chat.run`` against two real MCP servers (the
official SDK, two processes on loopback) that offer tools of the same names.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import KEY, Calls
from wire_calls import call

from pycore.agent.approval import ApprovalPolicy, fingerprint
from pycore.agent.tools import AgentTool
from pycore.http.replay import Recording, ReplayTransport
from pycore.methods import _provider
from pycore.methods._state import STATE

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))

SERVER = Path(__file__).with_name("agent_mcp_server.py")
A, B = "mcp:url:http://a.example/mcp", "mcp:url:http://b.example/mcp"


def tool(name: str = "run_command", source: str = A, *, description: str = "Runs a command.",
         input_schema: dict[str, Any] | None = None, annotations: dict[str, Any] | None = None) -> AgentTool:
    schema = input_schema or {"type": "object", "properties": {"command": {"type": "string"}}}
    return AgentTool(name=name, description=description, input_schema=schema, handler=Calls().tool(name).handler,
                     source=source, annotations=annotations)


def allow(of: AgentTool, **extra: Any) -> dict[str, Any]:
    return {"source": of.source, "tool": of.name, "policy": "allow", "fingerprint": fingerprint(of), **extra}


# -- the policy ------------------------------------------------------------------------------------------


def test_allowing_one_servers_tool_does_not_allow_another_servers_tool_of_that_name() -> None:
    mine, theirs = tool(source=A), tool(source=B)
    policy = ApprovalPolicy([allow(mine)])
    assert policy.for_tool(mine) == "allow"
    assert policy.for_tool(theirs) == "ask"
    # nor a tool of that name from the user's Python tools or the page
    assert ApprovalPolicy([{"source": "page", "tool": "run_command", "policy": "deny"}]).for_tool(mine) == "ask"


def test_a_choice_must_name_its_source_and_the_tools_own_name() -> None:
    with pytest.raises(ValueError, match="source"):
        ApprovalPolicy({"run_command": "allow"})  # the old form: any tool of that name, from anywhere
    with pytest.raises(ValueError, match="source"):
        ApprovalPolicy([{"tool": "run_command", "policy": "allow", "fingerprint": "x"}])
    with pytest.raises(ValueError, match="'sometimes'"):
        ApprovalPolicy([{"source": A, "tool": "run_command", "policy": "sometimes"}])
    with pytest.raises(ValueError, match="fingerprint"):
        ApprovalPolicy([{"source": A, "tool": "run_command", "policy": "allow"}])


@pytest.mark.parametrize("change", [
    {"description": "Runs a command. Also mails your files to someone."},
    {"input_schema": {"type": "object", "properties": {"command": {"type": "string"}, "to": {"type": "string"}}}},
    {"annotations": {"destructiveHint": False}},
])
def test_an_allowed_tool_asks_again_when_its_definition_changes(change: dict[str, Any]) -> None:
    before = tool()
    after = tool(**change)
    assert fingerprint(after) != fingerprint(before)
    policy = ApprovalPolicy([allow(before)])
    assert policy.for_tool(before) == "allow"
    assert policy.for_tool(after) == "ask"


def test_the_fingerprint_is_of_the_definition_only() -> None:
    assert fingerprint(tool()) == fingerprint(tool())  # another handler, same definition
    reordered = tool(input_schema={"properties": {}, "type": "object"})
    assert fingerprint(reordered) == fingerprint(tool(input_schema={"type": "object", "properties": {}}))


def test_deny_and_ask_hold_whatever_the_definition() -> None:
    before, after = tool(), tool(description="changed")
    for choice in ("deny", "ask"):
        policy = ApprovalPolicy([{"source": A, "tool": "run_command", "policy": choice,
                                  "fingerprint": fingerprint(before)}])
        assert policy.for_tool(before) == choice and policy.for_tool(after) == choice


def test_remembering_always_allow_covers_that_definition_only() -> None:
    mine, theirs, changed = tool(source=A), tool(source=B), tool(source=A, description="changed")
    policy = ApprovalPolicy()
    policy.remember(mine, "allow")
    assert policy.for_tool(mine) == "allow"
    assert policy.for_tool(theirs) == "ask" and policy.for_tool(changed) == "ask"


# -- chat.run over the wire, two real servers --------------------------------------------------------------


async def run_with(two_servers: tuple[str, str], turns: list[list[Any]], policy: list[dict[str, Any]],
                   decide: dict[str, str], *, trusted: tuple[str, ...] = ()
                   ) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, dict]]:
    """``chat.run`` with both servers connected under the ids the page gives them (``url:<URL>``);
    ``turns(names)`` are the model's turns, given each server's model names; approvals answered from
    ``decide`` (call id -> decision); ``trusted``: the URLs of the servers the user marked trusted."""
    from pycore.adapters.fake import encode_turn

    url_a, url_b = two_servers
    answers: list[asyncio.Task[Any]] = []

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "approval":
            answers.append(asyncio.ensure_future(call("chat.approve", {"call_id": event["call_id"],
                                                                       "decision": decide[event["call_id"]]})))

    try:
        for url in two_servers:
            await call("mcp.connect", {"id": f"url:{url}", "url": url})
        listed = (await call("mcp.list", {}))[0]["servers"]  # the model names with both connected
        described = {server["url"]: server for server in listed}
        tools = {url: {t["original_name"]: t for t in d["tools"]} for url, d in described.items()}
        recordings = [Recording(encode_turn(turn(tools) if callable(turn) else turn),
                                content_type="application/x-ndjson") for turn in turns]
        _provider.use_transport(lambda: ReplayTransport(recordings))
        run = call("chat.run", {
            "provider": {"vendor": "fake", "api_key": KEY}, "model": "m",
            "messages": [{"role": "user", "parts": [{"type": "text", "text": "go"}]}],
            "tools": {"mcp": [f"url:{url_a}", f"url:{url_b}"], "trusted": [f"url:{url}" for url in trusted]},
            "policy": policy(tools) if callable(policy) else policy,
        }, on_event)
        # A safety net, not a measure: a run whose approval was refused would otherwise wait for ever.
        result, events = await asyncio.wait_for(run, 60)
        for answer in answers:
            assert (await answer)[0] == {}
    finally:
        _provider.use_transport(None)
        for url in two_servers:
            await call("mcp.disconnect", {"id": f"url:{url}"})
    assert STATE.connections == {}
    return result, events, tools


def choice_for(url: str, name: str, fingerprint_of: dict[str, Any], policy: str = "allow") -> dict[str, Any]:
    return {"source": f"mcp:url:{url}", "tool": name, "policy": policy, "fingerprint": fingerprint_of["fingerprint"]}


async def test_chat_run_allowing_server_a_s_tool_still_asks_for_server_b_s_tool_of_that_name(
        two_servers: tuple[str, str]) -> None:
    from pycore.messages import ToolCallPart

    url_a, url_b = two_servers
    result, events, tools = await run_with(
        two_servers,
        [lambda tools: [ToolCallPart(id="c_b", name=tools[url_b]["delete_file"]["name"], arguments={"path": "/x"})],
         ["Not deleted."]],
        lambda tools: [choice_for(url_a, "delete_file", tools[url_a]["delete_file"])],
        {"c_b": "deny"})
    assert result["stop_reason"] == "end_turn"
    [approval] = [e for e in events if e["type"] == "approval"]
    assert (approval["call_id"], approval["source"], approval["original_name"]) == (
        "c_b", f"mcp:url:{url_b}", "delete_file")
    assert approval["fingerprint"] == tools[url_b]["delete_file"]["fingerprint"]
    [end] = [e for e in events if e["type"] == "tool_end"]
    assert end["is_error"] and "declined" in end["content"][0]["text"]
    assert not [e for e in events if e["type"] == "tool_start"]


async def test_chat_run_always_covers_later_calls_of_that_servers_tool_only(two_servers: tuple[str, str]) -> None:
    from pycore.messages import ToolCallPart

    url_a, url_b = two_servers

    def name(tools: dict[str, dict], url: str) -> str:
        return str(tools[url]["delete_file"]["name"])

    result, events, _ = await run_with(
        two_servers,
        [lambda tools: [ToolCallPart(id="c1", name=name(tools, url_a), arguments={"path": "/one"})],
         lambda tools: [ToolCallPart(id="c2", name=name(tools, url_a), arguments={"path": "/two"}),
                        ToolCallPart(id="c3", name=name(tools, url_b), arguments={"path": "/three"})],
         ["Done."]],
        [], {"c1": "always", "c3": "deny"})
    assert result["stop_reason"] == "end_turn"
    assert [e["call_id"] for e in events if e["type"] == "approval"] == ["c1", "c3"]
    ends = {e["call_id"]: e for e in events if e["type"] == "tool_end"}
    assert ends["c1"]["content"] == [{"type": "text", "text": "deleted /one"}]
    assert ends["c2"]["content"] == [{"type": "text", "text": "deleted /two"}]  # not asked again
    assert ends["c3"]["is_error"]  # B's tool of that name asked, and was denied
