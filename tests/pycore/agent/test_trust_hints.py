"""Annotations are claims, not facts (issue "Trust boundaries" item 2; SECURITY.md T-P2, T-P3, T-P4).

A tool runs without asking only if the user allowed it (per server, per tool) or marked its server trusted;
hints may make a tool ask more, never less; contradictory hints ask; a tool added or changed by
``notifications/tools/list_changed`` shows in ``mcp.list`` (the Tools panel) and asks before its first run;
data read from one server going to another server's open-world tool in the same run asks.

The policy tests build tools directly; the wire tests run ``chat.run`` against real MCP servers (the official
SDK, on loopback). The model's turns there come from the fake vendor (``encode_turn``): the calls must name
the tools the servers offer.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import KEY
from test_approval_scope import SERVER, call, choice_for, run_with, tool

from pycore.agent.approval import ApprovalPolicy, default_policy
from pycore.http.replay import Recording, ReplayTransport
from pycore.methods import _provider
from pycore.methods._state import STATE

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
from mcp_servers import free_port, running  # noqa: E402

A = "mcp:url:http://a.example/mcp"

# -- T-P2: the policy ------------------------------------------------------------------------------------


@pytest.mark.parametrize("annotations", [
    {"readOnlyHint": True},
    {"readOnlyHint": True, "openWorldHint": False},
    {"readOnlyHint": True, "destructiveHint": True},  # contradictory
    {"destructiveHint": False, "idempotentHint": True},
    None,
])
def test_a_server_added_by_url_asks_whatever_its_tools_say_about_themselves(annotations: Any) -> None:
    claimed = tool("read_secret", source=A, annotations=annotations)
    assert default_policy(claimed) == "ask"
    assert ApprovalPolicy().for_tool(claimed) == "ask"


def test_a_trusted_server_runs_its_tools_unless_a_hint_asks_more() -> None:
    trusted = ApprovalPolicy(trusted=[A])
    assert trusted.for_tool(tool("read", source=A, annotations={"readOnlyHint": True})) == "allow"
    assert trusted.for_tool(tool("plain", source=A)) == "allow"
    assert trusted.for_tool(tool("rm", source=A, annotations={"destructiveHint": True})) == "ask"
    contradictory = {"readOnlyHint": True, "destructiveHint": True}
    assert trusted.for_tool(tool("both", source=A, annotations=contradictory)) == "ask"
    # trust is per server: another server's tool still asks
    assert trusted.for_tool(tool("read", source="mcp:url:http://b.example/mcp",
                                 annotations={"readOnlyHint": True})) == "ask"
    # the user's own per-tool choice wins over trust
    plain = tool("plain", source=A)
    assert ApprovalPolicy([{"source": A, "tool": "plain", "policy": "ask"}], trusted=[A]).for_tool(plain) == "ask"


def test_python_and_page_tools_still_run() -> None:
    assert default_policy(tool("mine", source="python:set")) == "allow"
    assert default_policy(tool("page_tool", source="page")) == "allow"


# -- over the wire, real servers ---------------------------------------------------------------------------


async def test_chat_run_asks_for_a_read_only_tool_until_its_server_is_trusted(two_servers: tuple[str, str]) -> None:
    from pycore.messages import ToolCallPart

    url_a, _ = two_servers

    def turn(tools: dict[str, dict]) -> list[Any]:
        return [ToolCallPart(id="w1", name=tools[url_a]["get_weather"]["name"], arguments={"location": "Oslo"})]

    listed = None
    result, events, tools = await run_with(two_servers, [turn, ["Done."]], [], {"w1": "deny"})
    listed = tools[url_a]["get_weather"]
    assert listed["policy"] == "ask"  # what the Tools panel shows before the user chooses
    assert [e["call_id"] for e in events if e["type"] == "approval"] == ["w1"]
    result, events, _ = await run_with(two_servers, [turn, ["Done."]], [], {}, trusted=(url_a,))
    assert result["stop_reason"] == "end_turn"
    assert not [e for e in events if e["type"] == "approval"]
    [end] = [e for e in events if e["type"] == "tool_end"]
    assert not end["is_error"]


async def test_data_from_one_server_to_another_servers_open_world_tool_asks_and_says_why(
        two_servers: tuple[str, str]) -> None:
    """T-P4: both tools allowed by the user; the second server's tool gets the first one's output."""
    from pycore.messages import ToolCallPart

    url_a, url_b = two_servers
    result, events, _ = await run_with(
        two_servers,
        [lambda tools: [ToolCallPart(id="read", name=tools[url_a]["get_weather"]["name"],
                                     arguments={"location": "Oslo"})],
         lambda tools: [ToolCallPart(id="send", name=tools[url_b]["delete_file"]["name"],
                                     arguments={"path": "Oslo 21.5"}),
                        ToolCallPart(id="closed", name=tools[url_b]["get_weather"]["name"],
                                     arguments={"location": "Bergen"}),
                        ToolCallPart(id="same", name=tools[url_a]["delete_file"]["name"],
                                     arguments={"path": "/tmp/x"})],
         ["Done."]],
        lambda tools: [choice_for(url, name, tools[url][name]) for url in two_servers
                       for name in ("get_weather", "delete_file")],
        {"send": "deny"})
    assert result["stop_reason"] == "end_turn"
    [approval] = [e for e in events if e["type"] == "approval"]
    # B's open-world tool asks, naming A; B's closed-world tool and A's own tool run as allowed
    assert approval["call_id"] == "send"
    assert approval["reason"] == {"kind": "cross_server", "from": [f"mcp:url:{url_a}"]}
    ends = {e["call_id"]: e for e in events if e["type"] == "tool_end"}
    assert ends["send"]["is_error"] and not ends["closed"]["is_error"] and not ends["same"]["is_error"]


async def test_a_tool_added_by_list_changed_is_listed_and_asks_before_its_first_run() -> None:
    """T-P3: even on a trusted server, and even though the new tool calls itself read-only."""
    from pycore.adapters.fake import encode_turn
    from pycore.messages import ToolCallPart

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server_id = f"url:{url}"
    with running([sys.executable, str(SERVER), str(port)], port):
        try:
            await call("mcp.connect", {"id": server_id, "url": url})

            async def run(turns: list[list[Any]], decide: dict[str, str]) -> list[dict[str, Any]]:
                answers: list[asyncio.Task[Any]] = []

                def on_event(event: dict[str, Any]) -> None:
                    if event["type"] == "approval":
                        answers.append(asyncio.ensure_future(call("chat.approve", {
                            "call_id": event["call_id"], "decision": decide[event["call_id"]]})))

                recordings = [Recording(encode_turn(turn), content_type="application/x-ndjson") for turn in turns]
                _provider.use_transport(lambda: ReplayTransport(recordings))
                _, events = await asyncio.wait_for(call("chat.run", {
                    "provider": {"vendor": "fake", "api_key": KEY}, "model": "m",
                    "messages": [{"role": "user", "parts": [{"type": "text", "text": "go"}]}],
                    "tools": {"mcp": [server_id], "trusted": [server_id]}}, on_event), 60)
                for answer in answers:
                    await answer
                return events

            events = await run([[ToolCallPart(id="g", name="grow", arguments={"name": "later"})], ["Grown."]], {})
            assert not [e for e in events if e["type"] == "approval"]  # trusted server, tools known at connect
            for _ in range(100):  # the client re-lists after a short debounce
                listed = (await call("mcp.list", {}))[0]["servers"][0]["tools"]
                if "later" in [t["original_name"] for t in listed]:
                    break
                await asyncio.sleep(0.05)
            [later] = [t for t in listed if t["original_name"] == "later"]
            assert later["policy"] == "ask" and later["new"] is True
            events = await run([[ToolCallPart(id="l1", name="later", arguments={})], ["Ran."]], {"l1": "allow"})
            assert [e["call_id"] for e in events if e["type"] == "approval"] == ["l1"]
            assert [e["content"] for e in events if e["type"] == "tool_end"] == [[{"type": "text",
                                                                                  "text": "later ran"}]]
        finally:
            _provider.use_transport(None)
            await call("mcp.disconnect", {"id": server_id})
    assert STATE.connections == {}
