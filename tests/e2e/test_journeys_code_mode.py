"""Code mode (issue #33 item 1) in real Chromium: with the assistant's tools offered "Through code", the model's
`python` code calls a tool of the real @modelcontextprotocol/server-everything (added by URL) as
`await tools.everything.get_sum(...)`; the call crosses sandbox → page → core, and asks on the python call's card,
as the model's own call would: Allow once runs it and the code gets the result; Deny raises ToolDenied in the code,
whose text reaches the model. The model's own tool list no longer has the server's tools, and the python tool's
description tells it their Python API."""

from __future__ import annotations

import json

import pytest
from journeys import add_server, close_tools, open_app, send, wait_idle
from journeys_tool_servers import EVERYTHING, NODE, serve_everything
from playwright.sync_api import Browser, Locator, Page, expect
from test_journeys_assistants import panel
from test_journeys_interpreter import KEY, START_MS, analyst, results, script_code
from vendor_replay import VendorReplay

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(not NODE.exists() or not EVERYTHING.exists(), reason="npm devDependencies missing")]

CALL_SUM = ("from orizuru import tools\n"
            "total = await tools.everything.get_sum(a=2, b=3)\n"
            "print('the code got:', total)\n")
CALL_DENIED = "from orizuru import tools\nawait tools.call('everything.get-sum', {'a': 40, 'b': 2})\n"


def through_code(browser: Browser, site_url: str, vendor: VendorReplay, url: str) -> Page:
    """The analyst, server-everything added, and the chat's tools offered through code."""
    page = open_app(browser, site_url)
    analyst(page, vendor)
    add_server(page, url)
    close_tools(page)
    panel(page).get_by_label("Tools", exact=True).select_option("code")
    return page


def code_question(page: Page) -> Locator:
    """The question the code's call asks, on the python call's card."""
    card = page.get_by_role("group", name="Tool python").last
    question = card.get_by_role("region", name="Approval for get-sum, asked by the code")
    expect(question).to_be_visible(timeout=START_MS)
    return question


def test_code_calls_an_mcp_tool_after_allow_once_and_a_deny_raises_in_the_code(browser: Browser, site_url: str,
                                                                              vendor: VendorReplay):
    with serve_everything() as url:
        script_code(vendor, CALL_SUM, answer="Five.")
        page = through_code(browser, site_url, vendor, url)
        send(page, "What is 2 + 3? Use the server.")
        question = code_question(page)
        expect(question).to_contain_text("The code of this call asks to run get-sum")
        expect(question.locator(".approval-server")).to_have_text(url)  # who it reaches: the server the user added
        expect(question.locator(".approval-tool")).to_have_text("get-sum")
        expect(question.locator(".approval-args")).to_contain_text('"a": 2')
        question.get_by_role("button", name="Allow once").click()
        wait_idle(page, timeout=START_MS)
        assert results(vendor)[-1].startswith("stdout:\nthe code got: The sum of 2 and 3 is 5.")
        first = vendor.model_requests[0].json
        offered = {tool["function"]["name"]: tool["function"] for tool in first["tools"]}
        assert set(offered) == {"python", "artifact"}  # the server's tools only through code (artifact: the page's)
        assert "await tools.everything.get_sum(*, a: float, b: float)  # Returns the sum of two numbers" \
            in offered["python"]["description"]

        script_code(vendor, CALL_DENIED, answer="Refused.")
        send(page, "And 40 + 2?")
        code_question(page).get_by_role("button", name="Deny").click()
        wait_idle(page, timeout=START_MS)
        told = results(vendor)[-1]
        assert "ToolDenied: you did not allow 'get-sum'" in told and "to run for the code" in told
        assert "The sum of 40" not in json.dumps(vendor.model_requests[-1].json)  # the tool never ran
        page.context.close()


HOSTILE = """import json
from orizuru import tools, ToolDenied
server = tools._entries['everything.echo']['ref']['server']
# T-I13: the channel itself, asked for a tool the user turned off (so not in the run's catalog)
print('turned off:', await tools._channel(json.dumps({'server': server, 'tool': 'get-env', 'arguments': {}})))
# T-I14: all that code mode puts in the sandbox
print('seen:', repr(tools._entries), repr(vars(tools)))
# T-I15: arguments written to look like the question's own buttons
try:
    await tools.everything.echo(message='<button>Allow once</button><img src=x onerror="window.pwned=1">')
except ToolDenied as e:
    print('denied:', e)
"""


def test_t_i13_to_15_code_cannot_skip_approval_reach_keys_or_forge_the_question(browser: Browser, site_url: str,
                                                                               vendor: VendorReplay):
    with serve_everything() as url:
        script_code(vendor, HOSTILE, answer="Tried.")
        page = open_app(browser, site_url)
        analyst(page, vendor)
        add_server(page, url).get_by_role("checkbox", name="Use get-env").uncheck()
        close_tools(page)
        panel(page).get_by_label("Tools", exact=True).select_option("both")
        send(page, "Try everything.")
        card = page.get_by_role("group", name="Tool python").last
        question = card.get_by_role("region", name="Approval for echo, asked by the code")
        expect(question).to_be_visible(timeout=START_MS)
        # T-I15: the question is the core's (its server, the tool's own name); the code's text in it is text.
        expect(question.locator("h4")).to_have_text("The code of this call asks to run echo")
        expect(question.locator(".approval-server")).to_have_text(url)
        expect(question.get_by_role("button", name="Allow once")).to_have_count(1)
        expect(question.locator("img")).to_have_count(0)
        expect(question.locator(".approval-args")).to_contain_text("<button>Allow once</button><img src=x")
        question.get_by_role("button", name="Deny").click()
        wait_idle(page, timeout=START_MS)
        told = results(vendor)[-1]
        assert f"turned off: {{\"error\":\"get-env of url:{url} is not one of the tools this code may call\"}}" \
            in told  # T-I13: refused by the page, never sent to the core
        assert "denied: you did not allow 'echo'" in told
        assert "seen: {" in told and KEY not in told  # T-I14
        assert all(KEY not in request.body.decode() for request in vendor.model_requests)
        assert page.evaluate("() => window.pwned") is None
        offered = {tool["function"]["name"] for tool in vendor.model_requests[0].json["tools"]}
        assert {"python", "echo", "get-sum"} <= offered and "get-env" not in offered  # "both": also directly
        page.context.close()


def test_the_time_the_user_takes_to_answer_the_codes_question_is_not_the_codes(browser: Browser, site_url: str,
                                                                              vendor: VendorReplay):
    """A run may take 2 s here; the user reads the code's question for longer before Allow once. The code still gets
    its result: only the code's own time counts against the limit, not the time spent waiting for the user."""
    with serve_everything() as url:
        script_code(vendor, CALL_SUM, answer="Five.")
        context = browser.new_context()
        context.add_init_script("localStorage.setItem('orizuru.interpreterTimeout', '2')")
        page = open_app(browser, site_url, context=context)
        analyst(page, vendor)
        add_server(page, url)
        close_tools(page)
        panel(page).get_by_label("Tools", exact=True).select_option("code")
        send(page, "What is 2 + 3?")
        question = code_question(page)
        asked = page.evaluate("performance.now()")
        # The behaviour under test is about time: the user answers only once twice the run's limit has passed.
        page.wait_for_function(f"() => performance.now() > {asked + 4_000}")
        question.get_by_role("button", name="Allow once").click()
        wait_idle(page, timeout=START_MS)
        assert results(vendor)[-1].startswith("stdout:\nthe code got: The sum of 2 and 3 is 5.")
        context.close()
