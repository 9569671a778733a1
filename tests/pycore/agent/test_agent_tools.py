"""Tool naming, approval defaults, Python tools (functions and source text), MCP results and prompts."""

from __future__ import annotations

import re
from typing import Annotated

import mcp_types as t
import pytest
from agent_helpers import Calls
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from pycore.adapters import VENDORS, adapter_class
from pycore.agent.approval import ApprovalPolicy, default_policy
from pycore.agent.mcp_prompts import prompt_messages
from pycore.agent.mcp_tools import tool_result
from pycore.agent.python_tools import ToolSourceError, python_tool, tools_from_source
from pycore.agent.tools import PORTABLE_NAME, ToolContext, ToolRegistry, ToolResult
from pycore.messages import ImagePart, TextPart

pytestmark = pytest.mark.pyodide
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
CTX = ToolContext(call_id="c1")


# -- names ---------------------------------------------------------------------------------------

def test_clashing_names_are_namespaced_by_source_and_map_back() -> None:
    calls = Calls()
    a, b, c = calls.tool("search", source="mcp:docs"), calls.tool("search", source="mcp:web"), calls.tool("fetch")
    registry = ToolRegistry([a, b, c])
    assert [name for name, _ in registry.items()] == ["docs__search", "web__search", "fetch"]
    assert registry.resolve("web__search") is b and registry.resolve("fetch") is c
    assert registry.resolve("search") is None


def test_names_are_sanitized_and_long_names_shortened_apart() -> None:
    calls = Calls()
    long_a, long_b = "x" * 70 + "a", "x" * 70 + "b"
    registry = ToolRegistry([calls.tool("get weather.now"), calls.tool("9lives"), calls.tool(long_a),
                             calls.tool(long_b), calls.tool("ünïcode")])
    names = [name for name, _ in registry.items()]
    assert names[:2] == ["get_weather_now", "_9lives"]
    assert len(names[2]) == len(names[3]) == 64 and names[2] != names[3]
    assert names[4] == "_n_code"
    assert [registry.resolve(n).name for n in names] == ["get weather.now", "9lives", long_a, long_b, "ünïcode"]


@given(st.lists(st.tuples(st.text(min_size=1, max_size=90), st.sampled_from(["mcp:a", "mcp:b.c", "page"])),
                min_size=1, max_size=8))
def test_every_model_name_is_accepted_by_every_vendor_and_unique(tools: list[tuple[str, str]]) -> None:
    calls = Calls()
    registry = ToolRegistry([calls.tool(name, source=source) for name, source in tools])
    names = [name for name, _ in registry.items()]
    assert len({n.lower() for n in names}) == len(names)
    for name in names:
        assert PORTABLE_NAME.match(name)
        assert all(adapter_class(v).tool_name.match(name) for v in VENDORS), name
    assert [registry.resolve(n) for n in names] == registry.tools


# -- approval ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("annotations", "trusted_policy"), [
    ({"readOnlyHint": True}, "allow"),
    ({"readOnlyHint": True, "openWorldHint": False}, "allow"),
    ({"readOnlyHint": True, "openWorldHint": True}, "allow"),
    ({"destructiveHint": True}, "ask"),
    ({"readOnlyHint": True, "destructiveHint": True}, "ask"),  # contradictory
    ({"readOnlyHint": False, "destructiveHint": False}, "allow"),
    ({}, "allow"),
    (None, "allow"),
])
def test_mcp_defaults_ask_unless_the_server_is_trusted_and_hints_may_only_ask_more(
        annotations: dict | None, trusted_policy: str) -> None:
    """Annotations are claims (issue "Trust boundaries" item 2): they never make an MCP tool run unasked."""
    tool = Calls().tool("x", source="mcp:s", annotations=annotations)
    assert default_policy(tool) == "ask"
    assert default_policy(tool, trusted=True) == trusted_policy
    tool.changed = True  # added or changed by tools/list_changed since the connection
    assert default_policy(tool, trusted=True) == "ask"


