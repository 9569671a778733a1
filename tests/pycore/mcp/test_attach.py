"""Resources attached to a message, prompts as slash commands, icons made safe. Pure: CPython and Pyodide."""

from __future__ import annotations

import base64

import mcp_types as t
import pytest

from pycore.mcp.attach import parse_slash_command, resource_parts, slash_commands
from pycore.mcp.icons import MAX_ICON_BYTES, safe_icon_src, safe_icons, sniff
from pycore.messages import ImagePart, TextPart

pytestmark = pytest.mark.pyodide
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_text_resource_is_labelled_with_its_uri() -> None:
    result = t.ReadResourceResult(contents=[t.TextResourceContents(uri="file:///notes.md", text="# Notes")])
    [part] = resource_parts(result, name="notes")
    assert isinstance(part, TextPart)
    assert part.text.startswith("[attached resource notes <file:///notes.md>]\n# Notes")
    assert part.text.endswith("[end of resource notes <file:///notes.md>]")


def test_long_text_is_cut_and_says_so() -> None:
    result = t.ReadResourceResult(contents=[t.TextResourceContents(uri="x://big", text="a" * 300_000)])
    [part] = resource_parts(result)
    assert isinstance(part, TextPart) and len(part.text) < 201_000 and "cut" in part.text


def test_blobs_by_their_real_bytes() -> None:
    result = t.ReadResourceResult(contents=[
        t.BlobResourceContents(uri="x://png", blob=b64(PNG), mime_type="application/octet-stream"),
        t.BlobResourceContents(uri="x://svg", blob=b64(b"<svg/>"), mime_type="image/png"),
        t.BlobResourceContents(uri="x://pdf", blob=b64(b"%PDF-1.7"), mime_type="application/pdf"),
    ])
    image, svg, pdf = resource_parts(result)
    assert isinstance(image, ImagePart) and image.mime_type == "image/png" and image.data == PNG
    assert isinstance(svg, TextPart) and "not shown" in svg.text
    assert isinstance(pdf, TextPart) and "application/pdf, 8 bytes" in pdf.text


def prompts() -> list[t.Prompt]:
    return [t.Prompt(name="summarize", description="Summarize a text", arguments=[
                t.PromptArgument(name="text", required=True), t.PromptArgument(name="style")]),
            t.Prompt(name="hello")]


def test_slash_commands_list() -> None:
    commands = slash_commands(prompts(), server="docs")
    assert commands[0]["command"] == "/summarize" and commands[0]["server"] == "docs"
    assert commands[0]["arguments"] == [{"name": "text", "description": "", "required": True},
                                        {"name": "style", "description": "", "required": False}]


def test_parse_slash_command() -> None:
    prompt, args = parse_slash_command('/summarize text="a long day" style=short', prompts())  # type: ignore[misc]
    assert prompt.name == "summarize" and args == {"text": "a long day", "style": "short"}
    loose = parse_slash_command("/summarize the whole thing", prompts())
    assert loose is not None and loose[1] == {"text": "the whole thing"}
    assert parse_slash_command("/hello", prompts())[1] == {}  # type: ignore[index]
    assert parse_slash_command("/unknown x", prompts()) is None
    assert parse_slash_command("not a command", prompts()) is None
    with pytest.raises(ValueError, match="needs text"):
        parse_slash_command("/summarize style=short", prompts())
    with pytest.raises(ValueError, match="has no argument 'tone'"):
        parse_slash_command("/summarize text=x tone=dry", prompts())
    with pytest.raises(ValueError, match="quotation"):
        parse_slash_command('/summarize text="open', prompts())


def test_icons() -> None:
    assert sniff(PNG) == "image/png" and sniff(b"<svg/>") is None
    assert safe_icon_src("data:image/jpeg;base64," + b64(PNG)) == "data:image/png;base64," + b64(PNG)
    for src in ("javascript:alert(1)", "https://example.com/i.png", "data:image/svg+xml,<svg/>",
                "data:image/svg+xml;base64," + b64(b"<svg/>"), "data:image/png;base64,!!!",
                "data:image/png;base64," + b64(PNG + b"\0" * MAX_ICON_BYTES)):
        assert safe_icon_src(src) is None, src
    icon = t.Icon(src="data:image/png;base64," + b64(PNG), mime_type="image/png", sizes=["16x16"])
    assert safe_icons([icon, {"src": "http://x/y.png"}]) == [
        {"src": "data:image/png;base64," + b64(PNG), "mimeType": "image/png", "sizes": ["16x16"]}]
