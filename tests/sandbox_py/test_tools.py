"""The user's Python tools in their sandbox (sandbox_py.tools): defined from source, called with the model's
arguments, answered as JSON text the worker passes on unchanged."""

from __future__ import annotations

import json

import pytest

from sandbox_py.tools import ToolHost

pytestmark = pytest.mark.pyodide

SOURCE = '''
def add(a: int, b: int = 1) -> int:
    """Add two numbers."""
    return a + b


def shout(text: str) -> dict:
    """Louder."""
    return {"text": text.upper()}
'''


def define(host: ToolHost, set_id: str, source: str) -> dict:
    return json.loads(host.define(set_id, source))


async def call(host: ToolHost, set_id: str, name: str, arguments: dict) -> dict:
    return json.loads(await host.call(set_id, name, json.dumps(arguments), "call-1"))


def test_a_set_lists_its_functions_as_tools() -> None:
    tools = define(ToolHost(), "s1", SOURCE)["tools"]
    assert [(t["name"], t["description"]) for t in tools] == [("add", "Add two numbers."), ("shout", "Louder.")]
    assert tools[0]["inputSchema"]["required"] == ["a"]
    assert tools[0]["inputSchema"]["properties"]["a"]["type"] == "integer"


async def test_a_call_runs_the_function_with_the_models_arguments() -> None:
    host = ToolHost()
    define(host, "s1", SOURCE)
    result = await call(host, "s1", "add", {"a": 2, "b": 3})
    assert result["is_error"] is False and result["content"] == [{"type": "text", "text": "5"}]
    structured = await call(host, "s1", "shout", {"text": "hi"})
    assert structured["structured_content"] == {"text": "HI"}


async def test_arguments_the_function_does_not_take_are_an_error_result() -> None:
    host = ToolHost()
    define(host, "s1", SOURCE)
    result = await call(host, "s1", "add", {"a": "many"})
    assert result["is_error"] is True
    assert result["content"][0]["text"].startswith("invalid arguments: a: Input should be a valid integer")


async def test_an_unknown_tool_names_those_defined() -> None:
    host = ToolHost()
    define(host, "s1", SOURCE)
    result = await call(host, "s1", "mul", {})
    assert result == {"content": [{"type": "text", "text": "no Python tool 'mul' (defined: add, shout)"}],
                      "is_error": True}
    other = await call(host, "s2", "add", {"a": 1})
    assert other["content"][0]["text"] == "no Python tool 'add' (defined: none)"


def test_a_broken_source_is_an_error_naming_its_line() -> None:
    answer = define(ToolHost(), "s1", "def ok() -> int:\n    return 1\n\ndef broken(:\n")
    assert answer == {"error": "line 4: SyntaxError: invalid syntax"}


async def test_an_empty_source_forgets_the_set() -> None:
    host = ToolHost()
    define(host, "s1", SOURCE)
    assert define(host, "s1", "  \n") == {"tools": []}
    assert (await call(host, "s1", "add", {"a": 1}))["is_error"] is True