def test_python_and_page_tools_default_to_allow_and_user_choices_win() -> None:
    calls = Calls()
    python, page, mcp = calls.tool("a"), calls.tool("b", source="page"), calls.tool("c", source="mcp:s")
    assert default_policy(python) == default_policy(page) == "allow"
    policy = ApprovalPolicy([{"source": "mcp:s", "tool": "c", "policy": "deny"},
                             {"source": "python:test", "tool": "a", "policy": "ask"}])
    assert policy.for_tool(mcp) == "deny" and policy.for_tool(python) == "ask"
    assert policy.for_tool(page) == "allow"
    with pytest.raises(ValueError, match="policy for tool 'a' of python:test is 'sometimes'"):
        ApprovalPolicy([{"source": "python:test", "tool": "a", "policy": "sometimes"}])


# -- Python tools --------------------------------------------------------------------------------

class Place(BaseModel):
    city: str
    country: str = "FR"


def forecast(place: Place, days: Annotated[int, Field(ge=1, le=7, description="how many days")] = 3) -> dict:
    """The weather for the next days."""
    return {"city": place.city, "days": days}


async def slow_echo(text: str) -> str:
    return text.upper()


async def test_a_python_function_becomes_a_tool_with_its_schema_and_validated_arguments() -> None:
    tool = python_tool(forecast)
    assert tool.name == "forecast" and tool.description == "The weather for the next days."
    schema = tool.input_schema
    assert schema["required"] == ["place"]
    assert schema["properties"]["days"] == {"default": 3, "description": "how many days", "maximum": 7, "minimum": 1,
                                            "title": "Days", "type": "integer"}
    result = await tool.handler({"place": {"city": "Lyon"}, "days": "2"}, CTX)
    assert result.structured == {"city": "Lyon", "days": 2} and not result.is_error
    assert result.content == [{"type": "text", "text": '{"city": "Lyon", "days": 2}'}]
    bad = await tool.handler({"place": {}, "days": 9}, CTX)
    assert bad.is_error
    assert bad.content[0]["text"] == ("invalid arguments: place.city: Field required; "
                                      "days: Input should be less than or equal to 7")
    assert (await python_tool(slow_echo).handler({"text": "hi"}, CTX)).content == [{"type": "text", "text": "HI"}]


SOURCE = '''\
import math

def hypot(a: float, b: float) -> float:
    """Length of the hypotenuse."""
    return math.hypot(a, b)

def divide(a: int, b: int) -> float:
    return a / b

def _helper():
    pass
'''


async def test_tools_from_source_text() -> None:
    hypot, divide = tools_from_source("geo", SOURCE)
    assert (hypot.name, hypot.description, hypot.source) == ("hypot", "Length of the hypotenuse.", "python:geo")
    assert (await hypot.handler({"a": 3, "b": 4}, CTX)).content[0]["text"] == "5.0"
    failed = await divide.handler({"a": 1, "b": 0}, CTX)
    assert failed.is_error and failed.content[0]["text"] == "divide raised ZeroDivisionError (line 8): division by zero"


@pytest.mark.parametrize(("source", "message"), [
    ("def f(:\n    pass\n", r"line 1: SyntaxError: "),
    ("x = 1\n\n\ny = undefined_name\n", r"line 4: NameError: name 'undefined_name' is not defined"),
    ("import math\n", r"defines no public function"),
    ("class Opaque:\n    pass\n\ndef f(x: Opaque) -> str:\n    return ''\n", r"line 4: f: a parameter type"),
])
def test_source_problems_name_the_line(source: str, message: str) -> None:
    with pytest.raises(ToolSourceError, match=message):
        tools_from_source("s", source)


# -- MCP results and prompts ---------------------------------------------------------------------

