"""The retry table (SECURITY.md T-V2/T-V3), through the public send_with_retries, on a replay transport.

No real waiting: sleep, clock and jitter are injected.
"""

from __future__ import annotations

import pytest

from pycore.exceptions import APIConnectionError
from pycore.http import Request
from pycore.http.replay import Recording, ReplayTransport
from pycore.http.retry import ANTHROPIC_POLICY, OPENAI_POLICY, RetryPolicy, backoff, retry_after, send_with_retries

pytestmark = pytest.mark.pyodide

NOW = 1_700_000_000.0
ERROR = b'{"error": {"type": "x", "message": "m"}}'


async def run(recordings: list[Recording], policy: RetryPolicy = ANTHROPIC_POLICY, rand: float = 0.0):
    transport = ReplayTransport(recordings)
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    response = await send_with_retries(
        transport, Request("POST", "https://api.example/v1"), policy, sleep=sleep, rand=lambda: rand, now=lambda: NOW
    )
    return response.status, slept, len(transport.requests)


def fail(status: int, **headers: str) -> Recording:
    return Recording(ERROR, status=status, headers=headers)


OK = Recording(b"{}", status=200)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "20"}, 20.0),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "1500", "retry-after": "20"}, 1.5),  # the ms header wins
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after": "Tue, 14 Nov 2023 22:13:50 GMT"}, 30.0),  # NOW + 30 s as an HTTP date
    ],
)
async def test_server_asked_delay_is_honoured(headers: dict[str, str], expected: float) -> None:
    status, slept, sent = await run([fail(429, **headers), OK])
    assert (status, sent) == (200, 2)
    assert slept == [pytest.approx(expected)]


@pytest.mark.parametrize("value", ["inf", "nan", "-10", "", "bad-date", "0", "61"])
async def test_nonsense_or_out_of_range_retry_after_falls_back_to_backoff(value: str) -> None:
    _, slept, _ = await run([fail(429, **{"retry-after": value}), OK], ANTHROPIC_POLICY, rand=0.0)
    assert slept == [0.5]  # first retry: min(0.5 * 2**0, 8) * (1 - 0.25 * 0)


async def test_openai_does_not_retry_when_asked_to_wait_more_than_120_s() -> None:
    status, slept, sent = await run([fail(429, **{"retry-after": "121"}), OK], OPENAI_POLICY)
    assert (status, slept, sent) == (429, [], 1)


async def test_openai_honours_up_to_120_s() -> None:
    _, slept, _ = await run([fail(429, **{"retry-after": "120"}), OK], OPENAI_POLICY)
    assert slept == [120.0]


async def test_x_should_retry_false_wins_over_a_500() -> None:
    assert await run([fail(500, **{"x-should-retry": "false"}), OK]) == (500, [], 1)


async def test_x_should_retry_true_retries_a_400() -> None:
    status, _, sent = await run([fail(400, **{"x-should-retry": "true"}), OK])
    assert (status, sent) == (200, 2)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 529])
async def test_retryable_statuses(status: int) -> None:
    assert (await run([fail(status), OK]))[::2] == (200, 2)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
async def test_client_errors_are_not_retried(status: int) -> None:
    assert await run([fail(status), OK]) == (status, [], 1)


async def test_third_failure_is_returned_after_two_retries() -> None:
    status, slept, sent = await run([fail(429)] * 3 + [OK], rand=0.0)
    assert (status, slept, sent) == (429, [0.5, 1.0], 3)


async def test_connection_errors_are_retried_then_raised() -> None:
    status, slept, sent = await run([Recording(b"", connect_error=True), OK], rand=0.0)
    assert (status, slept, sent) == (200, [0.5], 2)
    with pytest.raises(APIConnectionError):
        await run([Recording(b"", connect_error=True)])


@pytest.mark.parametrize("n", range(6))
@pytest.mark.parametrize("rand", [0.0, 0.37, 0.999])
def test_backoff_without_headers_stays_in_the_band(n: int, rand: float) -> None:
    base = min(0.5 * 2**n, 8.0)
    assert 0.75 * base <= backoff(n, lambda: rand) <= base


def test_retry_after_reads_nothing_from_absent_headers() -> None:
    assert retry_after({}) is None
