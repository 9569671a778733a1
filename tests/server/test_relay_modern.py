"""A stdio server that speaks only MCP 2026-07-28 behind the relay (#31): no initialize, no sessions.

Its requests carry their revision in ``_meta`` and no session id, so the relay sends them to one child per
configured server, shared by every page; the official SDK client (``mode="auto"``: a ``server/discover`` probe
first, as the page does) must see the server exactly as over its own HTTP.
"""

from __future__ import annotations

import json

import anyio
import httpx2
import pytest
from conftest import FAKE, SDK_SERVER, mcp_client, python_server, relay, text, wait_until
from mcp.shared.exceptions import MCPError

MODERN = {"modern": {**python_server(SDK_SERVER), "args": [str(SDK_SERVER), "stdio-modern"]},
          "fake": {**python_server(FAKE), "args": [str(FAKE), "modern"]}}


async def eventually(predicate) -> bool:
    """``wait_until`` in a thread, so that the client's own tasks (closing a listen stream) run meanwhile."""
    return await anyio.to_thread.run_sync(lambda: wait_until(predicate, timeout=15))


@pytest.fixture(scope="module")
def running(dist, tmp_path_factory):
    with relay(dist, tmp_path_factory.mktemp("modern"), MODERN) as r:
        yield r


async def test_a_2026_only_stdio_server_answers_discover_and_calls_through_the_relay(running):
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with mcp_client(running.url("modern"), running.token, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        assert "echo" in {t.name for t in (await client.list_tools()).tools}
        assert text(await client.call_tool("echo", {"message": "über ✓"})) == "Echo: über ✓"
        result = await client.call_tool("slow", {"seconds": 0.2}, progress_callback=on_progress)
        assert text(result) == "slept 0.2" and progress == [1, 2, 3, 4]


async def test_listen_streams_a_list_change_another_page_caused(running):
    async with mcp_client(running.url("modern"), running.token, mode="auto") as watcher, \
            mcp_client(running.url("modern"), running.token, mode="auto") as other:
        async with watcher.listen(tools_list_changed=True) as subscription:
            await other.call_tool("grow", {"name": "grown_by_other"})
            with anyio.fail_after(10):
                event = await anext(aiter(subscription))
        assert type(event).__name__ == "ToolsListChanged"
        assert text(await watcher.call_tool("grown_by_other", {})) == "new"


async def test_pages_share_one_child_and_get_only_their_own_answers(running):
    async def one(i: int, seen: dict[int, list[str]]) -> None:
        async with mcp_client(running.url("fake"), running.token, mode="auto") as client:
            for j in range(5):
                seen[i].append(text(await client.call_tool("echo", {"message": f"page-{i}-call-{j}"})))
            seen[i].append(json.loads(text(await client.call_tool("whoami", {})))["pid"])

    seen: dict[int, list[str]] = {i: [] for i in range(6)}
    async with anyio.create_task_group() as tg:
        for i in range(6):
            tg.start_soon(one, i, seen)
    for i in range(6):
        assert seen[i][:5] == [f"page-{i}-call-{j}" for j in range(5)]
    assert len({seen[i][5] for i in range(6)}) == 1  # one child for all of them


async def test_a_crashed_shared_child_fails_its_request_and_the_next_one_starts_it_again(running):
    async with mcp_client(running.url("fake"), running.token, mode="auto") as client:
        first = json.loads(text(await client.call_tool("whoami", {})))["pid"]
        with pytest.raises(MCPError, match="exited"):
            await client.call_tool("crash", {})
        assert json.loads(text(await client.call_tool("whoami", {})))["pid"] != first
    async with httpx2.AsyncClient(headers=running.auth) as http:
        state = {s["name"]: s for s in (await http.get(f"{running.base}/api/servers")).json()["servers"]}["fake"]
    assert state["failures"] >= 1 and "exited" in state["lastError"]


async def test_an_idle_shared_child_is_stopped(dist, tmp_path):
    with relay(dist, tmp_path, MODERN, "--idle-timeout", "1") as r:
        async with mcp_client(r.url("fake"), r.token, mode="auto") as client:
            pid = json.loads(text(await client.call_tool("whoami", {})))["pid"]
            assert pid in r.children()
            async with client.listen(tools_list_changed=True):
                pass  # a listen stream the page closed is no longer open at the child
            assert await eventually(lambda: not r.children())
            # and the next request starts it again
            assert json.loads(text(await client.call_tool("whoami", {})))["pid"] != pid


async def test_an_older_servers_refused_probe_leaves_no_process_and_is_not_asked_again(dist, tmp_path):
    """The probe of a server that speaks only the handshake starts the shared child, which refuses it: the child
    stops at once (a second copy of a server may fight the session's over its files), and later probes get the
    same refusal without a process; the page then gets its session as before."""
    older = {"older": {**python_server(FAKE), "args": [str(FAKE), "legacy"]}}
    with relay(dist, tmp_path, older) as r:
        for _ in range(2):
            async with mcp_client(r.url("older"), r.token, mode="auto") as client:
                assert client.protocol_version == "2025-11-25"
                pid = json.loads(text(await client.call_tool("whoami", {})))["pid"]
                assert await eventually(lambda pid=pid: r.children() == {pid})
        async with httpx2.AsyncClient(headers=r.auth) as http:
            assert (await http.get(f"{r.base}/api/servers")).json()["servers"][0]["started"] == 3  # 1 probe, 2 sessions


def discover(url: str, headers: dict[str, str]) -> httpx2.Response:
    """A bare 2026-07-28 ``server/discover`` POST (id 7), as the page sends it."""
    body = {"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}
    return httpx2.post(url, json=body, headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover",
                                                "Accept": "application/json, text/event-stream", **headers})


def test_a_sessionless_request_still_needs_the_token_and_a_local_origin(running):
    no_token = discover(running.url("modern"), {})
    foreign = discover(running.url("modern"), {**running.auth, "Origin": "https://evil.example"})
    assert (no_token.status_code, foreign.status_code) == (401, 403)
    ok = discover(running.url("modern"), running.auth)
    assert ok.status_code == 200 and ok.json()["result"]["supportedVersions"] == ["2026-07-28"]



def test_a_shared_child_that_cannot_start_is_a_json_rpc_error_naming_why(dist, tmp_path):
    with relay(dist, tmp_path, {"missing": {"command": "/nonexistent/mcp-server"}}) as r:
        answer = discover(r.url("missing"), r.auth).json()
        assert answer["id"] == 7 and "could not start '/nonexistent/mcp-server'" in answer["error"]["message"]
        state = httpx2.get(f"{r.base}/api/servers", headers=r.auth).json()["servers"][0]
        assert state["failures"] == 1 and state["state"] == "error"
