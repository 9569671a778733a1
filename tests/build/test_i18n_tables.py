"""The UI's words (web/i18n/*.json, read by web/app/i18n.js t()): Japanese has every string English has, with
the same {variables}. A key missing in ja.json would show its English text in the Japanese UI (t() falls back),
and a variable missing from a translation would drop a value the reader needs (a name, a count)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

I18N = Path(__file__).resolve().parents[2] / "web" / "i18n"
VARIABLE = re.compile(r"\{(\w+)\}")


def table(language: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((I18N / f"{language}.json").read_text(encoding="utf-8"))
    return data


def missing(en: dict[str, str], other: dict[str, str]) -> list[str]:
    return sorted(set(en) - set(other))


def variables_differ(en: dict[str, str], other: dict[str, str]) -> list[str]:
    return sorted(key for key in set(en) & set(other)
                  if set(VARIABLE.findall(en[key])) != set(VARIABLE.findall(other[key])))


@pytest.mark.parametrize("language", ["ja"])
def test_every_english_string_has_a_translation_with_the_same_variables(language: str) -> None:
    en, other = table("en"), table(language)
    assert missing(en, other) == [], f"{language}.json lacks these keys of en.json"
    assert variables_differ(en, other) == [], f"{language}.json names other {{variables}} than en.json"


def test_a_missing_key_and_a_lost_variable_are_named() -> None:
    en = {"a": "Delete {name}?", "b": "Close"}
    assert missing(en, {"a": "{name} を削除しますか？"}) == ["b"]
    assert variables_differ(en, {"a": "削除しますか？", "b": "閉じる"}) == ["a"]
