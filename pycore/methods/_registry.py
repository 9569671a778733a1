"""Where the wire methods register: ``@method("name")`` puts a handler in :data:`METHODS`. A handler is
``async (params, emit, state)``: ``state`` is the worker's :class:`~pycore.methods._state.WorkerState`.

The method modules import this, never :mod:`pycore.wire`; the wire imports :mod:`pycore.methods` (which
imports every method module) and reads :data:`METHODS`. So the dependency runs one way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pycore.methods._state import WorkerState

Emit = Callable[[dict[str, Any]], None]
Handler = Callable[[dict[str, Any], Emit, "WorkerState"], Awaitable[Any]]

METHODS: dict[str, Handler] = {}


def method(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        METHODS[name] = handler
        return handler

    return register
