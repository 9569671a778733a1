"""A notebook cell as the code interpreter runs it (sandbox_py.cell): what the model reads back from a run."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox_py.cell import LIMIT, Evaluate, Notebook, clip

pytestmark = pytest.mark.pyodide


@pytest.fixture
def notebook(evaluate: Evaluate, tmp_path: Path) -> Notebook:
    return Notebook(evaluate, outputs=str(tmp_path))


async def test_a_run_returns_what_it_printed_and_its_last_value(notebook: Notebook) -> None:
    result = await notebook.run("import sys\nprint('out')\nprint('err', file=sys.stderr)\n6 * 7")
    assert result == {"stdout": "out\n", "stderr": "err\n", "value": "42", "error": None, "written": []}


async def test_a_statement_last_has_no_value(notebook: Notebook) -> None:
    assert (await notebook.run("x = 1"))["value"] is None


async def test_variables_persist_between_runs(notebook: Notebook) -> None:
    await notebook.run("import math\nradius = 2")
    assert (await notebook.run("round(math.pi * radius ** 2, 2)"))["value"] == "12.57"


async def test_top_level_await_runs(notebook: Notebook) -> None:
    assert (await notebook.run("import asyncio\nawait asyncio.sleep(0)\n'awaited'"))["value"] == "'awaited'"


async def test_an_error_shows_the_cells_frames_only(notebook: Notebook) -> None:
    result = await notebook.run("def inner():\n    return 1 / 0\n\nprint('before')\ninner()")
    error = result["error"]
    assert error is not None and error.startswith("Traceback (most recent call last):")
    assert error.endswith("ZeroDivisionError: division by zero\n")
    assert error.count('File "<cell>"') == 2, error  # the call and the division: not the evaluator, not ours
    assert "cell.py" not in error and "conftest" not in error and "_base.py" not in error
    assert result["stdout"] == "before\n" and result["value"] is None


async def test_exit_ends_the_cell_not_the_notebook(notebook: Notebook) -> None:
    result = await notebook.run("kept = 'yes'\nraise SystemExit(3)")
    assert result["error"] is not None and "SystemExit: 3" in result["error"]
    assert (await notebook.run("kept"))["value"] == "'yes'"


async def test_long_output_is_clipped_saying_how_much(notebook: Notebook) -> None:
    result = await notebook.run(f"print('a' * {LIMIT + 5}, end='')\n'b' * {LIMIT + 1}")
    assert result["stdout"] == "a" * LIMIT + "\n[... 5 more characters not shown]"
    assert result["value"] is not None and result["value"].endswith("\n[... 3 more characters not shown]")  # quotes


def test_text_within_the_limit_is_kept_whole() -> None:
    assert clip("a" * LIMIT) == "a" * LIMIT


async def test_the_files_a_run_wrote_are_those_new_or_changed(notebook: Notebook, tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("kept")
    (tmp_path / "redone.csv").write_text("a")
    code = (f"from pathlib import Path\nout = Path({str(tmp_path)!r})\n(out / 'plots').mkdir()\n"
            "(out / 'plots' / 'fig.svg').write_text('<svg/>')\n(out / 'redone.csv').write_text('a,b')\n"
            "(out / 'new.json').write_text('{}')")
    result = await notebook.run(code)
    assert result["written"] == ["new.json", "plots/fig.svg", "redone.csv"]
    assert (await notebook.run("1"))["written"] == []
