"""The contract between the page and the core (pycore/contract/) holds on both sides.

- Every event a real ``chat.run`` streams over the recorded vendor fixtures, and its result's error, is
  valid against the emitted JSON Schema: a field renamed on one side fails here, not for a user.
- A failed call reaches the page as ``{code, message, details}`` with a code from the closed set and a
  sentence without a class name.
- Every exception class the core raises on purpose has a code from that set.
- The generated files (``docs/PROTOCOL.md``, ``web/contract.js``) are current, and the page's handlers
  handle exactly the contract's event and part types; every error code the page names exists.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from test_wire import KEY, call, provider, serving
from vendor_fixtures import STREAMED, Fixture

from pycore import contract, wire
from pycore.commands import contract as generate
from pycore.exceptions import OrizuruError
from pycore.http.replay import Recording

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
HI = [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = generate.json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def check(validator: jsonschema.Draft202012Validator, name: str, value: Any) -> None:
    schema = {k: v for k, v in validator.schema.items() if k != "oneOf"} | {"$ref": f"#/$defs/{name}"}
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(value))
    assert not errors, f"{name}: {value!r}: {[e.message for e in errors]}"


@pytest.mark.parametrize("fixture", STREAMED, ids=str)
async def test_every_event_of_a_run_over_the_recordings_is_in_the_contract(
        fixture: Fixture, validator: jsonschema.Draft202012Validator) -> None:
    with serving(Recording(fixture.body(), status=fixture.status, content_type=fixture.content_type)):
        result, events, _ = await call("chat.run", {"provider": provider(fixture.vendor), "model": "m",
                                                     "messages": HI, "limits": {"max_steps": 1}})
    assert events
    for event in events:
        check(validator, "_event", {k: v for k, v in event.items() if k != "step"}
              if event["type"] in contract.stream_event_types() else event)
        assert isinstance(event.get("step", 0), int)
    if result.get("error"):
        check(validator, "_run_error", result["error"])
        assert result["error"]["code"] in contract.ERROR_CODES
    for event in events:
        for part in event["message"]["parts"] if event["type"] == "message" else []:
            check(validator, "_part", part)


def test_an_event_of_the_wrong_shape_is_refused(validator: jsonschema.Draft202012Validator) -> None:
    """The schema can fail: a renamed field, an unknown type."""
    with pytest.raises(AssertionError):
        check(validator, "_event", {"type": "tool_end", "call_id": "c", "name": "n", "is_error": False,
                                    "content": [], "duration": 1, "step": 1})
    with pytest.raises(AssertionError):
        check(validator, "_event", {"type": "citation", "index": 0})


async def outcome(method: str, params: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(await wire.call(method, json.dumps(params), lambda _: None))
    return result


async def test_a_failed_call_comes_back_as_a_code_and_a_sentence() -> None:
    unknown = (await outcome("nope", {}))["error"]
    assert unknown["code"] == "unknown_method" and unknown["message"].startswith("unknown method 'nope'")
    bad = (await outcome("chat.run", {"provider": provider("openai"), "messages": HI}))["error"]
    assert bad["code"] == "invalid_params" and bad["message"] == "chat.run: model: Field required"
    assert bad["details"] == {"errors": [{"field": "model", "problem": "Field required"}]}
    with serving(Recording(json.dumps({"error": {"message": "Incorrect API key provided",
                                                 "type": "invalid_request_error"}}).encode(), status=401)):
        refused = (await outcome("models.list", {"provider": provider("openai")}))["error"]
    assert refused["code"] == "vendor_auth" and refused["details"]["status"] == 401
    assert not re.match(r"^[\w.]+Error: ", refused["message"]) and KEY not in json.dumps(refused)
    assert (await outcome("core.echo", {"text": "a b"})) == {"result": {"text": "a b"}}


async def test_params_of_the_wrong_shape_name_the_field_and_its_problem() -> None:
    """Params are models (pycore/contract/params.py): a mistake is invalid_params naming each field."""
    bad = (await outcome("chat.page_tool_result", {"content": "done", "is_error": "perhaps"}))["error"]
    assert bad["code"] == "invalid_params"
    assert [e["field"] for e in bad["details"]["errors"]] == ["call_id", "content", "is_error"]
    assert bad["message"].startswith("chat.page_tool_result: call_id: Field required; content: content must be a list")
    assert "is_error: Input should be a valid boolean" in bad["message"]
    headers = (await outcome("mcp.connect", {"id": "s", "url": "https://mcp.example/mcp", "headers": {"X": 1},
                                             "transport": "carrier-pigeon"}))["error"]
    assert headers["code"] == "invalid_params" and [e["field"] for e in headers["details"]["errors"]] == [
        "headers", "transport"]
    assert "headers must be an object of strings" in headers["message"]
    assert "transport must be auto, streamable-http or sse, not 'carrier-pigeon'" in headers["message"]
    typed = (await outcome("core.echo", {"text": ["not", "text"]}))["error"]
    assert typed == {"code": "invalid_params", "message": "core.echo: text: Input should be a valid string",
                     "details": {"errors": [{"field": "text", "problem": "Input should be a valid string"}]}}


def test_every_method_declares_its_params_and_its_result() -> None:
    """Each method's result is a model (pycore/contract/results.py) with its own description, in the schema."""
    from pycore.methods import METHODS
    from pycore.methods._registry import PARAMS, RESULTS

    schema = generate.json_schema()
    assert set(PARAMS) == set(RESULTS) == set(METHODS) == set(schema["params"]) == set(schema["results"])
    undocumented = [name for name, model in RESULTS.items() if not model.__dict__.get("__doc__")]
    assert not undocumented
    assert schema["$defs"]["ServerDescription"]["properties"]["tools"]["items"] == {"$ref": "#/$defs/ToolInfo"}
    assert "inputSchema" in schema["$defs"]["ToolInfo"]["properties"]  # the wire name, not the Python one


