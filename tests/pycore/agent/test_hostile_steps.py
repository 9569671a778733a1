"""A hostile vendor's tool steps (issue "Trust boundaries" items 3 and 7; SECURITY.md T-P5, T-P6).

Both replay the real OpenAI recording of two parallel calls (``openai/chat-stream-parallel-tools.sse``),
modified where the test needs it and only there: T-P5 gives the second call the first one's id; T-P6
repeats the first call's two chunks for 40 calls, each with its own index and id.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agent_helpers import Calls, Run, recording

from pycore.agent.loop import MAX_CALLS_PER_STEP
from pycore.http.replay import Recording

PARALLEL = "openai/chat-stream-parallel-tools.sse"
FIRST, SECOND = "call_q2UyBRP7eXNTzAoR8lEhjc9Z", "call_b51ijcpFkDiTQG1bQzsrmtW5"


def modified(body: bytes) -> Recording:
    original = recording(PARALLEL)
    return Recording(body, status=original.status, content_type=original.content_type, chunk_size=41)


def duplicate_ids() -> Recording:
    body = recording(PARALLEL).body
    assert body.count(SECOND.encode()) == 1
    return modified(body.replace(SECOND.encode(), FIRST.encode()))


def reused_index() -> Recording:
    """The second call comes under the first one's index, with its own id and name."""
    body = recording(PARALLEL).body
    assert body.count(b'"tool_calls":[{"index":1') == 2
    return modified(body.replace(b'"tool_calls":[{"index":1', b'"tool_calls":[{"index":0'))


def many_calls(n: int) -> Recording:
    events = recording(PARALLEL).body.decode().split("\n\n")
    start = next(i for i, e in enumerate(events) if FIRST in e)
    head, call, tail = events[:start], events[start:start + 2], [e for e in events[start + 2:]
                                                                  if '"tool_calls":[{"index":1' not in e]
    calls = []
    for i in range(n):
        for event in call:
            calls.append(event.replace('"index":0,"id":"' + FIRST, f'"index":0,"id":"call_{i}')
                         .replace('"tool_calls":[{"index":0', f'"tool_calls":[{{"index":{i}'))
    return modified("\n\n".join(head + calls + tail).encode())


async def test_duplicate_call_ids_are_rekeyed_and_approve_runs_the_call_on_that_card() -> None:
    """T-P5: get_country asks, get_product_name asks; the user allows get_product_name only."""
    calls = Calls()
    tools = [calls.tool("get_country"), calls.tool("get_product_name")]
    asked: dict[str, str] = {}

    def on_event(event: dict[str, Any], run: Run) -> None:
        if event["type"] == "approval":
            asked[event["call_id"]] = event["name"]
            decision = "allow" if event["name"] == "get_product_name" else "deny"
            asyncio.get_running_loop().call_soon(run.approvals.resolve, event["call_id"], decision)

    run = Run([duplicate_ids(), "openai/chat-stream-text-usage.sse"], tools,
              policy={"get_country": "ask", "get_product_name": "ask"}, on_event=on_event)
    result = await asyncio.wait_for(run.loop.run(), 30)  # a safety net: a run must not hang
    assert result.stop_reason == "end_turn"
    assert len(asked) == 2, asked  # two approvals, two ids
    assert calls.log == [("get_product_name", {})]  # exactly the call that was allowed
    # what the page keys its cards by: the streamed starts, the kept message and the results agree, unique
    starts = [e["id"] for e in run.of("tool_call_start")]
    assistant, results = run.messages()[0], run.messages()[1]
    kept = [p["id"] for p in assistant["parts"] if p["type"] == "tool_call"]
    assert len(set(starts)) == 2 and starts == kept and set(kept) == set(asked)
    assert [p["call_id"] for p in results["parts"]] == kept
    assert kept[0] == FIRST  # the first keeps its id; the later one is re-keyed
    # the next request is valid: each result answers its own call
    sent = json.loads(run.transport.requests[1].body)
    answered = [m["tool_call_id"] for m in sent["messages"] if m["role"] == "tool"]
    assert answered == kept


async def test_a_reused_index_with_a_new_id_is_a_new_call() -> None:
    """T-P5: a vendor that reuses a call's index for the next call must not merge the two calls."""
    calls = Calls()
    run = Run([reused_index(), "openai/chat-stream-text-usage.sse"], [calls.tool("get_country"),
                                                                    calls.tool("get_product_name")])
    result = await asyncio.wait_for(run.loop.run(), 30)
    assert result.stop_reason == "end_turn"
    assistant = run.messages()[0]
    kept = [(p["id"], p["name"], p["arguments"]) for p in assistant["parts"] if p["type"] == "tool_call"]
    assert kept == [(FIRST, "get_country", {}), (SECOND, "get_product_name", {})]
    assert sorted(calls.log) == [("get_country", {}), ("get_product_name", {})]
    assert [e["id"] for e in run.of("tool_call_end")] == [FIRST, SECOND]


async def test_a_step_runs_at_most_the_cap_of_calls_and_the_rest_are_refused() -> None:
    """T-P6: 40 parallel calls in one step."""
    calls = Calls()
    run = Run([many_calls(40), "openai/chat-stream-text-usage.sse"], [calls.tool("get_country"),
                                                                calls.tool("get_product_name")])
    result = await asyncio.wait_for(run.loop.run(), 30)
    assert result.stop_reason == "end_turn"
    assert len(calls.log) == MAX_CALLS_PER_STEP == 16
    results = run.messages()[1]["parts"]
    assert len(results) == 40  # one result per call: the transcript stays valid
    refused = [p for p in results if p["is_error"]]
    assert len(refused) == 40 - MAX_CALLS_PER_STEP
    assert refused[0]["content"][0]["text"] == f"not run: at most {MAX_CALLS_PER_STEP} tool calls per step"
    assert [p["call_id"] for p in results[:MAX_CALLS_PER_STEP]] == [f"call_{i}" for i in range(MAX_CALLS_PER_STEP)]
