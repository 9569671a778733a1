"""Where the wire methods register: ``@method("name")`` puts a handler in :data:`METHODS`.

The method modules import this, never :mod:`pycore.wire`; the wire imports :mod:`pycore.methods` (which
imports every method module) and reads :data:`METHODS`. So the dependency runs one way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Emit = Callable[[dict[str, Any]], None]
Handler = Callable[[dict[str, Any], Emit], Awaitable[Any]]

METHODS: dict[str, Handler] = {}


def method(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        METHODS[name] = handler
        return handler

    return register
