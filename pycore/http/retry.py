"""Retries with backoff, as the vendors' own SDKs do them (SECURITY.md V3/V4).

- retry on connection errors and on HTTP 408, 409, 429 and >= 500 (Anthropic's 529 included);
- ``x-should-retry: true|false`` from the server wins over the status;
- the delay is ``retry-after-ms`` (milliseconds), else ``retry-after`` (seconds, or an HTTP date),
  honoured when 0 < delay <= ``max_retry_after``; a longer one means "no retry" when
  ``refuse_long_retry_after`` (OpenAI) and plain backoff otherwise (Anthropic);
- otherwise ``min(0.5 * 2**n, 8) * (1 - 0.25 * random())`` for the n-th retry (n from 0);
- only ever *before* the body is read: :func:`send_with_retries` returns the response as soon as
  it is not retryable, so a stream that has delivered its first byte is never repeated.

Sleep, clock and randomness are injectable so the table is tested without waiting.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from pycore.exceptions import APIConnectionError
from pycore.http.base import Request, Response, Transport

INITIAL_DELAY = 0.5
MAX_DELAY = 8.0
RETRYABLE_STATUS = frozenset({408, 409, 429})


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 2
    max_retry_after: float = 60.0
    refuse_long_retry_after: bool = False


ANTHROPIC_POLICY = RetryPolicy(max_retry_after=60.0)
OPENAI_POLICY = RetryPolicy(max_retry_after=120.0, refuse_long_retry_after=True)


def should_retry(status: int, headers: Mapping[str, str]) -> bool:
    flag = headers.get("x-should-retry", "").strip().lower()
    if flag in ("true", "false"):
        return flag == "true"
    return status in RETRYABLE_STATUS or status >= 500


def retry_after(headers: Mapping[str, str], now: Callable[[], float] = time.time) -> float | None:
    """Seconds the server asked us to wait, or None when it did not say (or said nonsense)."""
    ms = _finite(headers.get("retry-after-ms"))
    if ms is not None:
        return ms / 1000.0
    value = headers.get("retry-after")
    seconds = _finite(value)
    if seconds is not None or not value:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return when.timestamp() - now()


def _finite(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) else None


def backoff(retry_index: int, rand: Callable[[], float] = random.random) -> float:
    return min(INITIAL_DELAY * 2.0**retry_index, MAX_DELAY) * (1 - 0.25 * rand())


def retry_delay(
    retry_index: int,
    headers: Mapping[str, str],
    policy: RetryPolicy,
    *,
    rand: Callable[[], float] = random.random,
    now: Callable[[], float] = time.time,
) -> float | None:
    """How long to wait before retry number ``retry_index`` (0-based); None means do not retry."""
    asked = retry_after(headers, now)
    if asked is not None and 0 < asked <= policy.max_retry_after:
        return asked
    if asked is not None and asked > policy.max_retry_after and policy.refuse_long_retry_after:
        return None
    return backoff(retry_index, rand)


async def send_with_retries(
    transport: Transport,
    request: Request,
    policy: RetryPolicy = RetryPolicy(),
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    rand: Callable[[], float] = random.random,
    now: Callable[[], float] = time.time,
) -> Response:
    """Send, retrying what the policy allows; returns the first response that is not retried."""
    for attempt in range(policy.max_retries + 1):
        last = attempt == policy.max_retries
        try:
            response = await transport.send(request)
        except APIConnectionError:
            if last:
                raise
            await sleep(backoff(attempt, rand))
            continue
        if response.status < 400 or last or not should_retry(response.status, response.headers):
            return response
        delay = retry_delay(attempt, response.headers, policy, rand=rand, now=now)
        if delay is None:
            return response
        await response.aclose()
        await sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover
