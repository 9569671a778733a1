"""Searching the MCP registry (pycore.mcp.registry) against a local stand-in serving its documented API shape
(registry_standin.py: not recorded from the live registry, which this machine cannot reach)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_servers import serve_asgi
from registry_standin import published, registry_app

from pycore.mcp.registry import RegistryError, search

REMOTE = "https://capitals.example/mcp"


@pytest.fixture
def registry() -> Iterator[tuple[str, list[str]]]:
    asked: list[str] = []
    with serve_asgi(lambda base: registry_app(published(REMOTE), asked)) as (base, _):
        yield base, asked


async def test_a_search_lists_each_servers_remotes_and_the_relay_entry_of_its_stdio_package(
        registry: tuple[str, list[str]]) -> None:
    base, asked = registry
    found = await search(base + "/", "Capitals")
    assert asked == ["/v0.1/servers?search=Capitals&version=latest&limit=20"]
    names = [server["name"] for server in found]
    assert names == ["io.github.orizuru/capitals", "io.github.orizuru/capitals-weather",
                     "com.example/capitals-hosted"]  # the deleted one is left out
    remote, package, hosted = found
    assert remote["title"] == "Capitals" and remote["version"] == "1.2.0"
    assert remote["description"] == "The capital city of a country, <b>over</b> streamable HTTP."  # text, as is
    assert remote["remotes"] == [{"type": "streamable-http", "url": REMOTE, "needs": [], "headers": []}]
    npm, nuget = package["packages"]
    assert npm["entry"] == {"mcpServers": {"capitals-weather": {
        "command": "npx", "args": ["-y", "@orizuru/capitals-weather@1.0.0", "<config_path>", "--port", "8080"],
        "env": {"API_KEY": "<API_KEY>"}}}}
    assert nuget["identifier"] == "Orizuru.Weather" and nuget["entry"] is None  # no runner for it: shown only
    [templated] = hosted["remotes"]  # the websocket one is not a transport the app speaks
    assert templated["url"] == "https://{tenant}.example.com/mcp" and templated["needs"] == ["tenant"]
    assert templated["headers"] == [{"name": "Authorization", "required": True}]


async def test_a_registry_that_is_not_one_is_named(registry: tuple[str, list[str]]) -> None:
    base, _ = registry
    with pytest.raises(RegistryError, match="answered HTTP 404"):
        await search(base + "/elsewhere", "x")
    with pytest.raises(RegistryError, match="not an http"):
        await search("file:///etc", "x")
