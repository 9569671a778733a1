"""The sandbox's Python (sandbox_py/), tested in CPython and, through tests/pyodide, in real Pyodide.

In Pyodide a notebook runs with Pyodide's own ``eval_code_async``, as web/sandbox/worker.js gives it; in CPython
with a small stand-in of the same shape (the last expression's value, top-level ``await``).
"""

from __future__ import annotations

import ast
import inspect
import sys
from typing import Any

import pytest

from sandbox_py.cell import Evaluate


async def evaluate_here(source: str, /, globals: dict[str, Any], *, filename: str) -> object:
    """CPython's stand-in for Pyodide's eval_code_async: runs the cell and returns its last expression's value."""
    module = ast.parse(source, filename)
    last = module.body.pop() if module.body and isinstance(module.body[-1], ast.Expr) else None
    for tree, mode in ((module, "exec"), *(((ast.Expression(last.value), "eval"),) if last else ())):
        code = compile(tree, filename, mode, flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        value = eval(code, globals)
        if code.co_flags & inspect.CO_COROUTINE:
            value = await value
    return value if last else None


@pytest.fixture
def evaluate() -> Evaluate:
    if sys.platform == "emscripten":
        from pyodide.code import eval_code_async

        return eval_code_async
    return evaluate_here
