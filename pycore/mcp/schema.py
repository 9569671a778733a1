"""A small JSON Schema checker for ``outputSchema``: enough to flag a structured result that lies.

Covers ``type`` (incl. lists), ``required``, ``properties``, ``items``, ``enum`` and ``const``, recursively, and
the JSON Schema 2020-12 that MCP servers send as they send it: ``$ref`` into the same document (``#``,
``#/$defs/…``, ``#/definitions/…``, JSON pointers; a ``$ref`` beside other keywords applies with them) and the
composition keywords ``allOf``, ``anyOf``, ``oneOf`` and ``not``. A ``$ref`` to anywhere else (a network URI, an
anchor) is never followed: nothing is fetched, and nothing is claimed about what it would say. Keywords it does
not know are accepted (a checker must never reject valid data).

Within bounds: past :data:`MAX_DEPTH` schemas deep (nesting and ``$ref`` hops together: a schema that refers to
itself, a hostile one nested thousands deep), or after :data:`MAX_STEPS` schemas looked at in all (composition
over a self-reference would otherwise grow exponentially), the checker claims nothing more: it always ends, and
quickly.
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 64
MAX_STEPS = 10_000

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}


def check(value: Any, schema: Any, path: str = "$", *, root: Any = None, depth: int = 0,
          steps: list[int] | None = None) -> str | None:
    """The first problem found, as ``"$.a.b: message"``, or ``None``. ``root`` is the document a ``$ref`` points
    into (the schema itself at the top); ``steps`` what is left of the budget of schemas looked at."""
    steps = [MAX_STEPS] if steps is None else steps
    steps[0] -= 1
    if not isinstance(schema, dict) or depth > MAX_DEPTH or steps[0] < 0:
        return None
    root = schema if root is None else root
    for rule in (_check_ref, _check_type, _check_enum, _check_composition, _check_object, _check_array):
        problem = rule(value, schema, path, _Walk(root, depth, steps))
        if problem:
            return problem
    return None


class _Walk:
    """Where the check is: the document ``$ref`` points into, how deep, the budget left."""

    def __init__(self, root: Any, depth: int, steps: list[int]) -> None:
        self.root, self.depth, self.steps = root, depth, steps

    def down(self, value: Any, schema: Any, path: str) -> str | None:
        return check(value, schema, path, root=self.root, depth=self.depth + 1, steps=self.steps)


def _check_ref(value: Any, schema: dict[str, Any], path: str, walk: _Walk) -> str | None:
    ref = schema.get("$ref")
    target = _pointer(walk.root, ref) if isinstance(ref, str) else None
    return None if target is None else walk.down(value, target, path)


def _pointer(root: Any, ref: str) -> Any:
    """What a same-document ``$ref`` (``#`` or ``#/a/b``) points at; ``None`` for any other (never fetched)."""
    if ref != "#" and not ref.startswith("#/"):
        return None
    node = root
    for part in ref[2:].split("/") if ref != "#" else []:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def _check_type(value: Any, schema: dict[str, Any], path: str, walk: _Walk) -> str | None:
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


def _check_enum(value: Any, schema: dict[str, Any], path: str, walk: _Walk) -> str | None:
    if "const" in schema and value != schema["const"]:
        return f"{path}: expected {schema['const']!r}"
    if "enum" in schema and isinstance(schema["enum"], list) and value not in schema["enum"]:
        return f"{path}: {value!r} is not one of {schema['enum']!r}"
    return None


def _check_composition(value: Any, schema: dict[str, Any], path: str, walk: _Walk) -> str | None:
    def fits(sub: Any) -> bool:
        return walk.down(value, sub, path) is None

    for sub in _schemas(schema.get("allOf")):
        problem = walk.down(value, sub, path)
        if problem:
            return problem
    if "anyOf" in schema and not any(fits(sub) for sub in _schemas(schema["anyOf"])):
        return f"{path}: matches none of anyOf"
    if "oneOf" in schema:
        matched = sum(fits(sub) for sub in _schemas(schema["oneOf"]))
        if matched != 1:
            return f"{path}: matches {matched} of oneOf, not exactly one"
    if isinstance(schema.get("not"), dict) and walk.depth < MAX_DEPTH and fits(schema["not"]):
        return f"{path}: matches what not forbids"
    return None


def _schemas(value: Any) -> list[dict[str, Any]]:
    return [sub for sub in value if isinstance(sub, dict)] if isinstance(value, list) else []


def _check_object(value: Any, schema: dict[str, Any], path: str, walk: _Walk) -> str | None:
    if not isinstance(value, dict):
        return None
    for name in schema.get("required", []):
        if name not in value:
            return f"{path}: missing required property {name!r}"
    for name, sub in (schema.get("properties") or {}).items():
        if name in value:
            problem = walk.down(value[name], sub, f"{path}.{name}")
            if problem:
                return problem
    return None


def _check_array(value: Any, schema: dict[str, Any], path: str, walk: _Walk) -> str | None:
    items = schema.get("items")
    if not isinstance(value, list) or not isinstance(items, dict):
        return None
    for i, item in enumerate(value):
        problem = walk.down(item, items, f"{path}[{i}]")
        if problem:
            return problem
    return None
