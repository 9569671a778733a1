"""Orizuru's agent core.

Pure Python that runs unchanged in CPython and in Pyodide (inside the page's Web Worker).
Importing the package is cheap on purpose: it is on the browser's boot path, so submodules
are imported by whoever needs them, not here.
"""

__version__ = "0.1.0"
