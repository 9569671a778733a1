"""The CORS doctor, direct mode, against real loopback servers with each misconfiguration; and mcp.doctor."""

from __future__ import annotations

import json

import pytest
from cors_apps import ALL_HEADERS, GOOD, ORIGIN, fixed_cors_app, mcp_app, ollama_app, origin_checking_app, serve_app

from pycore import wire
from pycore.http.httpx import HttpxTransport
from pycore.mcp.doctor import Diagnosis, diagnose_direct


async def direct(app: object, headers: dict[str, str] | None = None) -> Diagnosis:
    http = HttpxTransport()
    try:
        with serve_app(app) as base:
            return await diagnose_direct(http, base + "/mcp", ORIGIN, headers)
    finally:
        await http.aclose()


async def test_a_well_configured_server_has_no_findings() -> None:
    diagnosis = await direct(mcp_app(GOOD), {"Authorization": "Bearer x"})
    assert diagnosis.findings == []


async def test_no_cors_at_all_refuses_the_preflight_and_sends_no_allow_origin() -> None:
    diagnosis = await direct(mcp_app(None))
    assert diagnosis.codes() == ["preflight_refused", "no_allow_origin"]
    assert "405" in diagnosis.findings[0].message
    assert "relay" in diagnosis.relay_hint and "--allow-remote" in diagnosis.relay_hint


async def test_session_id_not_exposed() -> None:
    diagnosis = await direct(mcp_app({**GOOD, "expose_headers": []}))
    assert diagnosis.codes() == ["session_id_not_exposed"]
    assert "Access-Control-Expose-Headers" in diagnosis.findings[0].fix


async def test_protocol_version_and_session_headers_not_allowed() -> None:
    diagnosis = await direct(mcp_app({**GOOD, "allow_headers": ["Content-Type"]}))
    assert diagnosis.codes() == ["header_not_allowed"] * 3
    named = " ".join(f.message for f in diagnosis.findings)
    assert "MCP-Protocol-Version" in named and "Mcp-Session-Id" in named and "Last-Event-ID" in named


async def test_authorization_must_be_listed_even_with_a_wildcard() -> None:
    wildcard = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "*",
                "Access-Control-Allow-Methods": "*", "Access-Control-Expose-Headers": "*"}
    assert (await direct(fixed_cors_app(wildcard))).findings == []
    diagnosis = await direct(fixed_cors_app(wildcard), {"Authorization": "Bearer x"})
    assert diagnosis.codes() == ["header_not_allowed"] and "Authorization" in diagnosis.findings[0].message


async def test_a_custom_header_the_server_does_not_allow() -> None:
    diagnosis = await direct(mcp_app(GOOD), {"X-Api-Key": "k"})
    assert diagnosis.codes() == ["header_not_allowed"] and "x-api-key" in diagnosis.findings[0].message


async def test_another_origin_allowed() -> None:
    starlette = await direct(mcp_app({**GOOD, "allow_origins": ["https://someone.else"]}))
    assert starlette.codes() == ["preflight_refused", "no_allow_origin"]  # Starlette: 400, no ACAO
    fixed = await direct(fixed_cors_app({"Access-Control-Allow-Origin": "https://someone.else"}))
    assert fixed.codes() == ["wrong_allow_origin"] and "someone.else" in fixed.findings[0].message


async def test_server_rejecting_our_origin() -> None:
    diagnosis = await direct(origin_checking_app())
    assert diagnosis.codes() == ["origin_rejected"] and ORIGIN in diagnosis.findings[0].fix


async def test_ollama_needs_ollama_origins() -> None:
    http = HttpxTransport()
    with serve_app(ollama_app()) as base:
        diagnosis = await diagnose_direct(http, base + "/v1/chat/completions", ORIGIN)
    await http.aclose()
    assert diagnosis.codes() == ["ollama_origins"]
    assert f"OLLAMA_ORIGINS={ORIGIN}" in diagnosis.findings[0].fix


async def test_unreachable() -> None:
    http = HttpxTransport()
    diagnosis = await diagnose_direct(http, "http://127.0.0.1:9/mcp", ORIGIN)
    await http.aclose()
    assert diagnosis.codes() == ["unreachable"]


async def test_wire_method() -> None:
    with serve_app(mcp_app({**GOOD, "expose_headers": []})) as base:
        result = json.loads(await wire.start("mcp.doctor", json.dumps({"url": base + "/mcp", "origin": ORIGIN}),
                                             lambda _: None))
    assert result["mode"] == "direct"
    assert [f["code"] for f in result["findings"]] == ["session_id_not_exposed"]
    assert set(result["findings"][0]) == {"code", "message", "fix"} and result["relay_hint"]
    with pytest.raises(ValueError, match="origin"):
        await wire.start("mcp.doctor", json.dumps({"url": base + "/mcp"}), lambda _: None)


def test_all_headers_is_what_the_fix_says() -> None:
    from pycore.mcp.doctor import _fix_cors

    assert all(h in _fix_cors(ORIGIN, "x") for h in ALL_HEADERS)


def test_cli_doctor() -> None:
    import subprocess
    import sys

    with serve_app(mcp_app({**GOOD, "expose_headers": []})) as base:
        proc = subprocess.run([sys.executable, "-m", "pycore", "mcp", base + "/mcp", "doctor", "--origin", ORIGIN],
                              capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    out = json.loads(proc.stdout)
    assert [f["code"] for f in out["findings"]] == ["session_id_not_exposed"] and out["mode"] == "direct"
    missing = subprocess.run([sys.executable, "-m", "pycore", "mcp", "http://127.0.0.1:9/mcp", "doctor"],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 3 and "--origin" in missing.stderr
