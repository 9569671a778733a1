"""Code mode in the sandbox (sandbox_py.code_tools): the stubs made from a run's tools, and the call bridge over a
fake channel standing for the page (which, in the app, passes each call to the core's approval)."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest

from sandbox_py import code_tools
from sandbox_py.cell import Evaluate, Notebook
from sandbox_py.code_tools import Entry, ToolDenied, ToolError, Tools

pytestmark = pytest.mark.pyodide

SUM: Entry = {"server": "everything", "tool": "get_sum", "name": "get-sum",
              "description": "Returns the sum of two numbers.",
              "inputSchema": {"type": "object", "properties": {"a": {"type": "number", "description": "First number"},
                                                              "b": {"type": "number", "description": "Second number"},
                                                              "round": {"type": "boolean"}},
                              "required": ["a", "b"]},
              "ref": {"server": "url:http://127.0.0.1:9/mcp", "tool": "get-sum"}}


class FakePage:
    """The page's side of the channel: records each request and answers as told."""

    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []

    async def __call__(self, request: str) -> str:
        self.requests.append(json.loads(request))
        return json.dumps(self.answers.pop(0))


def tools_with(page: FakePage, *catalog: Entry) -> Tools:
    tools = Tools()
    tools._channel = page
    tools.define(list(catalog))
    return tools


def text(value: str) -> dict[str, Any]:
    return {"result": {"content": [{"type": "text", "text": value}]}}


def test_a_stub_has_the_tools_parameters_and_its_description_as_docstring() -> None:
    stub = tools_with(FakePage(), SUM).everything.get_sum
    signature = inspect.signature(stub)
    assert list(signature.parameters) == ["a", "b", "round"]
    assert [p.kind for p in signature.parameters.values()] == [inspect.Parameter.KEYWORD_ONLY] * 3
    assert signature.parameters["a"].annotation is float and signature.parameters["round"].default is None
    assert signature.parameters["a"].default is inspect.Parameter.empty  # required
    assert stub.__doc__ == ("Returns the sum of two numbers.\n\nArgs:\n    a: First number\n    b: Second number\n"
                            "    round:")
    assert stub.__name__ == "get_sum"


async def test_a_stub_and_call_by_name_send_the_servers_id_and_the_tools_own_name() -> None:
    page = FakePage(text("The sum of 1 and 2 is 3."), text("The sum of 4 and 5 is 9."), text("again"))
    tools = tools_with(page, SUM)
    assert await tools.everything.get_sum(a=1, b=2) == "The sum of 1 and 2 is 3."
    assert await tools.call("everything.get-sum", {"a": 4, "b": 5}) == "The sum of 4 and 5 is 9."
    assert await tools.call("everything.get_sum", {"a": 0, "b": 0}) == "again"  # its Python name works too
    assert page.requests[0] == {"server": "url:http://127.0.0.1:9/mcp", "tool": "get-sum",
                                "arguments": {"a": 1, "b": 2}}
    assert page.requests[1]["arguments"] == {"a": 4, "b": 5}


async def test_a_wrong_argument_fails_in_python_before_anything_is_sent() -> None:
    page = FakePage()
    tools = tools_with(page, SUM)
    with pytest.raises(TypeError):
        await tools.everything.get_sum(a=1)
    with pytest.raises(TypeError):
        await tools.everything.get_sum(a=1, b=2, c=3)
    with pytest.raises(ToolError, match="no tool 'everything.nope'.*everything.get_sum"):
        await tools.call("everything.nope", {})
    with pytest.raises(AttributeError, match="no server 'other'"):
        tools.other  # noqa: B018
    assert page.requests == []


async def test_a_denied_call_raises_tool_denied_and_a_failed_one_tool_error() -> None:
    tools = tools_with(FakePage({"denied": "you did not allow get-sum"},
                                {"result": {"content": [{"type": "text", "text": "boom"}], "isError": True}},
                                {"error": "not a tool of this run"}), SUM)
    with pytest.raises(ToolDenied, match="you did not allow get-sum"):
        await tools.everything.get_sum(a=1, b=2)
    with pytest.raises(ToolError, match="boom"):
        await tools.everything.get_sum(a=1, b=2)
    with pytest.raises(ToolError, match="not a tool of this run"):
        await tools.everything.get_sum(a=1, b=2)


def test_a_tool_with_an_output_schema_returns_a_dict_whose_fields_the_docstring_names() -> None:
    weather: Entry = {**SUM, "tool": "weather", "name": "weather", "description": "The weather.",
                      "inputSchema": {"type": "object"},
                      "outputSchema": {"type": "object", "properties": {"temperature": {"description": "in °C"},
                                                                        "sky": {"type": "string"}}}}
    stub = tools_with(FakePage(), weather).everything.weather
    assert inspect.signature(stub).return_annotation is dict
    assert stub.__doc__ == "The weather.\n\nReturns a dict:\n    temperature: in °C\n    sky:"
    assert inspect.signature(tools_with(FakePage(), SUM).everything.get_sum).return_annotation is Any


async def test_structured_content_comes_back_as_data_and_other_content_as_items() -> None:
    image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
    tools = tools_with(FakePage({"result": {"content": [], "structuredContent": {"rows": [1, 2]}}},
                                {"result": {"content": [image]}}), SUM)
    assert await tools.everything.get_sum(a=1, b=2) == {"rows": [1, 2]}
    assert await tools.everything.get_sum(a=1, b=2) == [image]


async def test_without_a_running_call_nothing_is_sent() -> None:
    tools = Tools()
    tools.define([SUM])
    with pytest.raises(ToolError, match="only while a python call runs"):
        await tools.everything.get_sum(a=1, b=2)


def test_names_that_are_not_python_identifiers_are_refused() -> None:
    with pytest.raises(ValueError, match="not Python names"):
        Tools().define([{**SUM, "tool": "get-sum"}])


async def test_a_cell_imports_orizuru_and_catches_a_denial(evaluate: Evaluate) -> None:
    page = FakePage(text("The sum of 1 and 2 is 3."), {"denied": "you did not allow get-sum"})
    code_tools.install(page)
    code_tools.define(json.dumps([SUM]))
    try:
        notebook = Notebook(evaluate, outputs="/nonexistent")
        ran = await notebook.run("from orizuru import tools, ToolDenied\n"
                                 "print(await tools.everything.get_sum(a=1, b=2))\n"
                                 "try:\n"
                                 "    await tools.call('everything.get-sum', {'a': 2, 'b': 2})\n"
                                 "except ToolDenied as e:\n"
                                 "    print('refused:', e)\n")
    finally:
        code_tools.tools._channel = None
    assert ran["error"] is None
    assert ran["stdout"] == "The sum of 1 and 2 is 3.\nrefused: you did not allow get-sum\n"
