"""A protected MCP server for the OAuth journey: the official SDK's authorization server and bearer checks
(the auto-approving provider of tests/pycore/mcp/oauth_server.py), with the ``get_capital`` tool that the
real recording openai/chat-stream-tool-call calls, so a replayed model turn runs a tool behind a token.

Browsers reach it from the app's origin, so it answers CORS as a server meant for browser clients must:
the app's origin only, ``Authorization`` and the MCP headers allowed, ``Mcp-Session-Id`` and
``WWW-Authenticate`` exposed (the page's worker reads the 401 challenge).

    with serve_capitals_protected(origin) as server:
        server.url                 # http://127.0.0.1:PORT/mcp
        server.provider.access     # the access tokens it issued
        server.tool_tokens         # the token each get_capital call was authorized with
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from pydantic import AnyHttpUrl
from starlette.middleware.cors import CORSMiddleware

PYCORE_MCP_TESTS = Path(__file__).resolve().parents[1] / "pycore" / "mcp"
CAPITALS = {"UK": "London", "France": "Paris", "Japan": "Tokyo"}
MCP_HEADERS = ["Content-Type", "Authorization", "Mcp-Session-Id", "MCP-Protocol-Version", "Last-Event-ID"]


def _load(name: str) -> ModuleType:
    """A helper module of tests/pycore/mcp, by path (its folder is not on this suite's import path)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, PYCORE_MCP_TESTS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_load("mcp_servers")  # oauth_server imports free_port from it
oauth_server = _load("oauth_server")
Provider = oauth_server.Provider
free_port = sys.modules["mcp_servers"].free_port


@dataclass
class ProtectedServer:
    url: str
    provider: Any
    tool_tokens: list[str] = field(default_factory=list)


def create_app(base: str, provider: Any, origin: str, tool_tokens: list[str]) -> Any:
    settings = AuthSettings(
        issuer_url=AnyHttpUrl(base), resource_server_url=AnyHttpUrl(base + "/mcp"), validate_token_resource=True,
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=oauth_server.SCOPES),
        required_scopes=["mcp:read"],
    )
    server = MCPServer(name="capitals-protected", auth=settings, auth_server_provider=provider)

    @server.tool()
    def get_capital(country: str) -> str:
        """The capital city of a country."""
        token = get_access_token()
        tool_tokens.append(token.token if token else "")
        if country not in CAPITALS:
            raise ValueError(f"no capital known for {country!r}")
        return f"The capital of {country} is {CAPITALS[country]} (answered by the protected MCP server)."

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app = server.streamable_http_app()
    return CORSMiddleware(app, allow_origins=[origin], allow_methods=["GET", "POST", "DELETE"],
                          allow_headers=MCP_HEADERS, expose_headers=["Mcp-Session-Id", "WWW-Authenticate"])


@contextlib.contextmanager
def serve_capitals_protected(origin: str) -> Iterator[ProtectedServer]:
    """The protected server on ``http://127.0.0.1:PORT`` (uvicorn in a thread), answering CORS for ``origin``."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    provider = Provider(issuer=base + "/")  # the SDK writes its issuer with a trailing slash
    protected = ProtectedServer(base + "/mcp", provider)
    app = create_app(base, provider, origin, protected.tool_tokens)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, name="oauth-mcp", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield protected
    finally:
        server.should_exit = True
        thread.join(10)
