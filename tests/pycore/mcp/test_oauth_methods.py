"""The OAuth wire methods end to end: begin → (the test plays the popup) → finish → mcp.connect with the
token, then a reload (export → load into a fresh worker store) keeps the server authorized."""

from __future__ import annotations

import json
from typing import Any

import pytest
from oauth_server import serve_protected
from test_oauth import APP, browser

from pycore import wire
from pycore.mcp import MCPAuthRequiredError, MCPInsufficientScopeError, OAuthCallbackError
from pycore.mcp.oauth import install
from pycore.methods._state import STATE


async def call(name: str, **params: Any) -> dict[str, Any]:
    return json.loads(await wire.start(name, json.dumps(params), lambda _: None))


async def new_worker() -> None:
    """Forget the worker's OAuth client (as a page reload would), closing its connections."""
    await STATE.forget_oauth()
    install(None)


async def test_begin_finish_connect_and_reload() -> None:
    await new_worker()
    with serve_protected() as (url, _):
        with pytest.raises(MCPAuthRequiredError):
            await call("mcp.connect", id="p", url=url)
        assert (await call("mcp.oauth_status", server_url=url)) == {"authorized": False}
        begun = await call("mcp.oauth_begin", server_url=url, redirect_uri=APP)  # finds the challenge itself
        assert begun["resource"] == url and begun["registration"] == "dynamic"
        finished = await call("mcp.oauth_finish", callback_url=await browser(begun["authorization_url"]))
        assert finished["resource"] == url and finished["store"]["tokens"][0]["refresh_token"]
        connected = await call("mcp.connect", id="p", url=url)
        assert [t["name"] for t in connected["tools"]] == ["whoami"]
        status = await call("mcp.oauth_status", server_url=url)
        assert status["authorized"] and status["refreshable"] and "access_token" not in json.dumps(status)
        await call("mcp.disconnect", id="p")

        await new_worker()  # the page reloads: a new worker, an empty store
        assert (await call("mcp.oauth_load", store=finished["store"]))["resources"] == [url]
        again = await call("mcp.connect", id="p", url=url)
        assert again["status"] == "connected"
        await call("mcp.disconnect", id="p")
        forgotten = await call("mcp.oauth_forget", server_url=url)
        assert forgotten["store"]["tokens"] == []
        with pytest.raises(MCPAuthRequiredError):
            await call("mcp.connect", id="p", url=url)
    await new_worker()


async def test_finish_with_a_forged_callback_is_refused() -> None:
    await new_worker()
    with serve_protected() as (url, _):
        await call("mcp.oauth_begin", server_url=url, redirect_uri=APP)
        with pytest.raises(OAuthCallbackError, match="does not answer a request we made"):
            await call("mcp.oauth_finish", callback_url=APP + "?code=stolen&state=guessed")
    await new_worker()


async def test_step_up_uses_the_403_challenge_the_worker_saw() -> None:
    await new_worker()
    with serve_protected(required_scopes=["mcp:read", "mcp:write"]) as (url, provider):
        begun = await call("mcp.oauth_begin", server_url=url, redirect_uri=APP, scope="mcp:read")
        await call("mcp.oauth_finish", callback_url=await browser(begun["authorization_url"]))
        with pytest.raises(MCPInsufficientScopeError):
            await call("mcp.connect", id="s", url=url)
        step_up = await call("mcp.oauth_begin", server_url=url, redirect_uri=APP, scope="mcp:read mcp:write")
        assert "insufficient_scope" not in step_up["authorization_url"]
        worker = STATE.oauth()
        assert worker.challenges == {} and list(worker._step_ups.values()) == [1]  # the 403's challenge, counted
        await call("mcp.oauth_finish", callback_url=await browser(step_up["authorization_url"]))
        connected = await call("mcp.connect", id="s", url=url)
        assert connected["status"] == "connected"
        await call("mcp.disconnect", id="s")
    await new_worker()
