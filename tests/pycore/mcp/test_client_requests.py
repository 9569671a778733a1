"""What a server asks of the client, against a real server on the official SDK: elicitation (a form and a
URL, accepted, declined, and put to the page as an ``elicitation`` event of the running chat.run, answered
with ``mcp.elicitation_result``) and the user's roots (``mcp.set_roots``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_servers import sdk_server
from wire_calls import call

from pycore.http.replay import Recording, ReplayTransport
from pycore.mcp import ClientSession, MCPRPCError
from pycore.methods import _provider


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    server, url = sdk_server("http")
    with server:
        yield url


async def test_a_form_is_answered_with_the_users_values_and_the_schemas_defaults(url: str) -> None:
    asked: list[dict[str, Any]] = []

    async def ask(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}  # guests, time and window left to their defaults

    async with ClientSession(url, on_elicit=ask) as mcp:
        await mcp.list_tools()
        assert (await mcp.call_tool("book", {"restaurant": "Kiln"})).text() == \
            "booked 2 at 19:00 for Ada, window False"
    [params] = asked
    assert params["message"] == "Book a table at Kiln?"
    assert params["requestedSchema"]["properties"]["time"]["enum"] == ["18:00", "19:00", "20:00"]


async def test_decline_cancel_and_a_url_reach_the_server_as_the_user_chose(url: str) -> None:
    answers = iter([{"action": "decline"}, {"action": "cancel"}, {"action": "accept"}])
    modes: list[str] = []

    async def ask(params: dict[str, Any]) -> dict[str, Any]:
        modes.append(params.get("mode", "form"))
        return next(answers)

    async with ClientSession(url, on_elicit=ask) as mcp:
        await mcp.list_tools()
        assert (await mcp.call_tool("book", {"restaurant": "Kiln"})).text() == "not booked (decline)"
        assert (await mcp.call_tool("book", {"restaurant": "Kiln"})).text() == "not booked (cancel)"
        assert (await mcp.call_tool("pay", {"amount": 12})).text() == "payment accept"
    assert modes == ["form", "form", "url"]


async def test_without_a_way_to_ask_the_question_is_refused_by_name(url: str) -> None:
    async with ClientSession(url) as mcp:
        await mcp.list_tools()
        with pytest.raises(MCPRPCError, match="client does not support elicitation/create"):
            await mcp.call_tool("book", {"restaurant": "Kiln"})


# ------------------------------------------------------------------ over the wire, as the page sees it

KEY = "sk-elicitation-wire-0000"


def fake_turns(*turns: Any) -> list[Recording]:
    from pycore.adapters.fake import encode_turn

    return [Recording(encode_turn(turn), content_type="application/x-ndjson") for turn in turns]


async def test_the_page_gets_the_question_as_an_event_and_a_wrong_answer_back_as_a_named_error(url: str) -> None:
    from pycore.messages import ToolCallPart

    await call("mcp.connect", {"id": "shop", "url": url, "transport": "streamable-http"})
    replies: list[asyncio.Task] = []
    errors: list[str] = []

    async def answer(question: dict) -> None:
        try:
            await call("mcp.elicitation_result", {"id": question["id"], "action": "accept",
                                                  "content": {"name": "Ada", "guests": 40}})
        except Exception as e:  # noqa: BLE001 - the page shows this and the user corrects the form
            errors.append(str(e))
        await call("mcp.elicitation_result", {"id": question["id"], "action": "accept",
                                              "content": {"name": "Ada", "guests": 4, "window": True}})

    def on_event(event: dict) -> None:
        if event["type"] == "approval":
            replies.append(asyncio.ensure_future(call("chat.approve", {"call_id": event["call_id"],
                                                                       "decision": "allow"})))
        elif event["type"] == "elicitation":
            replies.append(asyncio.ensure_future(answer(event)))

    recordings = fake_turns([ToolCallPart(id="b1", name="book", arguments={"restaurant": "Kiln"})], ["Booked."])
    _provider.use_transport(lambda: ReplayTransport(recordings))
    try:
        result, events = await call("chat.run", {"provider": {"vendor": "fake", "api_key": KEY}, "model": "m",
                                                 "messages": [{"role": "user", "parts": [{"type": "text",
                                                                                          "text": "Book"}]}],
                                                 "tools": {"mcp": ["shop"]}}, on_event)
    finally:
        _provider.use_transport(None)
        await asyncio.gather(*replies)
        await call("mcp.disconnect", {"id": "shop"})
    assert result["stop_reason"] == "end_turn"
    [question] = [e for e in events if e["type"] == "elicitation"]
    from pycore.contract import ElicitationEvent

    assert ElicitationEvent.model_validate(question).model_dump(mode="json", exclude_none=True) == question
    assert question["server_id"] == "shop" and question["mode"] == "form"
    assert question["message"] == "Book a table at Kiln?" and "name" in question["requested_schema"]["properties"]
    assert len(errors) == 1 and "guests: at most 12" in errors[0]
    [end] = [e for e in events if e["type"] == "tool_end"]
    assert end["content"] == [{"type": "text", "text": "booked 4 at 19:00 for Ada, window True"}]


async def test_a_question_outside_a_run_is_cancelled_and_an_unknown_answer_is_refused(url: str) -> None:
    from pycore.agent.pending import UnknownCallError

    with pytest.raises(UnknownCallError):
        await call("mcp.elicitation_result", {"id": "nobody", "action": "decline"})
    await call("mcp.connect", {"id": "shop2", "url": url, "transport": "streamable-http"})
    try:
        from pycore.methods._state import STATE

        session = STATE.connections["shop2"].session
        assert (await session.call_tool("book", {"restaurant": "Kiln"})).text() == "not booked (cancel)"
    finally:
        await call("mcp.disconnect", {"id": "shop2"})


async def test_roots_are_the_users_none_by_default_and_a_change_is_seen_at_the_next_ask(url: str) -> None:
    await call("mcp.connect", {"id": "files", "url": url, "transport": "streamable-http"})
    try:
        from pycore.methods._state import STATE

        session = STATE.connections["files"].session
        assert (await session.call_tool("roots", {})).text() == "no roots"
        await call("mcp.set_roots", {"roots": [{"uri": "file:///home/ada/notes", "name": "notes"}]})
        assert (await session.call_tool("roots", {})).text() == "notes=file:///home/ada/notes"
        with pytest.raises(ValueError, match="uri"):
            await call("mcp.set_roots", {"roots": [{"uri": "https://example.com/"}]})
    finally:
        await call("mcp.set_roots", {"roots": []})
        await call("mcp.disconnect", {"id": "files"})


async def run_with_sampling(url: str, server_id: str, on_sampling, turns: list[Any], limits: dict | None = None):
    """chat.run with the fake vendor: the model calls ``summarize``, which asks the model (sampling); the page's
    answers to the ``sampling`` events come from ``on_sampling(event) -> params of mcp.sampling_answer``."""
    from pycore.messages import ToolCallPart

    await call("mcp.connect", {"id": server_id, "url": url, "transport": "streamable-http"})
    replies: list[asyncio.Task] = []

    def on_event(event: dict) -> None:
        if event["type"] == "approval":
            replies.append(asyncio.ensure_future(call("chat.approve", {"call_id": event["call_id"],
                                                                       "decision": "allow"})))
        elif event["type"] == "sampling":
            replies.append(asyncio.ensure_future(call("mcp.sampling_answer", {"id": event["id"],
                                                                              **on_sampling(event)})))

    recordings = fake_turns([ToolCallPart(id="s1", name="summarize", arguments={"text": "a long story"})], *turns)
    transport = ReplayTransport(recordings)
    _provider.use_transport(lambda: transport)
    try:
        result, events = await call("chat.run", {"provider": {"vendor": "fake", "api_key": KEY}, "model": "m",
                                                 "messages": [{"role": "user", "parts": [{"type": "text",
                                                                                          "text": "Sum up"}]}],
                                                 "tools": {"mcp": [server_id]}, "limits": limits or {}}, on_event)
    finally:
        _provider.use_transport(None)
        await asyncio.gather(*replies)
        await call("mcp.disconnect", {"id": server_id})
    return result, events, transport


async def test_sampling_is_shown_run_as_edited_within_the_budget_and_sent_only_when_the_user_says(url: str) -> None:
    def answer(event: dict) -> dict:
        if event["stage"] == "request":
            return {"action": "approve", "messages": [{"role": "user", "text": "Summarize, in French: a long story"}]}
        return {"action": "send"}

    result, events, transport = await run_with_sampling(url, "s-ok", answer, [["Une longue histoire."], ["Done."]],
                                                        {"sampling_max_tokens": 300})
    assert result["stop_reason"] == "end_turn"
    request, answered = [e for e in events if e["type"] == "sampling"]
    from pycore.contract import SamplingEvent

    for event in (request, answered):  # as the contract declares them (extra fields are refused)
        declared = SamplingEvent.model_validate(event).model_dump(mode="json")
        assert all(declared[name] == value for name, value in event.items())
    assert request["stage"] == "request" and request["server_id"] == "s-ok" and request["model"] == "m"
    assert request["messages"] == [{"role": "user", "text": "Summarize: a long story", "images": []}]
    assert request["input_chars"] == len("Summarize: a long story") + len("Be brief.")  # all the text it sends
    assert request["system_prompt"] == "Be brief." and request["model_hints"] == ["claude-haiku"]
    assert request["max_tokens"] == 300  # the server asked for 5,000; the user's budget is 300
    assert answered["stage"] == "result" and answered["text"] == "Une longue histoire."
    sampled = json.loads(transport.requests[1].body)  # the model's second request is the server's, as edited
    assert "Summarize, in French: a long story" in json.dumps(sampled) and "Be brief." in json.dumps(sampled)
    assert sampled["max_tokens"] == 300
    [end] = [e for e in events if e["type"] == "tool_end"]
    assert end["content"][0]["text"] == "summary by m (endTurn): Une longue histoire."


@pytest.mark.parametrize("stage", ["request", "result"])
async def test_sampling_denied_at_either_stage_tells_the_server_the_user_said_no(url: str, stage: str) -> None:
    def answer(event: dict) -> dict:
        return {"action": "deny"} if event["stage"] == stage else {"action": "approve"}

    turns = [["Never sent."], ["Done."]] if stage == "result" else [["Done."]]
    result, events, _ = await run_with_sampling(url, f"s-{stage}", answer, turns)
    assert result["stop_reason"] == "end_turn"
    [end] = [e for e in events if e["type"] == "tool_end"]
    assert end["is_error"] and "the user" in end["content"][0]["text"]
    assert "Never sent." not in json.dumps(end)


async def test_a_sampling_request_with_no_conversation_going_is_denied_not_run(url: str) -> None:
    await call("mcp.connect", {"id": "lonely", "url": url, "transport": "streamable-http"})
    try:
        from pycore.methods._state import STATE

        session = STATE.connections["lonely"].session
        with pytest.raises(MCPRPCError, match="-1: sampling needs a conversation in progress"):
            await session.call_tool("summarize", {"text": "x"})  # the SDK's server passes our refusal on
    finally:
        await call("mcp.disconnect", {"id": "lonely"})
