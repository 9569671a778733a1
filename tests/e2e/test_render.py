"""The markdown renderer and tool-result renderer (web/render/) in real Chromium, under the site's CSP.

A harness page (render_harness/entry.js) is bundled with esbuild and served by the real relay; the
tests drive it with page.evaluate. What is proven:
- streaming: the streamed DOM equals a one-shot render of the same text at every step, for real-looking
  replies split at every boundary and at many random boundaries, and finished blocks' DOM nodes are
  never replaced or mutated while later text arrives (node identity = no flicker);
- safety (SECURITY.md T-X1..T-X10) through model output and through tool results: nothing executes,
  nothing is requested from any host but the page's own, links are safe, images wait for the user;
- images load from a host once the user allows it; code is highlighted and its Copy button works.
"""

from __future__ import annotations

import base64
import json
import random
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
    assert session.page.evaluate("(chunks) => window.harness.streamFrames(chunks)", chunks) == \
        session.call("oneShot", text)


def test_unclosed_fence_and_half_table_render_as_text_and_code_mid_stream(session: Session):
    text = "Intro paragraph.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\ndef f():\n    return '<b>'"
    session.call("streamOpen", list(text))
    page = session.page
    expect(page.locator("#open table td").first).to_have_text("1")
    expect(page.locator("#open pre code")).to_contain_text("return '<b>'")  # the open fence shows as code
    assert page.locator("#open pre b").count() == 0
    session.page.evaluate("() => { window.openRenderer.append(\"\\n```\\n\\n| x | y |\\n|--\"); window.openRenderer.flush(); }")
    # Half a delimiter row: plain text for now, and the finished blocks above are untouched.
    expect(page.locator("#open p").last).to_have_text("| x | y |\n|--")
    expect(page.locator("#open table")).to_have_count(1)
    session.page.evaluate("() => { window.openRenderer.append('-|--|\\n| 3 | 4 |\\n'); window.openRenderer.finish(); }")
    expect(page.locator("#open table")).to_have_count(2)
    expect(page.locator("#open table").last.locator("td")).to_have_text(["3", "4"])
