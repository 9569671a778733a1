"""MCP tool schemas (JSON Schema) cleaned into the OpenAPI subset Gemini's ``parameters`` accepts.

Real MCP servers send ``$schema``, ``additionalProperties``, ``$ref``/``$defs``, ``anyOf`` with
``null``, ``const``, type lists... Gemini rejects what it does not know. The cleaning:

- ``$ref`` is inlined from ``$defs``/``definitions`` (a cycle becomes a plain ``object``);
- ``type: [T, "null"]`` and ``anyOf: [..., {"type": "null"}]`` become ``nullable: true``;
- ``oneOf`` becomes ``anyOf``; a one-element ``allOf``/``anyOf`` is merged into its parent;
- ``const`` becomes a one-value ``enum``; enums are strings;
- every keyword outside the accepted set is dropped, ``required`` is pruned to existing properties.
"""

from __future__ import annotations

from typing import Any

ALLOWED = {
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "properties",
    "required",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "anyOf",
    "title",
    "propertyOrdering",
    "minProperties",
    "maxProperties",
}
MAX_DEPTH = 32


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    return _clean(schema, defs, (), 0)


def _clean(schema: Any, defs: dict[str, Any], seen: tuple[str, ...], depth: int) -> dict[str, Any]:
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return {"type": "object"}
    schema = _flatten(schema)
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        if name in seen or name not in defs:
            return {"type": "object", "description": schema.get("description", f"(recursive {name})")}
        merged = {**defs[name], **{k: v for k, v in schema.items() if k != "$ref"}}
        return _clean(merged, defs, (*seen, name), depth + 1)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("properties",) and isinstance(value, dict):
            out[key] = {name: _clean(sub, defs, seen, depth + 1) for name, sub in value.items()}
        elif key == "items":
            out[key] = _clean(value, defs, seen, depth + 1)
        elif key == "anyOf":
            out[key] = [_clean(sub, defs, seen, depth + 1) for sub in value]
        elif key in ALLOWED:
            out[key] = value
    if "required" in out:
        out["required"] = [r for r in out["required"] if r in out.get("properties", {})]
    if "enum" in out:
        out["enum"] = [str(v) for v in out["enum"] if v is not None]
        out.setdefault("type", "string")
    return out


def _flatten(schema: dict[str, Any]) -> dict[str, Any]:
    schema = dict(schema)
    if "oneOf" in schema:
        schema["anyOf"] = schema.pop("oneOf")
    if "const" in schema:
        schema["enum"] = [schema.pop("const")]
    if isinstance(schema.get("type"), list):
        types = [t for t in schema["type"] if t != "null"]
        if len(types) < len(schema["type"]):
            schema["nullable"] = True
        schema["type"] = types[0] if len(types) == 1 else None
        if schema["type"] is None:
            del schema["type"]
            schema.setdefault("anyOf", [{"type": t} for t in types])
    if "anyOf" in schema:
        options = [o for o in schema["anyOf"] if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(options) < len(schema["anyOf"]):
            schema["nullable"] = True
        schema["anyOf"] = options
        if len(options) == 1 and isinstance(options[0], dict):
            del schema["anyOf"]
            schema = {**options[0], **schema}
    for sub in schema.pop("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        if isinstance(sub, dict):
            schema = {**sub, **schema}
    return schema
