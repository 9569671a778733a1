"""The bundled demo stdio MCP server, so tools work with no config: ``python -m server.demo``.

Tools: the current time in a time zone, a safe calculator, text statistics. One resource (what this
server is), one prompt (explain a time difference). Built on the official SDK's ``MCPServer``.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="orizuru-demo", version="0.1.0",
                   instructions="Small local utilities: time zones, arithmetic, text statistics.")

Number = float | int
_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Number], Number]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, Callable[..., Number]] = {  # one argument, or two (log, round)
    "sqrt": math.sqrt, "log": math.log, "log10": math.log10, "exp": math.exp, "sin": math.sin,
    "cos": math.cos, "tan": math.tan, "abs": abs, "round": round, "floor": math.floor, "ceil": math.ceil,
}
_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}
MAX_EXPRESSION = 500
MAX_EXPONENT = 10_000


def _eval(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and (type(node.value) is int or type(node.value) is float):  # not bool
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise ValueError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        if node.keywords:
            raise ValueError("keyword arguments are not supported")
        return _FUNCTIONS[node.func.id](*(_eval(a) for a in node.args))
    raise ValueError(f"unsupported syntax: {ast.dump(node)[:60]}")


@server.tool()
def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression: + - * / // % **, parentheses, pi, e, sqrt, log, sin, cos, round..."""
    if len(expression) > MAX_EXPRESSION:
        raise ValueError(f"expression longer than {MAX_EXPRESSION} characters")
    return repr(_eval(ast.parse(expression, mode="eval")))


@server.tool()
def current_time(timezone: str = "UTC") -> dict[str, str]:
    """The current date and time in an IANA time zone such as 'Europe/Paris' or 'Asia/Tokyo'."""
    try:
        now = datetime.now(ZoneInfo(timezone))
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise ValueError(f"unknown time zone {timezone!r}") from e
    return {"timezone": timezone, "iso": now.isoformat(timespec="seconds"), "weekday": now.strftime("%A"),
            "utc_offset": now.strftime("%z")}


@server.tool()
def text_stats(text: str) -> dict[str, int | float]:
    """Count characters, words, lines and sentences in a text, with an estimated reading time."""
    words = re.findall(r"\b\w+\b", text)
    sentences = [s for s in re.split(r"[.!?]+(?:\s|$)", text) if s.strip()]
    return {"characters": len(text), "words": len(words), "lines": text.count("\n") + 1 if text else 0,
            "sentences": len(sentences), "reading_minutes": round(len(words) / 230, 2)}


@server.resource("orizuru://demo/about", name="about", mime_type="text/markdown")
def about() -> str:
    """What this demo server is and where it runs."""
    return ("# Orizuru demo server\n\nA stdio MCP server started by the local relay for your browser session. "
            "It runs on your machine with an environment of only PATH, HOME and a few basics.\n")


@server.prompt()
def time_difference(city_a: str, city_b: str) -> str:
    """Ask for the current time difference between two cities."""
    return (f"What is the current time in {city_a} and in {city_b}, and what is the difference? "
            "Use the current_time tool with IANA time zone names.")


if __name__ == "__main__":
    server.run()
