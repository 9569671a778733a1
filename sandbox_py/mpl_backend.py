"""matplotlib's backend in the code interpreter (``MPLBACKEND=module://sandbox_py.mpl_backend``, set by
sandbox_py.figures.install): figures are drawn by Agg in memory, and ``plt.show()`` writes them as PNG files among
the cell's outputs (sandbox_py.figures), as a notebook's inline figures do. Imported by matplotlib only."""

from __future__ import annotations

from matplotlib.backend_bases import FigureManagerBase as FigureManager
from matplotlib.backends.backend_agg import FigureCanvasAgg as FigureCanvas

from sandbox_py.figures import shown

__all__ = ["FigureCanvas", "FigureManager", "show"]


def show(*_args: object, **_kwargs: object) -> None:
    shown()
