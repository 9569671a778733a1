"""Elicitation requests and answers (pycore.mcp.elicitation): what a form may ask, and what an answer must be."""

from __future__ import annotations

import pytest

from pycore.mcp.elicitation import ElicitationError, accept, check_request

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2},
        "email": {"type": "string", "format": "email"},
        "guests": {"type": "integer", "minimum": 1, "maximum": 12, "default": 2},
        "score": {"type": "number", "default": 95.5},
        "time": {"type": "string", "enum": ["18:00", "19:00"], "default": "19:00"},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
        "extras": {"type": "array", "items": {"type": "string", "enum": ["wine", "cake"]}, "maxItems": 1},
        "window": {"type": "boolean", "default": True},
    },
    "required": ["name"],
}


def test_defaults_fill_what_the_user_left_out_sep_1034():
    assert accept(SCHEMA, {"name": "Ada"}) == {"name": "Ada", "guests": 2, "score": 95.5, "time": "19:00",
                                               "window": True}
    assert accept(SCHEMA, {"name": "Ada", "guests": 4, "window": False})["guests"] == 4


@pytest.mark.parametrize(("content", "problem"), [
    ({}, "name: required"),
    ({"name": "A"}, "name: at least 2 characters"),
    ({"name": "Ada", "guests": 13}, "guests: at most 12"),
    ({"name": "Ada", "guests": 2.5}, "guests: must be a whole number"),
    ({"name": "Ada", "guests": True}, "guests: must be a whole number"),
    ({"name": "Ada", "time": "21:00"}, "time: choose one of"),
    ({"name": "Ada", "size": "m"}, "size: choose one of ['s', 'l']"),
    ({"name": "Ada", "extras": ["wine", "cake"]}, "extras: too few or too many"),
    ({"name": "Ada", "extras": ["beer"]}, "extras: choose from"),
    ({"name": "Ada", "email": "nope"}, "email: not a valid email"),
    ({"name": "Ada", "window": "yes"}, "window: must be true or false"),
    ({"name": "Ada", "other": 1}, "not asked for: other"),
])
def test_an_answer_that_does_not_fit_names_the_field_and_the_problem(content, problem):
    with pytest.raises(ElicitationError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        accept(SCHEMA, content)


def test_only_forms_of_primitives_and_safe_urls_are_put_to_the_user():
    assert check_request({"message": "Who?", "requestedSchema": SCHEMA}) == "form"
    assert check_request({"mode": "url", "message": "Pay", "url": "https://shop.example/pay",
                          "elicitationId": "p1"}) == "url"
    assert check_request({"mode": "url", "message": "Local", "url": "http://127.0.0.1:9/x",
                          "elicitationId": "p"}) == "url"
    nested = {"type": "object", "properties": {"address": {"type": "object", "properties": {}}}}
    for params, problem in [
        ({"message": "x", "requestedSchema": nested}, "field 'address'"),
        ({"message": "x", "requestedSchema": {"type": "string"}}, "object schema"),
        ({"mode": "url", "message": "x", "url": "javascript:alert(1)", "elicitationId": "e"}, "absolute URL"),
        ({"mode": "url", "message": "x", "url": "http://shop.example/pay", "elicitationId": "e"}, "must be https"),
        ({"mode": "url", "message": "x", "url": "https://shop.example/pay"}, "elicitationId"),
        ({"mode": "popup", "message": "x"}, "unknown elicitation mode"),
        ({"requestedSchema": SCHEMA}, "needs a message"),
    ]:
        with pytest.raises(ElicitationError, match=problem):
            check_request(params)


@pytest.mark.parametrize("url", [
    "https://evil.example\\@accounts.example.com/login",  # Python reads accounts.example.com, the browser evil.example
    "https://accounts.example.com@evil.example/login",  # userinfo: the host is after the last '@'
    "https://evil.example%2f@accounts.example.com/",
    "https://accounts.example.com\\.evil.example/",
    "https://accounts.example.com\t/login",
])
def test_q5_a_link_url_parsers_could_read_differently_is_refused(url):
    """SECURITY.md T-Q5: what the user is shown as the link's host must be where the browser goes."""
    with pytest.raises(ElicitationError, match="refused"):
        check_request({"mode": "url", "message": "Sign in", "url": url, "elicitationId": "e"})


def test_q5_the_host_shown_is_the_one_the_browser_reads():
    from pycore.mcp import elicitation

    assert elicitation.link_host("https://Accounts.EXAMPLE.com:443/login?next=/") == "accounts.example.com"
    assert elicitation.link_host("https://xn--bcher-kva.example/") == "xn--bcher-kva.example"
