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

from pycore import wire
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


async def call(method: str, params: dict, on_event=None) -> tuple[dict, list[dict]]:
    events: list[dict] = []

    def emit(text: str) -> None:
        events.append(json.loads(text))
        if on_event:
            on_event(events[-1])

    result = await wire.start(method, json.dumps(params), emit)
    return json.loads(result), events


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
