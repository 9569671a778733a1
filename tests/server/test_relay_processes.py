"""Child processes behind the relay: argv/env (T-R10, T-R11), crash, shutdown, no leaks (T-R13, T-R14, T-R16, T-R22)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from conftest import FAKE, FIXTURE, alive, mcp_client, python_server, relay, stop, text, wait_until
from mcp.shared.exceptions import MCPError

from server import reaper

ALLOWLIST = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LC_CTYPE"}  # LC_CTYPE: Python's own C-locale coercion
HOSTILE_ARGS = ["; rm -rf ~", "$(id)", "&& calc", "`x`", "--upload-pack=evil", "a\nb"]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def api(r, path: str = "/api/servers") -> dict:
    return httpx2.get(r.base + path, headers=r.auth).json()


async def test_t_r10_t_r11_t_r16_argv_literal_env_minimal_logs_clean(dist, tmp_path):
    servers = {"fake": {"command": sys.executable, "args": [str(FAKE), *HOSTILE_ARGS],
                        "env": {"CHILD_SECRET": "s3cret-child-value"}}}
    env = os.environ | {"OPENAI_API_KEY": "sk-relay-parent-secret"}
    with relay(dist, tmp_path, servers, env=env) as r:
        # A browser cannot choose the command: a "command" in the request is only a parameter.
        async with mcp_client(r.url("fake"), r.token) as client:
            seen = json.loads(text(await client.call_tool("whoami", {"command": "calc"})))
        log = r.log
        # The session's end is logged once its process tree is reaped (up to a few seconds): wait for
        # it while the relay runs, rather than reading the log after the relay itself was stopped.
        assert wait_until(lambda: "stop server=fake" in log.read_text(), timeout=20)
    assert seen["argv"] == HOSTILE_ARGS
    assert set(seen["env"]) <= ALLOWLIST | {"CHILD_SECRET"}
    assert seen["env"]["CHILD_SECRET"] == "s3cret-child-value"
    assert "OPENAI_API_KEY" not in seen["env"]
    logged = log.read_text()
    assert "spawn server=fake" in logged and "stop server=fake" in logged
    assert r.token not in logged and "s3cret-child-value" not in logged and "sk-relay" not in logged


async def test_a_crashed_child_gives_a_json_rpc_error_and_the_next_initialize_starts_fresh(dist, tmp_path):
    with relay(dist, tmp_path, {"fake": python_server(FAKE)}) as r:
        async with mcp_client(r.url("fake"), r.token) as client:
            first = json.loads(text(await client.call_tool("whoami", {})))["pid"]
            with pytest.raises(MCPError, match="exited"):
                await client.call_tool("crash", {})
        async with mcp_client(r.url("fake"), r.token) as client:
            assert json.loads(text(await client.call_tool("whoami", {})))["pid"] != first
        state = api(r)["servers"][0]
        assert state["failures"] == 1 and "exited" in state["lastError"]


async def test_t_r13_child_and_stubborn_grandchild_are_gone_after_the_session_no_zombies(dist, tmp_path):
    with relay(dist, tmp_path, {"fake": python_server(FAKE)}) as r:
        pids = []
        for _ in range(3):
            async with mcp_client(r.url("fake"), r.token) as client:
                pids.append(json.loads(text(await client.call_tool("whoami", {})))["pid"])
                pids.append(int(text(await client.call_tool("grandchild", {"ignore_term": True}))))
        # stdin close, 2 s, SIGTERM to the group (ignored by the grandchild), 2 s, SIGKILL.
        assert wait_until(lambda: not any(alive(p) for p in pids), timeout=20), pids
        assert wait_until(lambda: not r.children(), timeout=10)
        zombies = [p for p in pids if os.path.exists(f"/proc/{p}")]
        assert wait_until(lambda: not [p for p in zombies if os.path.exists(f"/proc/{p}")], timeout=5)


def gone(pid: int) -> bool:
    """Not alive and not a zombie either: nobody is left holding it."""
    return not os.path.exists(f"/proc/{pid}")


@pytest.fixture
def escapees():
    """Pids a test expects the relay to end; any left alive at the end are killed, so a failure leaks nothing."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


async def test_t_r22_a_grandchild_that_calls_setsid_ends_with_its_own_session_only(dist, tmp_path, escapees):
    with relay(dist, tmp_path, {"fake": python_server(FAKE)}) as r:
        async with mcp_client(r.url("fake"), r.token) as other:
            # A second session stays open throughout: what ends the first one's grandchild is that
            # session's own accounting, and the other session's processes are left alone.
            kept = int(text(await other.call_tool("grandchild", {"new_session": True})))
            escapees.append(kept)
            async with mcp_client(r.url("fake"), r.token) as client:
                server = json.loads(text(await client.call_tool("whoami", {})))["pid"]
                escaped = int(text(await client.call_tool("grandchild", {"ignore_term": True, "new_session": True})))
                escapees.append(escaped)
                assert os.getsid(escaped) == escaped != os.getsid(server)  # out of the group and the session
            # stdin close, 2 s, SIGTERM (ignored by the grandchild), 2 s, SIGKILL.
            assert await _eventually(lambda: gone(escaped), timeout=20), escaped
            assert alive(kept)
            assert text(await other.call_tool("echo", {"message": "still here"})) == "still here"
        assert await _eventually(lambda: gone(kept), timeout=20), kept
        assert wait_until(lambda: not r.children(), timeout=10), r.children()


