"""MCP Apps (``io.modelcontextprotocol/ui``) in the core, against a real server on the official SDK's
``mcp.server.apps``: the client advertises the extension (so the SDK's ``client_supports_apps`` is true), a tool's
view is named in ``mcp.connect``'s description, tools kept for views (``visibility: ["app"]``) are not offered to
the model, and ``mcp.app_call_tool`` (a view's ``tools/call``) goes through the user's approval policy and the
tool's visibility. The page's side is tests/e2e/test_journeys_apps.py."""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections.abc import AsyncIterator, Iterator
from typing import Any

import mcp_types as t
import pytest
from mcp.server.apps import Apps, client_supports_apps
from mcp.server.mcpserver import Context, MCPServer
from mcp_servers import serve_asgi
from wire_calls import call

from pycore.agent.approval import fingerprint
from pycore.agent.mcp_tools import mcp_tool
from pycore.contract import error_code
from pycore.mcp.apps import for_app, for_model, ui_resource, visibility
from pycore.methods._state import STATE
from pycore.methods.mcp_apps import ViewToolRefusedError

VIEW = "ui://shop/cart.html"


def make_app(_base: str) -> Any:
    apps = Apps()
    apps.add_html_resource(VIEW, "<!doctype html><p>cart</p>")

    @apps.tool(resource_uri=VIEW)
    def show_cart(ctx: Context) -> str:
        """The cart, with a view to change it."""
        return "cart for a host with views" if client_supports_apps(ctx) else "cart as text"

    @apps.tool(resource_uri=VIEW, visibility=["app"])
    def add_item(item: str) -> str:
        """For the cart's view only."""
        return f"added {item}"

    @apps.tool(resource_uri=VIEW, visibility=["model"])
    def empty_cart() -> str:
        """For the model only."""
        return "emptied"

    server = MCPServer(name="shop", version="1.0", extensions=[apps])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return server.streamable_http_app()


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve_asgi(make_app) as (base, _):
        yield f"{base}/mcp"


@contextlib.asynccontextmanager
async def connected(url: str) -> AsyncIterator[dict[str, Any]]:
    """The shop connected as the page connects it: its description."""
    described, _ = await call("mcp.connect", {"id": "url:shop", "url": url})
    try:
        yield described
    finally:
        await call("mcp.disconnect", {"id": "url:shop"})


def no_questions(event: dict[str, Any]) -> None:
    raise AssertionError(f"nothing should have been asked: {event}")


def test_visibility_and_view_are_read_from_the_tools_meta() -> None:
    def tool(meta: dict[str, Any] | None) -> t.Tool:
        return t.Tool(name="x", input_schema={"type": "object"}, _meta=meta)

    assert ui_resource(tool({"ui": {"resourceUri": VIEW}})) == VIEW
    assert ui_resource(tool({"ui/resourceUri": VIEW})) == VIEW  # the older flat key
    assert ui_resource(tool({"ui": {"resourceUri": "https://x.example/app.html"}})) is None  # ui:// only
    assert ui_resource(tool(None)) is None
    assert visibility(tool(None)) == ["model", "app"]
    assert visibility(tool({"ui": {"visibility": ["app"]}})) == ["app"]
    assert not for_model(tool({"ui": {"visibility": ["app"]}})) and for_app(tool({"ui": {"visibility": ["app"]}}))
    assert visibility(tool({"ui": {"visibility": ["everyone"]}})) == ["model", "app"]  # nothing known: as if unsaid


async def test_the_client_says_it_hosts_views_and_names_each_tools_view(url: str) -> None:
    async with connected(url) as shop:
        tools = {tool["original_name"]: tool for tool in shop["tools"]}
        assert set(tools) == {"show_cart", "empty_cart", "add_item"}
        assert tools["show_cart"]["ui"] == VIEW and tools["empty_cart"]["ui"] == VIEW
        # add_item is listed for the user (to set how views' calls of it are approved), marked for views only,
        # and never offered to the model.
        assert tools["add_item"]["views_only"] is True and tools["add_item"]["policy"] == "ask"
        assert tools["show_cart"].get("views_only", False) is False
        conn = STATE.connections["url:shop"]
        assert [tool.name for tool in conn.agent_tools()] == ["show_cart", "empty_cart"]
        result, _ = await call("mcp.app_call_tool", {"id": "url:shop", "name": "show_cart", "trusted": True})
    assert result["result"]["content"][0]["text"] == "cart for a host with views"


async def answered(decision: str) -> tuple[dict[str, Any] | BaseException, list[dict[str, Any]]]:
    """A view's call of add_item, the user's answer ``decision``: what the call returned (or raised), its events."""
    events: list[dict[str, Any]] = []
    answers: list[asyncio.Task[Any]] = []

    def answer(event: dict[str, Any]) -> None:
        events.append(event)
        if event["type"] == "approval":
            answers.append(asyncio.ensure_future(
                call("chat.approve", {"call_id": event["call_id"], "decision": decision})))

    params = {"id": "url:shop", "name": "add_item", "arguments": {"item": "tea"}}
    try:
        outcome: dict[str, Any] | BaseException = (await call("mcp.app_call_tool", params, answer))[0]
    except Exception as error:  # noqa: BLE001 - the test looks at it
        outcome = error
    await asyncio.gather(*answers)
    return outcome, events


