"""``python -m pycore <command> ...``: the core's command line.

Each command is its own module in :mod:`pycore.commands` exposing ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``. Adding one is adding a line to ``COMMANDS``;
modules are imported only when their command runs (``--help`` imports them all).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

COMMANDS: dict[str, str] = {
    "replay": "pycore.commands.replay",
    "contract": "pycore.commands.contract",
    "mcp": "pycore.mcp.cli",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pycore", description="Orizuru's agent core.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        sub = commands.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