async def test_t_r22_a_double_forked_daemon_ends_once_no_session_is_running(dist, tmp_path, escapees):
    with relay(dist, tmp_path, {"fake": python_server(FAKE)}) as r:
        async with mcp_client(r.url("fake"), r.token) as client:
            daemon = int(text(await client.call_tool("daemon", {})))
            escapees.append(daemon)
            assert alive(daemon) and os.getsid(daemon) != os.getsid(json.loads(
                text(await client.call_tool("whoami", {})))["pid"])
        assert await _eventually(lambda: gone(daemon), timeout=20), daemon


ESCAPING_SERVER = """\
import subprocess, sys, time
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
print(grandchild.pid, flush=True)
time.sleep(300)
"""


async def test_t_r22_without_a_subreaper_the_relay_says_so_and_still_ends_a_setsid_grandchild(
        escapees, caplog, monkeypatch):
    monkeypatch.setattr(reaper, "PR_SET_CHILD_SUBREAPER", 0x7FFF)  # prctl refuses it, as a seccomp policy could
    assert not reaper.become_subreaper()
    assert "cannot become a child subreaper" in caplog.text and "setsid() is still ended" in caplog.text
    # This test process is no subreaper either: the escaped grandchild goes to init when its parent dies.
    server = subprocess.Popen([sys.executable, "-c", ESCAPING_SERVER], stdout=subprocess.PIPE,
                              start_new_session=True)
    assert server.stdout is not None
    escaped = int(server.stdout.readline())
    escapees.append(escaped)
    server.stdout.close()
    tree = reaper.session_tree(server.pid)  # what the relay records before the SDK stops the server
    assert escaped in tree
    server.kill()  # what the SDK's stop does to the server and its process group
    server.wait()
    assert alive(escaped)
    await reaper.end_tree(tree, server.pid, grace=2)
    assert await _eventually(lambda: not alive(escaped), timeout=10), escaped


async def test_t_r14_bad_stdout_is_surfaced_and_a_flood_of_stderr_stays_bounded(dist, tmp_path):
    with relay(dist, tmp_path, {"fake": python_server(FAKE)}) as r:
        async with mcp_client(r.url("fake"), r.token) as client:
            assert text(await client.call_tool("bad_stdout", {})) == "ok"
            assert any("not JSON-RPC" in line["text"] for line in api(r)["servers"][0]["stderr"])
            assert text(await client.call_tool("spam_stderr", {"megabytes": 10})) == "done"
            assert text(await client.call_tool("echo", {"message": "alive"})) == "alive"
        lines = api(r)["servers"][0]["stderr"]
        assert 0 < len(lines) <= 50 and all(len(line["text"]) <= 2100 for line in lines)
        status = Path(f"/proc/{r.proc.pid}/status").read_text().splitlines()
        rss_kb = int(next(x for x in status if x.startswith("VmRSS")).split()[1])
        assert rss_kb < 300_000


async def test_fifty_sessions_dropped_without_delete_leave_no_child(dist, tmp_path):
    with relay(dist, tmp_path, {"fixture": python_server(FIXTURE)}, "--idle-timeout", "1",
               "--max-sessions", "64") as r:
        headers = r.auth | {"Accept": "application/json, text/event-stream"}

        async def open_and_drop(http: httpx2.AsyncClient) -> None:
            response = await http.post(r.url("fixture"), json=INIT, headers=headers)
            assert response.status_code == 200 and "mcp-session-id" in response.headers

        async with httpx2.AsyncClient(timeout=60) as http:
            for _ in range(5):
                async with anyio.create_task_group() as tg:
                    for _ in range(10):
                        tg.start_soon(open_and_drop, http)
        assert api(r)["servers"][0]["started"] == 50
        assert wait_until(lambda: not r.children(), timeout=30), r.children()
        assert api(r)["sessions"] == 0


async def test_no_child_survives_relay_shutdown(dist, tmp_path):
    with relay(dist, tmp_path, {"fixture": python_server(FIXTURE)}) as r:
        pids: list[int] = []
        async with anyio.create_task_group() as tg:
            done = anyio.Event()

            async def hold_session() -> None:
                async with mcp_client(r.url("fixture"), r.token) as client:
                    pids.append(int(text(await client.call_tool("pid", {}))))
                    await done.wait()

            for _ in range(5):
                tg.start_soon(hold_session)
            assert await _eventually(lambda: len(pids) == 5)
            stop(r.proc)  # SIGTERM while five sessions are live
            done.set()
            tg.cancel_scope.cancel()
        assert r.proc.returncode is not None
        assert wait_until(lambda: not any(alive(p) for p in pids), timeout=5), pids


async def _eventually(predicate, timeout: float = 30) -> bool:
    with anyio.move_on_after(timeout):
        while not predicate():
            await anyio.sleep(0.05)
    return predicate()


@pytest.fixture(autouse=True)
def _no_stray_processes():
    yield
    mine = subprocess.run(["ps", "-o", "pid=,stat=", "--ppid", str(os.getpid())], capture_output=True, text=True)
    assert "Z" not in mine.stdout
