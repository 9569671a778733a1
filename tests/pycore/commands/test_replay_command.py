"""The replay CLI gives every fixture's expected result (in-process, so it also runs in Pyodide)."""

from __future__ import annotations

import json

import pytest
from vendor_fixtures import FIXTURES, Fixture, subset

from pycore.__main__ import main

pytestmark = pytest.mark.pyodide


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("fixture", FIXTURES, ids=str)
def test_cli_prints_the_expected_result(fixture: Fixture, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["replay", "--vendor", fixture.vendor, "--status", str(fixture.status), "--chunk-size", "5"]
    code, out, _ = run_cli(capsys, *argv, str(fixture.path))
    expected = fixture.expected()
    assert code == 0
    assert subset(json.loads(out), expected) == expected


def test_cli_refuses_a_body_of_another_vendor(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = next(f for f in FIXTURES if f.vendor == "ollama" and f.streamed)
    code, out, err = run_cli(capsys, "replay", "--vendor", "anthropic", "--mode", "json", str(fixture.path))
    assert (code, out) == (2, "")
    assert "cannot parse" in err


def test_cli_rejects_an_unknown_vendor(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["replay", "--vendor", "nope", "x"])