async def test_a_method_that_returns_something_other_than_its_result_is_a_bug_not_a_bad_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pycore.contract.params import EchoParams
    from pycore.contract.results import EchoResult
    from pycore.methods import METHODS
    from pycore.methods._registry import PARAMS, RESULTS, method

    for registry in (METHODS, PARAMS, RESULTS):
        monkeypatch.setitem(registry, "test.sloppy", None)  # restored (removed) after the test

    @method("test.sloppy", params=EchoParams, result=EchoResult)
    async def sloppy(params: EchoParams, emit: Any, worker: Any) -> Any:
        return {"text": params.text}  # a dict of the right shape is still not the contract's type

    error = (await outcome("test.sloppy", {"text": "hi"}))["error"]
    assert error["code"] == "internal" and "test.sloppy returned dict, not its result EchoResult" in error["message"]


async def test_a_result_leaves_out_what_is_none_as_events_and_stored_messages_do() -> None:
    status = (await outcome("mcp.oauth_status", {"server_url": "https://mcp.example/mcp"}))["result"]
    assert status == {"authorized": False}


async def test_a_redacted_error_keeps_its_code() -> None:
    with serving(Recording(json.dumps({"error": {"message": f"key {KEY} is wrong"}}).encode(), status=401)):
        refused = (await outcome("models.list", {"provider": provider("openai")}))["error"]
    assert refused["code"] == "vendor_auth" and "[redacted]" in refused["message"] and KEY not in json.dumps(refused)


def every_subclass(cls: type) -> list[type]:
    return [cls] + [s for sub in cls.__subclasses__() for s in every_subclass(sub)]


def test_every_error_class_says_its_code() -> None:
    import pycore.agent.pending
    import pycore.mcp.errors  # noqa: F401 - registers the MCP errors as subclasses

    classes = every_subclass(OrizuruError) + [wire.UnknownMethodError, pycore.agent.pending.UnknownCallError]
    assert len(classes) > 30
    for cls in classes:
        assert "error_code" in vars(cls) or cls.error_code == vars(cls.__mro__[1]).get("error_code"), cls
        assert cls.error_code in contract.ERROR_CODES, cls


def test_the_generated_files_are_current() -> None:
    """Regenerate with: python -m pycore contract --markdown docs/PROTOCOL.md --js web/contract.js"""
    assert (ROOT / "docs/PROTOCOL.md").read_text(encoding="utf-8") == generate.protocol_markdown()
    assert (WEB / "contract.js").read_text(encoding="utf-8") == generate.page_module()


def cases(path: str, between: tuple[str, str] | None = None) -> set[str]:
    text = (WEB / path).read_text(encoding="utf-8")
    if between:
        text = text[text.index(between[0]):text.index(between[1])]
    return set(re.findall(r'case "(\w+)":', text))


def test_the_page_handles_exactly_the_contracts_event_and_part_types() -> None:
    """One side only (a type the core sends that the page drops, or one the page waits for in vain) fails."""
    assert cases("store/reduce.js") == set(contract.stream_event_types())
    assert cases("app/chat.js", ("  #onEvent(r, ev) {", "  #onStreamEvent(r, ev) {")) == \
        set(contract.loop_event_types())
    assert cases("store/exchange.js") == set(contract.part_types())


def test_every_error_code_the_page_names_exists() -> None:
    named: set[str] = set()
    for path in WEB.rglob("*.js"):
        if path.name == "contract.js":
            continue
        text = path.read_text(encoding="utf-8")
        named |= set(re.findall(r'\.code\s*[!=]==\s*"(\w+)"', text))
        for codes in re.findall(r"_CODES = new Set\(\[([^\]]*)\]\)", text):
            named |= set(re.findall(r'"(\w+)"', codes))
    assert named, "the page names no error code: this test reads the wrong files"
    assert named <= set(contract.ERROR_CODES), named - set(contract.ERROR_CODES)


def test_the_command_writes_the_schema_and_the_generated_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                               ) -> None:
    from pycore.__main__ import main

    files = {"schema": tmp_path / "contract.schema.json", "markdown": tmp_path / "PROTOCOL.md",
             "js": tmp_path / "contract.js"}
    assert main(["contract", *[a for k, p in files.items() for a in (f"--{k}", str(p))]]) == 0
    schema = json.loads(files["schema"].read_text(encoding="utf-8"))
    assert schema["error_codes"] == list(contract.ERROR_CODES) and "chat.run" in schema["methods"]
    approve = jsonschema.Draft202012Validator({"$defs": schema["$defs"], **schema["params"]["chat.approve"]})
    assert approve.is_valid({"call_id": "c1", "decision": "allow"}) and not approve.is_valid({"decision": "allow"})
    assert files["markdown"].read_text(encoding="utf-8") == generate.protocol_markdown()
    assert files["js"].read_text(encoding="utf-8") == generate.page_module()
    assert main(["contract"]) == 0  # no file named: the schema on stdout
    assert json.loads(capsys.readouterr().out) == schema
