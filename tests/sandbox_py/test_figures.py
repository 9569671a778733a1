"""matplotlib figures in the code interpreter (sandbox_py.figures): what a cell draws comes back as PNG files among
its outputs, as a notebook shows it. Run in CPython with the matplotlib Pyodide ships (the same version, pinned in
requirements.lock); in the page, Pyodide's own build of it comes from the package repository the user adds."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox_py import figures
from sandbox_py.cell import Evaluate, Notebook

# In CPython (pinned in requirements.lock); the Pyodide run of tests/sandbox_py has no package repository.
matplotlib = pytest.importorskip("matplotlib")


@pytest.fixture
def notebook(evaluate: Evaluate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Notebook]:
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.setattr(figures, "_where", [])
    before = matplotlib.get_backend()
    figures.install(str(tmp_path))
    matplotlib.use(figures.BACKEND, force=True)  # what MPLBACKEND does when the cell first imports matplotlib
    yield Notebook(evaluate, outputs=str(tmp_path))
    matplotlib.use(before, force=True)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "a PNG"
    width, height = struct.unpack(">II", data[16:24])  # IHDR
    return width, height


DRAW = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.title('squares')\n"


def test_install_names_this_module_as_matplotlibs_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.setattr(figures, "_where", [])
    figures.install(str(tmp_path))
    assert os.environ["MPLBACKEND"] == "module://sandbox_py.mpl_backend"


async def test_a_figure_left_open_comes_back_as_a_png(notebook: Notebook, tmp_path: Path) -> None:
    result = await notebook.run(DRAW)
    assert result["error"] is None and result["written"] == ["figure-1.png"]
    assert png_size(tmp_path / "figure-1.png") == (640, 480)  # matplotlib's default size at 100 dpi
    assert (await notebook.run("plt.get_fignums()"))["value"] == "[]"  # shown, then closed: the next cell starts clean


async def test_show_keeps_each_figure_of_a_loop_and_says_nothing_about_it(notebook: Notebook) -> None:
    code = "import matplotlib.pyplot as plt\nfor n in (2, 3):\n    plt.plot([x**n for x in range(5)])\n    plt.show()\n"
    result = await notebook.run(code)
    assert result["written"] == ["figure-1.png", "figure-2.png"]
    assert result["stderr"] == ""  # no "FigureCanvasAgg is non-interactive" warning for the model to puzzle over


async def test_a_later_figure_does_not_overwrite_an_earlier_ones_file(notebook: Notebook, tmp_path: Path) -> None:
    await notebook.run(DRAW)
    first = (tmp_path / "figure-1.png").read_bytes()
    result = await notebook.run("plt.bar(['a', 'b'], [3, 5])")
    assert result["written"] == ["figure-2.png"]
    assert (tmp_path / "figure-1.png").read_bytes() == first


async def test_a_cell_that_fails_after_drawing_still_shows_what_it_drew(notebook: Notebook) -> None:
    result = await notebook.run(DRAW + "1 / 0")
    assert result["written"] == ["figure-1.png"]
    assert result["error"] is not None and "ZeroDivisionError" in result["error"]


async def test_no_matplotlib_no_files(notebook: Notebook) -> None:
    assert (await notebook.run("x = 1"))["written"] == []