async def test_a_views_call_asks_the_user_and_a_no_refuses_it(url: str) -> None:
    async with connected(url):
        refused, asked_first = await answered("deny")
        ran, asked_then = await answered("allow")
    assert isinstance(refused, ViewToolRefusedError) and error_code(refused) == "tool_refused"
    assert "did not allow 'add_item'" in str(refused)
    assert isinstance(ran, dict) and ran["result"]["content"][0]["text"] == "added tea"
    for [asked] in (asked_first, asked_then):
        assert asked["type"] == "approval" and asked["source"] == "mcp:url:shop"
        assert asked["original_name"] == "add_item" and asked["arguments"] == {"item": "tea"}


async def test_the_users_choices_hold_for_views_as_for_the_model(url: str) -> None:
    async with connected(url):
        conn = STATE.connections["url:shop"]
        add_item = mcp_tool(conn.id, conn.session, next(d for d in conn.session.tools if d.name == "add_item"))
        allowed = {"source": "mcp:url:shop", "tool": "add_item", "policy": "allow",
                   "fingerprint": fingerprint(add_item)}
        result, events = await call("mcp.app_call_tool", {"id": "url:shop", "name": "add_item",
                                                          "arguments": {"item": "jam"}, "policy": [allowed]})
        assert events == [] and result["result"]["content"][0]["text"] == "added jam"
        denied = {"source": "mcp:url:shop", "tool": "add_item", "policy": "deny"}
        with pytest.raises(ViewToolRefusedError, match="did not allow"):
            await call("mcp.app_call_tool", {"id": "url:shop", "name": "add_item", "trusted": True,
                                             "arguments": {"item": "jam"}, "policy": [denied]}, no_questions)


async def test_a_view_may_not_call_a_tool_kept_for_the_model_nor_one_that_does_not_exist(url: str) -> None:
    async with connected(url):
        with pytest.raises(ViewToolRefusedError, match="offered to the model only"):
            await call("mcp.app_call_tool", {"id": "url:shop", "name": "empty_cart", "trusted": True}, no_questions)
        with pytest.raises(ValueError, match="does not have"):
            await call("mcp.app_call_tool", {"id": "url:shop", "name": "drop_tables", "trusted": True}, no_questions)


async def test_codes_calls_ask_as_the_models_and_reach_only_the_models_tools(url: str) -> None:
    """Code mode (issue #33): the code of a python call calls tools through ``mcp.code_call_tool``, approved as the
    model's own calls are (asked, denied, allowed); tools kept for views are out of its reach."""
    events: list[dict[str, Any]] = []

    async def code_call(name: str, decision: str | None, **params: Any) -> dict[str, Any]:
        def answer(event: dict[str, Any]) -> None:
            events.append(event)
            asyncio.ensure_future(call("chat.approve", {"call_id": event["call_id"], "decision": decision}))
        return (await call("mcp.code_call_tool", {"id": "url:shop", "name": name, "call_id": f"code-{name}",
                                                  **params}, answer if decision else no_questions))[0]

    async with connected(url):
        with pytest.raises(ViewToolRefusedError, match="did not allow 'empty_cart' of 'url:shop' to run for the code"):
            await code_call("empty_cart", "deny")
        ran = await code_call("empty_cart", "allow")
        assert ran["result"]["content"][0]["text"] == "emptied"
        assert [(e["type"], e["call_id"], e["source"]) for e in events] == [("approval", "code-empty_cart",
                                                                            "mcp:url:shop")] * 2
        trusted = await code_call("empty_cart", None, trusted=True)
        assert trusted["result"]["content"][0]["text"] == "emptied"
        with pytest.raises(ViewToolRefusedError, match="kept for its views"):
            await code_call("add_item", None, trusted=True, arguments={"item": "tea"})
        denied = {"source": "mcp:url:shop", "tool": "empty_cart", "policy": "deny"}
        with pytest.raises(ViewToolRefusedError, match="did not allow"):
            await code_call("empty_cart", None, trusted=True, policy=[denied])


async def test_a_code_call_after_another_servers_results_asks_although_allowed(url: str) -> None:
    """As the loop does for the model's calls: once the code has read another server's results (``read_from``), a
    call of a tool that may reach the open world asks even if allowed, saying why."""
    events: list[dict[str, Any]] = []

    def answer(event: dict[str, Any]) -> None:
        events.append(event)
        asyncio.ensure_future(call("chat.approve", {"call_id": event["call_id"], "decision": "allow"}))

    async with connected(url):
        params = {"id": "url:shop", "name": "empty_cart", "trusted": True, "call_id": "code-1"}
        await call("mcp.code_call_tool", {**params, "read_from": ["mcp:url:shop"]}, no_questions)  # its own: no ask
        ran, _ = await call("mcp.code_call_tool", {**params, "read_from": ["mcp:url:mail", "mcp:url:shop"]}, answer)
    assert ran["result"]["content"][0]["text"] == "emptied"
    assert [e["reason"] for e in events] == [{"kind": "cross_server", "from": ["mcp:url:mail"]}]


async def test_a_tools_output_schema_is_described_for_code_modes_stubs(url: str) -> None:
    """The page makes code mode's stubs from mcp.connect's description: a tool's output schema is in it."""
    async with connected(url) as shop:
        tools = {tool["original_name"]: tool for tool in shop["tools"]}
        conn = STATE.connections["url:shop"]
        declared = next(d for d in conn.session.tools if d.name == "show_cart").output_schema
    assert declared and tools["show_cart"]["outputSchema"] == declared
