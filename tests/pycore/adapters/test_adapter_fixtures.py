"""Every recorded vendor response gives its expected unified result, at every chunking.

The recordings and their ``*.expected.json`` (produced by each vendor's official SDK) live in
``shared/fixtures/vendors``; all keys of the expected file are compared, except ``_oracle``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vendor_fixtures import FIXTURES, STREAMED, Fixture, subset

from pycore.adapters import get_adapter
from pycore.messages import ReasoningDelta, TextDelta, ToolCallEnd
from pycore.replay import replay

pytestmark = pytest.mark.pyodide


def test_the_manifest_was_found_and_covers_every_vendor() -> None:
    assert len(FIXTURES) >= 50
    assert {f.vendor for f in FIXTURES} == {"openai", "openai-responses", "anthropic", "gemini", "ollama"}


@pytest.mark.parametrize("fixture", FIXTURES, ids=str)
def test_fixture_gives_its_expected_result(fixture: Fixture) -> None:
    expected = fixture.expected()
    got = replay(fixture.vendor, fixture.body(), status=fixture.status).summary()
    assert subset(got, expected) == expected


@pytest.mark.parametrize("chunk_size", [1, 7, 97])
@pytest.mark.parametrize("fixture", STREAMED, ids=str)
def test_fixed_chunk_sizes(fixture: Fixture, chunk_size: int) -> None:
    expected = fixture.expected()
    got = replay(fixture.vendor, fixture.body(), status=fixture.status, chunk_size=chunk_size).summary()
    assert subset(got, expected) == expected


def _chunks(body: bytes, cuts: set[int]) -> list[bytes]:
    edges = [0, *sorted(cuts), len(body)]
    return [body[a:b] for a, b in zip(edges, edges[1:], strict=False)]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.parametrize("fixture", STREAMED, ids=str)
def test_random_chunking_does_not_change_the_result(fixture: Fixture, data: st.DataObject) -> None:
    body = fixture.body()
    # Boundaries anywhere, including inside multi-byte UTF-8 characters: bias some cuts onto them.
    multibyte = [i for i, b in enumerate(body) if b >= 0x80 and i > 0] or [1]
    cuts = data.draw(st.sets(st.integers(1, max(len(body) - 1, 1)), max_size=40))
    cuts |= data.draw(st.sets(st.sampled_from(multibyte), max_size=5))
    parser = get_adapter(fixture.vendor).stream_parser(status=fixture.status)
    for chunk in _chunks(body, cuts):
        parser.feed(chunk)
    parser.finish()
    expected = fixture.expected()
    assert subset(parser.completion().summary(), expected) == expected


@pytest.mark.parametrize("fixture", STREAMED, ids=str)
def test_streamed_events_add_up_to_the_completion(fixture: Fixture) -> None:
    """Events and the final message come from the same parts: they cannot disagree."""
    parser = get_adapter(fixture.vendor).stream_parser()
    events = [
        e for chunk in _chunks(fixture.body(), set(range(50, len(fixture.body()), 50))) for e in parser.feed(chunk)
    ]
    events += parser.finish()
    completion = parser.completion()
    text = "".join(e.text for e in events if isinstance(e, TextDelta) and not e.refusal)
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    ends = [(e.id, e.name, e.arguments) for e in events if isinstance(e, ToolCallEnd)]
    assert text == completion.text()
    assert reasoning == completion.reasoning()
    assert ends == [(c.id, c.name, c.arguments) for c in completion.tool_calls()]


def test_a_wrong_expectation_fails() -> None:
    """The comparison can fail: a corrupted recording no longer matches its expected result."""
    fixture = next(f for f in STREAMED if f.vendor == "anthropic" and f.expected()["text"])
    body = fixture.body().replace(b'"text_delta","text":"', b'"text_delta","text":"X', 1)
    got = replay(fixture.vendor, body).summary()
    assert subset(got, fixture.expected()) != fixture.expected()
