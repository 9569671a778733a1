"""The OAuth wire methods end to end: begin → (the test plays the popup) → finish → mcp.connect with the
token, then a reload (a fresh worker over the same vault) keeps the server authorized. No answer the page
gets carries a token (T-A11): tokens live in the worker and its vault only."""

from __future__ import annotations

import json
from typing import Any

import pytest
from oauth_server import serve_protected
from test_oauth import APP, browser

from pycore import wire
from pycore.mcp import MCPAuthRequiredError, MCPInsufficientScopeError, OAuthCallbackError
from pycore.mcp.oauth import ClientRegistration, TokenSet, install
from pycore.mcp.oauth_urls import canonical_resource
from pycore.mcp.oauth_vault import MemoryVault, VaultOAuthStore
from pycore.methods._state import STATE

RECEIVED: list[str] = []  # every result and event the page would receive, as sent


async def call(name: str, **params: Any) -> dict[str, Any]:
    result = await wire.start(name, json.dumps(params), RECEIVED.append)
    RECEIVED.append(result)
    return json.loads(result)


async def new_worker(*, keep_vault: bool = True) -> None:
    """Forget the worker's OAuth client (as a page reload would), closing its connections. The vault (the
    browser's IndexedDB) outlives a reload; ``keep_vault=False`` is a new browser profile."""
    await STATE.forget_oauth()
    install(None)
    if not keep_vault:
        STATE.oauth_vault = MemoryVault()
        STATE.oauth_keys = None


async def test_begin_finish_connect_and_reload() -> None:
    await new_worker(keep_vault=False)
    RECEIVED.clear()
    with serve_protected() as (url, provider):
        with pytest.raises(MCPAuthRequiredError):
            await call("mcp.connect", id="p", url=url)
        assert (await call("mcp.oauth_status", server_url=url)) == {"authorized": False}
        begun = await call("mcp.oauth_begin", server_url=url, redirect_uri=APP)  # finds the challenge itself
        assert begun["resource"] == url and begun["registration"] == "dynamic"
        finished = await call("mcp.oauth_finish", callback_url=await browser(begun["authorization_url"]))
        assert finished["resource"] == url and finished["scope"] and finished["expires_at"]
        connected = await call("mcp.connect", id="p", url=url)
        assert [t["name"] for t in connected["tools"]] == ["whoami"]
        status = await call("mcp.oauth_status", server_url=url)
        assert status["authorized"] and status["refreshable"] and "access_token" not in json.dumps(status)
        await call("mcp.disconnect", id="p")

        await new_worker()  # the page reloads: a new worker, whose first call connects with the saved sign-in
        again = await call("mcp.connect", id="p", url=url)
        assert again["status"] == "connected"
        assert (await call("mcp.oauth_status", server_url=url))["authorized"]
        await call("mcp.disconnect", id="p")
        assert STATE.oauth_keys is not None
        key = await STATE.oauth_keys.public_jwk(canonical_resource(url))
        assert (await call("mcp.oauth_forget", server_url=url)) == {"authorized": False}
        assert await STATE.oauth_keys.public_jwk(canonical_resource(url)) != key  # the DPoP key went with it
        await new_worker()  # forgotten in the vault too, not only in this worker's memory
        with pytest.raises(MCPAuthRequiredError):
            await call("mcp.connect", id="p", url=url)
        secrets = [*provider.access, *provider.refresh]
    assert len(secrets) == 2 and RECEIVED
    assert [s for s in secrets if any(s in text for text in RECEIVED)] == []  # T-A11: none ever reached the page
    assert isinstance(STATE.oauth_vault, MemoryVault)
    # After the sign-out the vault keeps the client registration (reused by the next sign-in), no tokens.
    assert [name.split()[0] for name in STATE.oauth_vault.records] == ["client"]
    await new_worker(keep_vault=False)


async def test_the_vault_keeps_tokens_and_registrations_only_under_their_own_names() -> None:
    """A record moved under another resource's name is not used for that resource (T-A11)."""
    vault = MemoryVault()
    store = VaultOAuthStore(vault)
    client = ClientRegistration(issuer="https://as.example", client_id="c", redirect_uri=APP, how="dynamic")
    tokens = TokenSet(access_token="at", resource="https://a.example/mcp", issuer=client.issuer,
                      token_endpoint="https://as.example/token", client=client)
    await store.set_tokens(tokens)
    await store.set_client(client)
    again = VaultOAuthStore(vault)  # a reload
    assert await again.get_tokens("https://a.example/mcp") == tokens
    assert await again.get_client(client.issuer, APP) == client
    (name,) = [k for k in vault.records if k.startswith("tokens ")]
    vault.records["tokens https://b.example/mcp"] = vault.records[name]
    assert await again.get_tokens("https://b.example/mcp") is None
    await again.delete_tokens("https://a.example/mcp")
    assert await VaultOAuthStore(vault).get_tokens("https://a.example/mcp") is None


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
