"""Figures a cell drew with matplotlib, kept as PNG files among the cell's outputs, so that the reply shows them
(and each opens as an artifact) like any picture the code wrote.

    install(outputs)        at boot, before matplotlib is imported: figures are drawn in memory (there is no
                            display in a worker), by this module's backend
    save_figures(outputs)   after a cell (sandbox_py.cell.Notebook.run) and at each ``plt.show()``: every open
                            pyplot figure written as ``figure-<n>.png`` under ``outputs``, then closed
    shown()                 what the backend's ``show`` does: save_figures to the folder install() was given

The backend itself is sandbox_py.mpl_backend, apart so that nothing imports matplotlib until a cell has.
"""

from __future__ import annotations

import os
import sys

BACKEND = "module://sandbox_py.mpl_backend"
DPI = 100  # matplotlib's own default: a 6.4 x 4.8 in figure is 640 x 480 pixels
_where: list[str] = []  # the outputs folder install() was given (none: show() does nothing)


def install(outputs: str) -> None:
    os.environ["MPLBACKEND"] = BACKEND
    _where[:] = [outputs]


def _free_name(outputs: str) -> str:
    taken = set(os.listdir(outputs)) if os.path.isdir(outputs) else set()
    number = 1
    while f"figure-{number}.png" in taken:
        number += 1
    return f"figure-{number}.png"


def save_figures(outputs: str) -> list[str]:
    """Write every open figure to ``outputs`` and close it; the names written, in figure order."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    names = []
    for number in pyplot.get_fignums():
        name = _free_name(outputs)
        pyplot.figure(number).savefig(os.path.join(outputs, name), dpi=DPI, format="png")
        names.append(name)
    pyplot.close("all")
    return names


def shown() -> None:
    """``plt.show()``: the figures drawn so far become files now (a loop that draws and shows keeps each one)."""
    if _where:
        save_figures(_where[0])