def test_every_mcp_content_type_reaches_page_and_model() -> None:
    result = t.CallToolResult(content=[
        t.TextContent(type="text", text="hello"),
        t.ImageContent(type="image", data=PNG, mime_type="image/png"),
        t.AudioContent(type="audio", data="UklGRg==", mime_type="audio/wav"),
        t.ResourceLink(type="resource_link", uri="file:///etc/passwd", name="passwd"),
        t.EmbeddedResource(type="resource", resource=t.TextResourceContents(uri="test://doc", text="embedded")),
    ], structured_content={"ok": True}, is_error=False)
    mapped = tool_result(result)
    assert [c["type"] for c in mapped.content] == ["text", "image", "audio", "resource_link", "resource"]
    assert mapped.content[1] == {"type": "image", "data": PNG, "mimeType": "image/png"}
    assert mapped.structured == {"ok": True}
    model = mapped.model_content()
    assert isinstance(model[1], ImagePart) and model[1].mime_type == "image/png"
    texts = [p.text for p in model if isinstance(p, TextPart)]
    assert texts[0] == "hello" and "not shown to the model" in texts[1]
    assert texts[2] == "[resource link: passwd <file:///etc/passwd>, not fetched]"
    assert texts[3] == "[resource test://doc]\nembedded"


def test_is_error_and_structured_only_results() -> None:
    failed = tool_result(t.CallToolResult(content=[t.TextContent(type="text", text="no such city")], is_error=True))
    assert failed.is_error and failed.model_content() == [TextPart(text="no such city")]
    structured = tool_result(t.CallToolResult(content=[], structured_content={"celsius": 21.5}))
    assert structured.model_content() == [TextPart(text='{"celsius": 21.5}')] and structured.schema_problem is None


def test_structured_content_that_breaks_the_output_schema_is_flagged_for_the_page_too() -> None:
    schema = {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]}
    mapped = tool_result(t.CallToolResult(content=[], structured_content={"celsius": "warm"}), schema)
    assert mapped.schema_problem and "celsius" in mapped.schema_problem
    assert mapped.structured == {"celsius": "warm"}  # shown as it came, not hidden
    assert any("does not match the tool's outputSchema" in p.text for p in mapped.model_content()
               if isinstance(p, TextPart))


def test_page_content_items_become_model_parts() -> None:
    result = ToolResult(content=[{"type": "text", "text": "a"}, {"type": "image", "data": PNG, "mimeType": "image/png"},
                                 {"type": "image", "data": PNG, "mimeType": "image/tiff"}])
    text, image, note = result.model_content()
    assert text == TextPart(text="a") and isinstance(image, ImagePart)
    assert re.fullmatch(r"\[image image/tiff: not shown to the model\]", note.text)


def test_a_prompt_becomes_messages() -> None:
    result = t.GetPromptResult(messages=[
        t.PromptMessage(role="user", content=t.TextContent(type="text", text="Review this")),
        t.PromptMessage(role="assistant", content=t.ImageContent(type="image", data=PNG, mime_type="image/png")),
        t.PromptMessage(role="user", content=t.EmbeddedResource(
            type="resource", resource=t.TextResourceContents(uri="file:///a.py", text="print(1)"))),
    ])
    first, second, third = prompt_messages(result)
    assert first.role == "user" and first.parts == [TextPart(text="Review this")]
    assert second.role == "assistant" and isinstance(second.parts[0], ImagePart)
    assert third.parts == [TextPart(text="[resource file:///a.py]\nprint(1)")]


async def test_source_with_postponed_annotations_and_its_own_models() -> None:
    source = ("from __future__ import annotations\nfrom pydantic import BaseModel\n\n"
              "class Item(BaseModel):\n    name: str\n    qty: int = 1\n\n"
              "def order(items: list[Item]) -> str:\n    return ', '.join(f'{i.qty} {i.name}' for i in items)\n")
    [order] = tools_from_source("shop", source)
    assert order.input_schema["properties"]["items"]["items"] == {"$ref": "#/$defs/Item"}
    result = await order.handler({"items": [{"name": "pear", "qty": 2}, {"name": "fig"}]}, CTX)
    assert result.content == [{"type": "text", "text": "2 pear, 1 fig"}]
