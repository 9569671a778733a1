"""``python -m pycore contract``: write the page <-> core contract (:mod:`pycore.contract`).

    python -m pycore contract --schema dist/contract.schema.json --markdown docs/PROTOCOL.md --js web/contract.js

With neither option it prints the JSON Schema. The build writes the schema beside the site; the
protocol document and the page's module are checked in, and a test fails when it differs from what this writes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HELP = "write the page<->core contract: its JSON Schema and docs/PROTOCOL.md"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--schema", type=Path, metavar="FILE", help="write the JSON Schema here")
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="write the protocol document here")
    parser.add_argument("--js", type=Path, metavar="FILE", help="write the page's module of the closed sets here")


def run(args: argparse.Namespace) -> int:
    from pycore.contract import json_schema, page_module, protocol_markdown

    schema = json.dumps(json_schema(), indent=1, ensure_ascii=False) + "\n"
    if args.schema:
        args.schema.write_text(schema, encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(protocol_markdown(), encoding="utf-8")
    if args.js:
        args.js.write_text(page_module(), encoding="utf-8")
    if not args.schema and not args.markdown and not args.js:
        print(schema, end="")
    return 0
