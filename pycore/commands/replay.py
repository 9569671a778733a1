"""``python -m pycore replay``: feed a recorded vendor response to its parser, print the result.

    python -m pycore replay --vendor anthropic --chunk-size 7 stream.sse
    python -m pycore replay --vendor openai --status 429 error.json

Prints ``{text, reasoning, tool_calls: [{id, name, arguments}], finish_reason,
usage: {input_tokens, output_tokens}, error: {status, type, message} | null}`` as JSON: the shape of
``tests/fixtures/vendors/*.expected.json``. This is how a user reports a vendor's odd stream.
Exit status 0, also when the body is a vendor error (that is a result); 2 for unusable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pycore.adapters import VENDORS as ADAPTERS
from pycore.exceptions import OrizuruError

HELP = "parse a recorded vendor response body and print the unified result as JSON"
VENDORS = tuple(v for v in ADAPTERS if v != "fake")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--vendor", required=True, choices=VENDORS, help="which API produced the body")
    parser.add_argument("--status", type=int, default=200, help="HTTP status the body came with (default 200)")
    parser.add_argument("--chunk-size", type=int, default=None, metavar="N", help="feed the body in pieces of N bytes")
    parser.add_argument(
        "--mode", choices=("auto", "stream", "json"), default="auto", help="streamed or whole body (default: guess)"
    )
    parser.add_argument("file", type=Path, help="the response body ('-' for stdin)")


def run(args: argparse.Namespace) -> int:
    from pycore.replay import replay

    if args.chunk_size is not None and args.chunk_size < 1:
        print("--chunk-size must be at least 1", file=sys.stderr)
        return 2
    body = sys.stdin.buffer.read() if str(args.file) == "-" else args.file.read_bytes()
    try:
        completion = replay(args.vendor, body, status=args.status, chunk_size=args.chunk_size, mode=args.mode)
    except OrizuruError as e:
        print(f"cannot parse this body as {args.vendor}: {e}", file=sys.stderr)
        return 2
    json.dump(completion.summary(), sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0
