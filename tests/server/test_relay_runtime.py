"""The relay parses HTTP with httptools where it is installed, and with uvicorn's own h11 elsewhere.

Either way request heads are capped (T-R21); the head deadline and the connection limit need httptools."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from conftest import FIXTURE, mcp_client, python_server, relay, text

from server.__main__ import fast_paths, front_door
from server.config import FrontLimits
from server.front import GuardedHttpTools


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/PID/maps")
async def test_the_relay_answers_calls_through_httptools(dist, tmp_path):
    with relay(dist, tmp_path, {"fixture": python_server(FIXTURE)}) as r:
        async with mcp_client(r.url("fixture"), r.token) as client:
            assert text(await client.call_tool("echo", {"message": "fast"})) == "Echo: fast"
        libraries = Path(f"/proc/{r.proc.pid}/maps").read_text()
    assert "/httptools/parser/" in libraries


def test_without_httptools_uvicorn_parses_with_h11(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "httptools" else real(name, *a))
    assert fast_paths() == {"loop": "asyncio", "http": "h11"}


def test_with_httptools_installed_it_is_used_and_the_loop_stays_asyncio():
    # uvloop would hand stdio servers a socketpair as stdin, and its own descriptors (see fast_paths).
    assert fast_paths() == {"loop": "asyncio", "http": "httptools"}


def test_httptools_is_guarded_and_h11_keeps_its_head_cap_with_a_warning(caplog):
    door = front_door({"loop": "asyncio", "http": "httptools"})
    assert isinstance(door["http"], type) and issubclass(door["http"], GuardedHttpTools)
    assert door["http"].front.limits == FrontLimits()
    assert front_door({"loop": "asyncio", "http": "h11"}, FrontLimits(max_head_bytes=4096)) == {
        "loop": "asyncio", "http": "h11", "h11_max_incomplete_event_size": 4096}
    assert "httptools is not installed" in caplog.text
