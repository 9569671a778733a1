"""The traffic inspector's record: every JSON-RPC message of an MCP session, in and out, with its time
(:mod:`pycore.mcp.replay` runs the client again against such a record, for a bug report).

    session.traffic.entries          [{t, dir, message}]: ms since the session began, "out" | "in", the message
    export(url, traffic) -> dict     the file the Tools panel saves (FORMAT), secrets already out of it

Secrets never enter the record: the session's header values (a token, an API key; also the token of a
``Bearer`` value), any string under a key that names a credential (``authorization``, ``api_key``,
``access_token``…, :func:`pycore.exceptions.secrets_in`) and anything shaped like a vendor key are replaced by
``[redacted]`` before a message is kept, so the view and the export show the same redacted text. The record
keeps the last :data:`KEEP` messages; ``dropped`` counts the older ones.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Iterable
from typing import Any

from pycore.exceptions import redact, secrets_in

KEEP = 2000
FORMAT = "orizuru-mcp-traffic/1"


class Traffic:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.started = time.time()
        self.entries: deque[dict[str, Any]] = deque(maxlen=KEEP)
        self.dropped = 0
        self.secrets = [s for value in secrets for s in (value, value.partition(" ")[2]) if len(s) >= 4]

    def record(self, direction: str, message: dict[str, Any]) -> None:
        text = redact(json.dumps(message, ensure_ascii=False), [*self.secrets, *secrets_in(message)])
        if len(self.entries) == KEEP:
            self.dropped += 1
        self.entries.append({"t": round((time.time() - self.started) * 1000, 1), "dir": direction,
                             "message": json.loads(text)})


def export(url: str, traffic: Traffic, server: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"format": FORMAT, "url": redact(url, traffic.secrets), "server": server or {},
            "started": traffic.started, "dropped": traffic.dropped, "messages": list(traffic.entries)}
