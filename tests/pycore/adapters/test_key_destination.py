"""Where requests (and so keys) may go, and the errors that explain a refusal (SECURITY.md V1, T-V7).

Runs in both runtimes on the replay transport; the real-HTTP redirect case is in
``tests/pycore/http/test_httpx_loopback.py``.
"""

from __future__ import annotations

import pytest
from vendor_fixtures import no_sleep

from pycore.adapters import VENDORS, get_adapter
from pycore.adapters.ollama import OllamaAdapter
from pycore.client import ChatClient
from pycore.exceptions import APIConnectionError, APIStatusError, PermissionDeniedError
from pycore.http import Request
from pycore.http.replay import Recording, ReplayTransport
from pycore.messages import ChatRequest, Message

pytestmark = pytest.mark.pyodide

KEY = "sk-ant-DESTINATIONTEST-0123456789"
REQUEST = ChatRequest(model="m", messages=[Message.user("hi")])
REAL = [v for v in VENDORS if v != "fake"]


@pytest.mark.parametrize("vendor", REAL)
def test_every_request_an_adapter_builds_goes_under_its_base_url(vendor: str) -> None:
    for base_url in (None, "https://proxy.example/team/v1"):
        adapter = get_adapter(vendor, api_key=KEY, base_url=base_url)
        for request in (adapter.build_request(REQUEST), adapter.models_request()):
            adapter.check_destination(request.url)  # raises if not


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/team/v1/chat/completions",  # another host
        "https://proxy.example:8443/team/v1/chat/completions",  # another port
        "http://proxy.example/team/v1/chat/completions",  # another scheme
        "https://proxy.example/other/chat/completions",  # outside the base path
        "https://proxy.example/team/v10/chat/completions",  # a sibling that merely shares the prefix
        "https://proxy.example.evil.example/team/v1/chat/completions",  # suffix trick
    ],
)
async def test_the_client_refuses_to_send_anywhere_else_and_nothing_leaves(url: str) -> None:
    adapter = get_adapter("openai", api_key=KEY, base_url="https://proxy.example/team/v1")
    transport = ReplayTransport([Recording(b"{}")])
    client = ChatClient(adapter, transport, sleep=no_sleep)
    with pytest.raises(ValueError, match="only to proxy.example") as caught:
        await client.send(Request("POST", url, {"authorization": f"Bearer {KEY}"}, b"{}"))
    assert transport.requests == [] and KEY not in str(caught.value)


@pytest.mark.parametrize(
    "base_url",
    [
        "https://user:secret@api.example/v1",  # credentials in the URL
        "https://api.example/v1?key=AIzaSyDESTINATIONTEST0123456789",  # a key in the query
        "https://api.example/v1#fragment",
        "ftp://api.example/v1",
        "api.example/v1",  # no scheme, no host
        "https:///v1",
    ],
)
@pytest.mark.parametrize("vendor", ["openai", "gemini", "ollama"])
def test_a_base_url_that_could_carry_or_leak_a_key_is_refused_with_a_clear_error(vendor: str, base_url: str) -> None:
    with pytest.raises(ValueError, match="base URL") as caught:
        get_adapter(vendor, api_key=KEY, base_url=base_url)
    assert "secret" not in str(caught.value) and "AIza" not in str(caught.value)


def test_loopback_and_https_base_urls_are_accepted() -> None:
    for url in ("http://localhost:11434", "http://127.0.0.1:1234/v1", "http://[::1]:8000/v1", "https://api.example"):
        assert get_adapter("openai", base_url=url).base_url == url


@pytest.mark.parametrize(
    "status, location, where",
    [
        (307, "https://elsewhere.example/v1/messages", "elsewhere.example"),
        (302, "/v2/messages", "api.anthropic.com"),
        (0, None, "elsewhere"),  # a browser's opaque redirect: status 0, target hidden
    ],
)
async def test_a_redirect_is_an_error_naming_its_target_and_is_not_followed(
    status: int, location: str | None, where: str
) -> None:
    headers = {"location": location} if location else {}
    transport = ReplayTransport([Recording(b"", status=status, headers=headers), Recording(b"should not be used")])
    client = ChatClient(get_adapter("anthropic", api_key=KEY), transport, sleep=no_sleep)
    with pytest.raises(APIStatusError) as caught:
        [event async for event in client.stream(REQUEST)]
    assert caught.value.type == "redirect" and where in str(caught.value) and KEY not in str(caught.value)
    assert len(transport.requests) == 1 and transport.requests[0].follow_redirects is False
    assert transport.responses[0].closed


# ------------------------------------------------------------------------------------ Ollama (T-V7)
async def test_ollama_403_tells_the_user_to_allow_this_pages_origin() -> None:
    adapter = OllamaAdapter(origin="https://orizuru.example")
    client = ChatClient(adapter, ReplayTransport([Recording(b"", status=403)]), sleep=no_sleep)
    with pytest.raises(PermissionDeniedError) as caught:
        [event async for event in client.stream(REQUEST)]
    assert "OLLAMA_ORIGINS=https://orizuru.example" in str(caught.value)
    assert caught.value.status == 403 and caught.value.vendor == "ollama"


def test_ollama_403_keeps_ollamas_own_message_first() -> None:
    error = OllamaAdapter(origin="http://localhost:8000").map_error(403, {}, b'{"error":"forbidden"}')
    assert error.vendor_message.startswith("forbidden. ") and "OLLAMA_ORIGINS=http://localhost:8000" in str(error)


def test_other_vendors_403_gets_no_ollama_hint() -> None:
    error = get_adapter("openai").map_error(403, {}, b'{"error":{"message":"no access"}}')
    assert "OLLAMA_ORIGINS" not in str(error)


async def test_in_a_browser_an_unreachable_ollama_names_the_origin_to_allow() -> None:
    """A refused origin fails the CORS preflight, which a page sees only as a failed fetch."""
    adapter = OllamaAdapter(origin="https://orizuru.example")
    transport = ReplayTransport([Recording(b"", connect_error=True)])
    with pytest.raises(APIConnectionError) as caught:
        await ChatClient(adapter, transport, sleep=no_sleep).send(adapter.build_request(REQUEST))
    assert "OLLAMA_ORIGINS=https://orizuru.example" in str(caught.value) and "localhost:11434" in str(caught.value)


async def test_outside_a_browser_a_connection_error_is_left_as_it_is() -> None:
    adapter = OllamaAdapter()
    if adapter.origin is not None:
        pytest.skip("running inside a page: the origin is known")
    transport = ReplayTransport([Recording(b"", connect_error=True)])
    with pytest.raises(APIConnectionError) as caught:
        await ChatClient(adapter, transport, sleep=no_sleep).send(adapter.build_request(REQUEST))
    assert "OLLAMA_ORIGINS" not in str(caught.value)
