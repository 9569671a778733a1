"""``python -m pycore mcp URL tools|call NAME 'JSON-ARGS'|resources|prompts|doctor``: debug an MCP server.
``python -m pycore mcp replay FILE`` runs the client again against a traffic record the Tools panel exported
(:mod:`pycore.mcp.replay`), with no network, and prints what the client made of each recorded answer.

``doctor --origin ORIGIN`` reads the server's CORS answers for a page at ORIGIN (the CORS doctor's direct
probe, :mod:`pycore.mcp.doctor`) and prints the findings with their fixes.

Prints JSON on stdout (the MCP wire shapes, camelCase) and a one-line error on stderr.
Exit status: 0 ok, 1 the tool reported ``isError``, 2 usage, 3 the connection or the server failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from pydantic import BaseModel

from pycore.mcp.errors import MCPError
from pycore.mcp.session import ClientSession

HELP = "talk to an MCP server by URL: list its tools, call one"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", help="the MCP endpoint (streamable HTTP, or a legacy SSE URL); or 'replay'")
    parser.add_argument("action", help="tools, call, resources, prompts or doctor; after 'replay': the record's file")
    parser.add_argument("name", nargs="?", help="call: the tool name")
    parser.add_argument("arguments", nargs="?", default="{}", help="call: the arguments as a JSON object")
    parser.add_argument("--header", "-H", action="append", default=[], metavar="'K: V'",
                        help="an HTTP header sent on every request (repeatable), e.g. 'Authorization: Bearer …'")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    parser.add_argument("--origin", help="doctor: the origin of the page that cannot connect, e.g. https://app.example")


def parse_headers(values: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, colon, rest = value.partition(":")
        if not colon or not name.strip():
            raise ValueError(f"--header must look like 'Name: value', got {value!r}")
        headers[name.strip()] = rest.strip()
    return headers


ACTIONS = ("tools", "call", "resources", "prompts", "doctor")


def run(args: argparse.Namespace) -> int:
    if args.url == "replay":
        return _replay(args.action, args.timeout)
    if args.action not in ACTIONS:
        print(f"error: unknown action {args.action!r} (one of {', '.join(ACTIONS)}; or 'replay FILE')", file=sys.stderr)
        return 2
    try:
        headers = parse_headers(args.header)
        arguments = _arguments(args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        output, code = asyncio.run(_run(args, headers, arguments))
    except MCPError as e:
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 3
    print(json.dumps(output, indent=2, ensure_ascii=False))
    return code


def _replay(path: str, timeout: float) -> int:
    from pycore.mcp.replay import replay

    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
        report = asyncio.run(replay(record, timeout=timeout))
    except (OSError, ValueError) as e:
        print(f"error: {path}: {e}", file=sys.stderr)
        return 2
    except MCPError as e:
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 3
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


def _arguments(args: argparse.Namespace) -> dict[str, Any]:
    if args.action != "call":
        return {}
    if not args.name:
        raise ValueError("call needs a tool name")
    try:
        value = json.loads(args.arguments)
    except ValueError as e:
        raise ValueError(f"the arguments are not JSON: {e}") from e
    if not isinstance(value, dict):
        raise ValueError("the arguments must be a JSON object")
    return value


async def _doctor(args: argparse.Namespace, headers: dict[str, str]) -> tuple[Any, int]:
    from pycore.http import default_transport
    from pycore.mcp.doctor import diagnose_direct

    if not args.origin:
        raise MCPError("doctor needs --origin, the origin of the page that cannot connect (e.g. https://app.example)")
    http = default_transport()
    try:
        diagnosis = await diagnose_direct(http, args.url, args.origin, headers)
    finally:
        await http.aclose()
    result = diagnosis.to_json()
    return result, 1 if diagnosis.findings else 0


async def _run(args: argparse.Namespace, headers: dict[str, str], arguments: dict[str, Any]) -> tuple[Any, int]:
    if args.action == "doctor":
        return await _doctor(args, headers)
    async with ClientSession(args.url, headers=headers, timeout=args.timeout) as mcp:
        if args.action == "tools":
            return [_wire(tool) for tool in await mcp.list_tools()], 0
        if args.action == "resources":
            return [_wire(resource) for resource in await mcp.list_resources()], 0
        if args.action == "prompts":
            return [_wire(prompt) for prompt in await mcp.list_prompts()], 0
        result = await mcp.call_tool_raw(args.name, arguments)
        return _wire(result), 1 if result.is_error else 0


def _wire(model: BaseModel) -> Any:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")
