"""A registry entry as the Tools panel shows it (pycore.mcp.registry.entry), with no network."""

from __future__ import annotations

import pytest

from pycore.mcp.registry import entry

pytestmark = pytest.mark.pyodide


def test_only_http_remotes_are_kept_and_text_is_plain_and_bounded() -> None:
    shaped = entry({"server": {"name": "io.x/y\u202e", "description": "d" * 900, "remotes": [
        {"type": "streamable-http", "url": "javascript:alert(1)"}, {"type": "sse", "url": "https://h.example/sse"},
        {"type": "streamable-http", "url": "https://{a}.example/{b}", "variables": {"a": {"default": "eu"}}}]}})
    assert shaped is not None and shaped["name"] == "io.x/y" and len(shaped["description"]) == 500
    assert [(r["url"], r["needs"]) for r in shaped["remotes"]] == [
        ("https://h.example/sse", []), ("https://eu.example/{b}", ["b"])]


@pytest.mark.parametrize("item", [None, {}, {"server": {"name": ""}}, {"server": "x"},
                                  {"server": {"name": "a/b"}, "_meta": {
                                      "io.modelcontextprotocol.registry/official": {"status": "deleted"}}}])
def test_an_entry_without_a_name_or_deleted_is_left_out(item: object) -> None:
    assert entry(item) is None


def test_a_pypi_package_runs_with_uvx_and_an_oci_one_with_docker() -> None:
    shaped = entry({"server": {"name": "io.x/tool", "packages": [
        {"registryType": "pypi", "identifier": "mcp-tool", "version": "2.0", "transport": {"type": "stdio"}},
        {"registryType": "oci", "identifier": "ghcr.io/x/tool", "version": "2.0"},
        {"registryType": "npm", "identifier": "x-http", "transport": {"type": "streamable-http"}}]}})
    assert shaped is not None
    assert [p["entry"]["mcpServers"]["tool"] for p in shaped["packages"]] == [
        {"command": "uvx", "args": ["mcp-tool==2.0"]},
        {"command": "docker", "args": ["run", "-i", "--rm", "ghcr.io/x/tool:2.0"]}]
