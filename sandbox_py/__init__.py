"""The Python that runs in the code interpreter's sandbox (web/sandbox/), not in the agent core.

The page ships this package to each sandbox as a zip (build.py), and the sandbox's worker (web/sandbox/worker.js)
unpacks it beside the standard library before any model code runs:

- ``sandbox_py.cell``: a notebook, one per conversation: runs a cell with its output captured, the last
  expression's value, a traceback of the cell's own frames, and the files the cell wrote.
- ``sandbox_py.tools``: the user's Python tools (Tools → Python tools), in a sandbox of their own; imports
  ``pycore.agent.python_tools``, whose wheels the page sends to that sandbox only.
- ``sandbox_py.code_tools``: code mode, the ``orizuru`` module a cell imports to call the conversation's tools;
  each call goes to the page (and the core's approval) over a channel the worker passes in.

Nothing here is a security boundary: model code runs in the same interpreter and can reach all of it. The
boundaries are the sandbox's frame and worker (see the header of web/sandbox/worker.js). Pyodide itself stays out
of this package: the worker passes in what only Pyodide has (its ``eval_code_async``), so every line here runs
and is measured in CPython too (tests/sandbox_py).
"""
