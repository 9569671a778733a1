"""A package's names, imported on first use (PEP 562), so importing one light submodule of a package
(a model the wire contract names) does not import its heavy siblings (jinja2, the MCP SDK's types).

A package lists where each of its names lives and sets ``__getattr__ = lazy(__name__, WHERE)``; it also
imports the names under ``TYPE_CHECKING``, so type checkers see them as before.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """``__getattr__`` for ``package``: ``where`` maps each name to the submodule that defines it."""

    def getattr_(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return getattr_
