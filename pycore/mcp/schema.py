"""A small JSON Schema checker for ``outputSchema``: enough to flag a structured result that lies.

Covers ``type`` (incl. lists), ``required``, ``properties``, ``items``, ``enum`` and ``const``,
recursively. Keywords it does not know are accepted (a checker must never reject valid data).
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}


def check(value: Any, schema: Any, path: str = "$") -> str | None:
    """The first problem found, as ``"$.a.b: message"``, or ``None``."""
    if not isinstance(schema, dict):
        return None
    for rule in (_check_type, _check_enum, _check_object, _check_array):
        problem = rule(value, schema, path)
        if problem:
            return problem
    return None


def _check_type(value: Any, schema: dict[str, Any], path: str) -> str | None:
    wanted = schema.get("type")
    if wanted is None:
        return None
    names = wanted if isinstance(wanted, list) else [wanted]
    if any(_is(value, name) for name in names):
        return None
    return f"{path}: expected {' or '.join(map(str, names))}, got {type(value).__name__}"


def _is(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, (object,)))


def _check_enum(value: Any, schema: dict[str, Any], path: str) -> str | None:
    if "const" in schema and value != schema["const"]:
        return f"{path}: expected {schema['const']!r}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path}: {value!r} is not one of {schema['enum']!r}"
    return None


def _check_object(value: Any, schema: dict[str, Any], path: str) -> str | None:
    if not isinstance(value, dict):
        return None
    for name in schema.get("required", []):
        if name not in value:
            return f"{path}: missing required property {name!r}"
    for name, sub in (schema.get("properties") or {}).items():
        if name in value:
            problem = check(value[name], sub, f"{path}.{name}")
            if problem:
                return problem
    return None


def _check_array(value: Any, schema: dict[str, Any], path: str) -> str | None:
    items = schema.get("items")
    if not isinstance(value, list) or not isinstance(items, dict):
        return None
    for i, item in enumerate(value):
        problem = check(item, items, f"{path}[{i}]")
        if problem:
            return problem
    return None
