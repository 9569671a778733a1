"""Check a JSON body against a vendor SDK's request TypedDict, deeply (test helper, CPython only).

The SDKs' TypedDicts are only type hints: nothing validates them at run time, and pydantic treats
their ``Iterable`` fields lazily. This walks the hints: required keys present, no unknown key,
literals matched, unions tried in turn. It returns the problems found (empty list = valid).
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any

import pydantic
import typing_extensions

_SEQUENCES = (list, collections.abc.Iterable, collections.abc.Sequence, typing.List)  # noqa: UP006
_MAPPINGS = (dict, collections.abc.Mapping, typing.Dict)  # noqa: UP006
_WRAPPERS = (typing_extensions.Required, typing_extensions.NotRequired, typing_extensions.ReadOnly, typing.Annotated)


def check(value: Any, hint: Any, path: str = "$") -> list[str]:
    hint, _ = _unwrap(hint)
    if hint is Any or hint is object:
        return []
    if typing_extensions.is_typeddict(hint):
        return _typeddict(value, hint, path)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _union(value, typing.get_args(hint), path)
    if origin in (typing.Literal, typing_extensions.Literal):
        return [] if value in typing.get_args(hint) else [f"{path}: {value!r} not in {typing.get_args(hint)}"]
    if origin in _SEQUENCES or hint in _SEQUENCES:
        return _sequence(value, hint, path)
    if origin in _MAPPINGS or hint in _MAPPINGS:
        return [] if isinstance(value, dict) else [f"{path}: expected an object"]
    return _scalar(value, hint, path)


def _unwrap(hint: Any) -> tuple[Any, bool]:
    required = False
    while typing.get_origin(hint) in _WRAPPERS:
        required = required or typing.get_origin(hint) is typing_extensions.Required
        hint = typing.get_args(hint)[0]
    return hint, required


def _typeddict(value: Any, hint: Any, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: expected an object for {hint.__name__}"]
    hints = typing_extensions.get_type_hints(hint, include_extras=True)
    problems = [f"{path}: unknown key {k!r} for {hint.__name__}" for k in value if k not in hints]
    for key, field_hint in hints.items():
        _, required = _unwrap(field_hint)
        if key not in value:
            if required or key in hint.__required_keys__ and key != "stream":
                problems.append(f"{path}: missing {key!r} for {hint.__name__}")
            continue
        problems += check(value[key], field_hint, f"{path}.{key}")
    return problems


def _union(value: Any, options: tuple[Any, ...], path: str) -> list[str]:
    results = [check(value, option, path) for option in options]
    if any(not r for r in results):
        return []
    return min(results, key=len)


def _sequence(value: Any, hint: Any, path: str) -> list[str]:
    if isinstance(value, str | bytes) or not isinstance(value, list):
        return [f"{path}: expected an array"]
    args = typing.get_args(hint)
    return [p for i, item in enumerate(value) for p in (check(item, args[0], f"{path}[{i}]") if args else [])]


def _scalar(value: Any, hint: Any, path: str) -> list[str]:
    if hint is type(None):
        return [] if value is None else [f"{path}: expected null"]
    if hint is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(hint, type) and hint in (str, bool):
        ok = isinstance(value, hint)
    elif isinstance(hint, type) and issubclass(hint, pydantic.BaseModel):
        return [f"{path}: response model {hint.__name__} is not a request param"]
    else:
        return []  # FileTypes and other runtime-only hints: not JSON, not checked
    return [] if ok else [f"{path}: {value!r} is not {hint.__name__}"]
