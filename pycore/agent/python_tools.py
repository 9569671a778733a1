"""Python functions as tools: the schema from type hints (pydantic), the description from the docstring.

    def forecast(city: str, days: Annotated[int, Field(ge=1, le=7)] = 3) -> str:
        '''The weather for the next days.'''

    tool = python_tool(forecast, source="python:mine")

Arguments are validated by the same pydantic adapter that made the schema, so the function gets
``int`` when it says ``int``; a validation failure is an ``is_error`` result the model can correct.
Sync and ``async def`` functions both work. Return values: ``str`` → text, a
:class:`~pycore.agent.tools.ToolResult` as is, anything else → JSON text plus structured content.

:func:`tools_from_source` does the same for Python source text the user typed in the app
(``tools.python``): every public top-level function it defines becomes a tool. Problems name the
line: a syntax error, an error while the source runs, a type pydantic cannot describe.
"""

from __future__ import annotations

import inspect
import json
import traceback
import typing
from collections.abc import Callable
from typing import Any

from pydantic import PydanticSchemaGenerationError, TypeAdapter, ValidationError

from pycore.agent.tools import AgentTool, Handler, ToolContext, ToolResult


class ToolSourceError(ValueError):
    """User-written tool source that cannot become tools; the message names the line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line


def python_tool(function: Callable[..., Any], *, source: str = "python", name: str | None = None) -> AgentTool:
    # Given a function, pydantic builds a call schema (the parameters as one object; validating calls
    # the function). TypeAdapter's annotation admits only type forms (TypeForm), so mypy refuses this use.
    adapter: TypeAdapter[Any] = TypeAdapter(function)  # type: ignore[arg-type]
    schema = adapter.json_schema()
    schema.pop("additionalProperties", None)  # not every vendor accepts it; extra keys are rejected anyway

    async def handler(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        try:
            value = adapter.validate_python(arguments)
        except ValidationError as e:
            return ToolResult.text(f"invalid arguments: {_validation_summary(e)}", is_error=True)
        if inspect.isawaitable(value):
            value = await value
        return _to_result(value)

    return AgentTool(
        name=name or function.__name__,
        description=inspect.getdoc(function) or "",
        input_schema=schema,
        handler=handler,
        source=source,
    )


def _validation_summary(error: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in error.errors())


def _to_result(value: Any) -> ToolResult:
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult.text(value)
    plain = TypeAdapter(type(value)).dump_python(value, mode="json") if value is not None else None
    return ToolResult(content=[{"type": "text", "text": json.dumps(plain, ensure_ascii=False)}], structured=plain)


def tools_from_source(set_id: str, source: str) -> list[AgentTool]:
    filename = f"<tools {set_id}>"
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as e:
        raise ToolSourceError(f"{type(e).__name__}: {e.msg}", e.lineno) from None
    namespace: dict[str, Any] = {"__name__": f"orizuru_tools_{set_id}"}
    try:
        exec(code, namespace)  # noqa: S102 - the user's own code, run in the user's own browser
    except Exception as e:  # noqa: BLE001 - any error in the user's source is reported with its line
        raise ToolSourceError(f"{type(e).__name__}: {e}", _line_in(e, filename)) from None
    functions = [
        value for key, value in namespace.items()
        if not key.startswith("_") and inspect.isfunction(value) and value.__code__.co_filename == filename
    ]
    if not functions:
        raise ToolSourceError("the source defines no public function (def name(...): ...) to offer as a tool")
    tools = []
    for function in functions:
        line = function.__code__.co_firstlineno
        try:  # resolve string annotations (``from __future__ import annotations``) in the source's namespace
            function.__annotations__ = typing.get_type_hints(function, include_extras=True)
        except Exception as e:  # noqa: BLE001 - a bad annotation is the user's to fix
            raise ToolSourceError(f"{function.__name__}: {type(e).__name__}: {e}", line) from None
        try:
            tools.append(python_tool(function, source=f"python:{set_id}"))
        except PydanticSchemaGenerationError as e:
            first = str(e).splitlines()[0]
            raise ToolSourceError(f"{function.__name__}: a parameter type has no JSON schema ({first})", line) from None
    for tool, function in zip(tools, functions, strict=True):
        tool.handler = _naming_lines(tool.handler, filename, function.__name__)
    return tools


def _naming_lines(handler: Handler, filename: str, name: str) -> Handler:
    async def run(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        try:
            return await handler(arguments, context)
        except Exception as e:  # noqa: BLE001 - reported to the model with the line of the user's source
            line = _line_in(e, filename)
            where = f" (line {line})" if line else ""
            return ToolResult.text(f"{name} raised {type(e).__name__}{where}: {e}", is_error=True)

    return run


def _line_in(error: BaseException, filename: str) -> int | None:
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename == filename]
    return lines[-1] if lines else None
