"""The recorded vendor responses of ``tests/fixtures/vendors`` (stdlib only: also used in Pyodide),
and the small helpers the tests that replay them share.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VENDORS_DIR = ROOT / "tests" / "fixtures" / "vendors"


@dataclass(frozen=True)
class Fixture:
    vendor: str  # adapter name: "openai-responses" for the Responses API files
    file: str
    status: int
    content_type: str
    streamed: bool

    @property
    def path(self) -> Path:
        return VENDORS_DIR / self.file

    def body(self) -> bytes:
        return self.path.read_bytes()

    def expected(self) -> dict[str, Any]:
        data = json.loads(self.path.with_name(self.path.name.split(".")[0] + ".expected.json").read_text("utf-8"))
        data.pop("_oracle", None)
        return data

    def __str__(self) -> str:
        return self.file


def _adapter_name(entry: dict[str, Any]) -> str:
    return "openai-responses" if entry["api"].startswith("responses") else entry["vendor"]


def load(*, audio: bool = False) -> list[Fixture]:
    """The chat recordings; ``audio``: the speech ones instead (transcription, text to speech)."""
    manifest = json.loads((VENDORS_DIR / "manifest.json").read_text("utf-8"))
    return [
        Fixture(_adapter_name(e), e["file"], e["status"], e["content_type"], e["ext"] in ("sse", "ndjson"))
        for e in manifest if e["api"].startswith("audio.") == audio
    ]


FIXTURES = load()
STREAMED = [f for f in FIXTURES if f.streamed and f.status < 400]
BY_FILE = {f.file: f for f in FIXTURES + load(audio=True)}


def subset(actual: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    """The keys the expected file has: extra keys in ours are not compared."""
    return {k: actual.get(k) for k in expected}


def fixture(file: str) -> Fixture:
    """The recording whose path under fixtures/vendors is ``file``."""
    return BY_FILE[file]


async def no_sleep(_: float) -> None:
    """For ``ChatClient(sleep=...)``: retries without waiting out their backoff."""
    return None


async def consume_until_text(stream: AsyncIterable[Any], poll: float = 0.001) -> tuple[asyncio.Task[None], list[str]]:
    """Read ``stream`` in a task, collecting text deltas, and return once the first one arrived:
    the moment a user presses Stop in the tests of Stop."""
    seen: list[str] = []

    async def consume() -> None:
        async for event in stream:
            if getattr(event, "type", None) == "text_delta":
                seen.append(event.text)

    task = asyncio.ensure_future(consume())
    while not seen:
        await asyncio.sleep(poll)
    return task, seen
