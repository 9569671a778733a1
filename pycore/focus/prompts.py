"""The jinja2 templates of focus memory: where they live, how they load, how the user edits them.

``templates/classifier.j2`` instructs the classifier (in English, which small models follow best;
it asks for constraints in the user's own language). ``templates/<locale>/system.j2`` and
``templates/<locale>/current.j2`` build the synthesized prompt, one pair per locale (``en``, ``ja``).

The user edits a template by sending its new source as an override (``{"system.j2": "..."}``);
overrides render in a sandbox, so a template can read the values it is given and nothing else.
An override that does not compile raises :class:`TemplateError` naming the template and line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

TEMPLATES_DIR = Path(__file__).parent / "templates"
LOCALES = ("en", "ja")
DEFAULT_LOCALE = "en"
SYNTHESIS_TEMPLATES = ("system.j2", "current.j2")


class TemplateError(ValueError):
    """A template override that does not compile or render; the message names it."""


def locale_of(locale: str | None) -> str:
    """``ja-JP`` -> ``ja``; anything we have no templates for -> English."""
    base = (locale or DEFAULT_LOCALE).split("-")[0].split("_")[0].lower()
    return base if base in LOCALES else DEFAULT_LOCALE


def _environment(loader: jinja2.BaseLoader) -> SandboxedEnvironment:
    return SandboxedEnvironment(
        loader=loader,
        autoescape=False,  # plain text for a model, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        undefined=jinja2.ChainableUndefined,  # a template naming a value we do not give renders it empty
    )


_DEFAULT = _environment(jinja2.FileSystemLoader(str(TEMPLATES_DIR)))


def default_source(name: str, locale: str | None = None) -> str:
    """The shipped source of a synthesis template (what the editor starts from)."""
    if name not in SYNTHESIS_TEMPLATES:
        raise TemplateError(f"unknown template {name!r}; editable: {', '.join(SYNTHESIS_TEMPLATES)}")
    return (TEMPLATES_DIR / locale_of(locale) / name).read_text("utf-8")


def render(name: str, context: Mapping[str, Any], *, locale: str | None = None,
           overrides: Mapping[str, str] | None = None) -> str:
    """Render ``name`` for ``locale``, from the user's override when there is one."""
    source = (overrides or {}).get(name)
    if source is None:
        path = name if name == "classifier.j2" else f"{locale_of(locale)}/{name}"
        return _DEFAULT.get_template(path).render(**context).strip()
    environment = _environment(jinja2.DictLoader({name: source}))
    try:
        return environment.get_template(name).render(**context).strip()
    except jinja2.TemplateSyntaxError as e:
        raise TemplateError(f"template {name}, line {e.lineno}: {e.message}") from None
    except jinja2.TemplateError as e:
        raise TemplateError(f"template {name}: {e}") from None


def check(overrides: Mapping[str, str]) -> None:
    """Compile each override now, so the editor can say what is wrong before the chat needs it."""
    for name, source in overrides.items():
        if name not in SYNTHESIS_TEMPLATES:
            raise TemplateError(f"unknown template {name!r}; editable: {', '.join(SYNTHESIS_TEMPLATES)}")
        try:
            _environment(jinja2.DictLoader({name: source})).get_template(name)
        except jinja2.TemplateSyntaxError as e:
            raise TemplateError(f"template {name}, line {e.lineno}: {e.message}") from None
