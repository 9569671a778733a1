"""A notebook cell: run it, capture what it prints, and report its value, its error and the files it wrote.

    notebook = Notebook(eval_code_async)            # Pyodide's evaluator, passed in by web/sandbox/worker.js
    result = await notebook.run(code)               # -> CellResult (stdout, stderr, value, error, written)

The notebook's variables persist between runs (one namespace); each run's files are those under ``outputs``
that are new or changed since the run began, with the matplotlib figures it left open (sandbox_py.figures).
"""

from __future__ import annotations

import contextlib
import io
import os
import traceback
from collections.abc import Awaitable
from typing import Any, Protocol, TypedDict

from sandbox_py.figures import save_figures

LIMIT = 100_000  # characters of each text a cell returns (stdout, stderr, value, error)
OUTPUTS = "/mnt/outputs"
CELL = "<cell>"  # the file name the cell's code runs under: its frames are the traceback's


class Evaluate(Protocol):
    """Runs source in a namespace and returns the value of its last expression (Pyodide's ``eval_code_async``)."""

    def __call__(self, source: str, /, globals: dict[str, Any], *, filename: str) -> Awaitable[object]: ...


class CellResult(TypedDict):
    stdout: str
    stderr: str
    value: str | None
    error: str | None
    written: list[str]  # paths under ``outputs``, relative to it, sorted


def clip(text: str) -> str:
    """The text, or its first ``LIMIT`` characters and how many more there were."""
    if len(text) <= LIMIT:
        return text
    return text[:LIMIT] + f"\n[... {len(text) - LIMIT} more characters not shown]"


def listing(root: str) -> dict[str, tuple[int, int]]:
    """Every file under ``root``: its relative path -> (size, modification time in ns)."""
    out = {}
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            info = os.stat(path)
            out[os.path.relpath(path, root)] = (info.st_size, info.st_mtime_ns)
    return out


def cell_traceback(error: BaseException) -> str:
    """The error's traceback with only the cell's own frames (not the evaluator's nor the notebook's)."""
    report = traceback.TracebackException.from_exception(error)
    report.stack = traceback.StackSummary.from_list([f for f in report.stack if f.filename == CELL])
    return "".join(report.format())


class Notebook:
    """One conversation's notebook: its variables, kept between runs."""

    def __init__(self, evaluate: Evaluate, *, outputs: str = OUTPUTS) -> None:
        self.evaluate = evaluate
        self.outputs = outputs
        self.namespace: dict[str, Any] = {}

    async def run(self, code: str) -> CellResult:
        before = listing(self.outputs)
        stdout, stderr = io.StringIO(), io.StringIO()
        value = error = None
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                result = await self.evaluate(code, globals=self.namespace, filename=CELL)
                if result is not None:
                    value = clip(repr(result))
            except BaseException as e:  # SystemExit and KeyboardInterrupt too: the notebook goes on
                error = clip(cell_traceback(e))
            try:
                save_figures(self.outputs)  # what it drew with matplotlib, as a notebook shows it
            except Exception as e:
                error = clip(f"{error or ''}the figures could not be saved: {e!r}")
        after = listing(self.outputs)
        written = sorted(name for name, stamp in after.items() if before.get(name) != stamp)
        return {"stdout": clip(stdout.getvalue()), "stderr": clip(stderr.getvalue()), "value": value,
                "error": error, "written": written}
