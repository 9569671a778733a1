"""build.py: locked downloads are verified, and dist/ is a relocatable static site."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import build  # noqa: E402

DIST = Path(os.environ.get("ORIZURU_DIST", ROOT / "dist"))


def entry_for(content: bytes, file: str = "demo-1.0-py3-none-any.whl") -> dict:
    return {"name": "demo", "version": "1.0", "file": file, "sha256": hashlib.sha256(content).hexdigest()}


def fake_pip(served: bytes, calls: list):
    """Stands in for `pip download`: writes `served` under the requested name into the -d folder."""

    def run(cmd, **kw):
        cmd = [str(c) for c in cmd]
        if "-r" in cmd:  # what pip is asked for: the locked file's requirement line, hash included
            cmd.append("pinned: " + Path(cmd[cmd.index("-r") + 1]).read_text().strip())
        calls.append(cmd)
        dest = Path(cmd[cmd.index("-d") + 1])
        (dest / "demo-1.0-py3-none-any.whl").write_bytes(served)

    return run


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "CACHE", tmp_path)
    monkeypatch.setattr(build, "wheel_lock", lambda: {"python": "3.14", "packages": []})
    return tmp_path


def test_a_download_whose_hash_differs_stops_the_build_naming_the_file(cache, monkeypatch):
    calls: list = []
    monkeypatch.setattr(build, "run", fake_pip(b"tampered", calls))
    entry = entry_for(b"the real wheel")
    with pytest.raises(build.BuildError, match=r"demo-1\.0-py3-none-any\.whl: sha256 mismatch") as err:
        build.fetch_locked(entry)
    assert entry["sha256"] in str(err.value)
    assert hashlib.sha256(b"tampered").hexdigest() in str(err.value)
    assert not (cache / "downloads" / entry["file"]).exists()


def test_a_cached_file_with_the_right_hash_is_reused_without_downloading(cache, monkeypatch):
    calls: list = []
    monkeypatch.setattr(build, "run", fake_pip(b"unused", calls))
    entry = entry_for(b"the real wheel")
    (cache / "downloads").mkdir()
    (cache / "downloads" / entry["file"]).write_bytes(b"the real wheel")
    assert build.fetch_locked(entry).read_bytes() == b"the real wheel"
    assert calls == []


def test_a_corrupted_cache_entry_is_downloaded_again(cache, monkeypatch):
    calls: list = []
    monkeypatch.setattr(build, "run", fake_pip(b"the real wheel", calls))
    entry = entry_for(b"the real wheel")
    (cache / "downloads").mkdir()
    (cache / "downloads" / entry["file"]).write_bytes(b"half a wh")
    assert build.fetch_locked(entry).read_bytes() == b"the real wheel"
    assert len(calls) == 1


def test_wasm_wheels_are_asked_for_by_platform_tag(cache, monkeypatch):
    calls: list = []
    monkeypatch.setattr(build, "run", fake_pip(b"x", calls))
    entry = {**entry_for(b"x"), "platform": "pyemscripten_2026_0_wasm32"}
    build.fetch_locked(entry)
    cmd = [str(c) for c in calls[0]]
    assert cmd[cmd.index("--platform") + 1] == "pyemscripten_2026_0_wasm32"
    assert cmd[cmd.index("--python-version") + 1] == "3.14"
    assert "--require-hashes" in cmd
    assert f"pinned: demo==1.0 --hash=sha256:{entry['sha256']}" in cmd  # that exact file, by its hash


def test_the_browser_lock_matches_the_python_lock():
    """web/pyodide-wheels.lock.json and requirements.lock pin the same versions of what both ship."""
    python_lock = (ROOT / "requirements.lock").read_text().lower()
    for entry in json.loads((ROOT / "web" / "pyodide-wheels.lock.json").read_text())["packages"]:
        if entry["purpose"] == "sandbox":  # only the code interpreter's Python has these (micropip): CPython does not
            continue
        if entry["name"] == "pydantic-core":  # CPython installs a native wheel of the same version
            assert f"pydantic-core=={entry['version']}" in python_lock
            continue
        pin = f"{entry['name']}=={entry['version']}"
        assert pin in python_lock, f"{pin} is in the browser lock but not in requirements.lock"
        assert entry["sha256"] in python_lock, f"{entry['file']}: hashes differ between the two locks"


def built_index() -> str:
    if not (DIST / "index.html").is_file():
        pytest.fail(f"{DIST} is not built: run `python3 build.py build`")
    return (DIST / "index.html").read_text()


def test_dist_uses_only_relative_urls_that_exist():
    html = built_index()
    refs = re.findall(r'(?:src|href)="([^"]+)"', html)
    boot = json.loads(re.search(r'<script type="application/json" id="boot">(.*?)</script>', html).group(1))
    refs += [boot["worker"], *boot["wheels"], *boot["later"], boot["pyodide"] + "pyodide.mjs"]
    for ref in refs:
        assert not ref.startswith(("/", "http:", "https:", "//")), ref
        assert (DIST / ref).is_file(), ref


def test_dist_asset_names_carry_their_content_hash():
    boot = json.loads(re.search(r'id="boot">(.*?)</script>', built_index()).group(1))
    for wheel in boot["wheels"] + boot["later"]:
        folder, name = wheel.split("/")[1:]
        assert hashlib.sha256((DIST / wheel).read_bytes()).hexdigest().startswith(folder), wheel
    assert re.fullmatch(r"assets/worker-[A-Z0-9]{8}\.js", boot["worker"])


def test_the_price_list_is_a_chunk_of_its_own_and_the_site_holds_no_way_to_update_it_from_github():
    """@pydantic/genai-prices (#35: costs and context windows) is ~800 KB of data: fetched when a cost is first shown,
    not at boot; and its remote update (a fetch from raw.githubusercontent.com) is left out of every file."""
    built_index()
    chunks = list((DIST / "assets" / "chunks").glob("price_data-*.js"))
    assert len(chunks) == 1, chunks
    assert "claude-3-5-sonnet" in chunks[0].read_text()  # the data is in it
    for path in (DIST / "assets").rglob("*.js"):
        text = path.read_text()
        assert "raw.githubusercontent.com" not in text, path
        if path != chunks[0]:
            assert "claude-3-5-sonnet" not in text, f"{path} carries the price data: it belongs in its chunk"


def test_dist_ships_header_rules_for_static_hosts_that_agree_with_the_page():
    """_headers (Netlify, Cloudflare Pages): the page's own policy plus frame-ancestors, and caching that
    matches the file names (hashed folders forever, the page and service worker revalidated)."""
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', built_index())[1]
    rules: dict[str, dict[str, str]] = {}
    path = None
    for line in (DIST / "_headers").read_text().splitlines():
        if not line.startswith(" "):
            path = line
            rules[path] = {}
        else:
            name, value = line.strip().split(": ", 1)
            rules[path][name] = value
    for page in ("/", "/index.html", "/sw.js", "/assets/*", "/wheels/*", "/pyodide/*"):
        assert rules[page]["Content-Security-Policy"] == f"{policy}; frame-ancestors 'none'"
    # The MCP App views' frame has its own policy, and only that one: no rule matching it (/*) sends the page's.
    frame_meta = (DIST / build.MCP_APP_FRAME).read_text()
    frame_policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', frame_meta)[1]
    assert rules[f"/{build.MCP_APP_FRAME}"]["Content-Security-Policy"] == f"{frame_policy}; frame-ancestors 'self'"
    assert "Content-Security-Policy" not in rules["/*"]
    assert "'unsafe-inline'" not in policy and "'unsafe-inline'" in frame_policy
    assert rules["/*"]["X-Content-Type-Options"] == "nosniff"
    for immutable in ("/assets/*", "/wheels/*", "/pyodide/*"):
        assert "immutable" in rules[immutable]["Cache-Control"]
        assert (DIST / immutable.strip("/*")).is_dir()
    for revalidated in ("/", "/index.html", "/sw.js"):
        assert rules[revalidated]["Cache-Control"] == "no-cache"


def test_a_page_without_its_policy_stops_the_build(tmp_path):
    with pytest.raises(build.BuildError, match="no Content-Security-Policy <meta>"):
        build.write_host_headers(tmp_path, "<!doctype html><title>x</title>")


def test_the_app_frame_gets_the_views_limits_written_in_and_refuses_a_frame_without_their_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """web/mcp_app/limits.js is the one source of what an MCP App view may send: the page imports it, and the build
    writes it into the view's outer frame, a page of its own (SECURITY.md T-W9)."""
    build.write_app_frame(tmp_path / "frame.html")
    frame = (tmp_path / "frame.html").read_text()
    assert "@inline" not in frame and "export " not in frame
    assert "function messageSize(value, limit)" in frame and "const MESSAGE_LIMIT = 8 * 2 ** 20" in frame
    web = tmp_path / "web"
    (web / "mcp_app").mkdir(parents=True)
    (web / "mcp_app" / "frame.html").write_text("<script>const size = messageSize(msg);</script>")
    monkeypatch.setattr(build, "WEB", web)
    with pytest.raises(build.BuildError, match="must hold"):
        build.write_app_frame(tmp_path / "broken.html")


def test_the_client_metadata_document_names_its_own_url_and_the_page(tmp_path):
    build.write_client_metadata(tmp_path, "https://example.org/orizuru")
    document = json.loads((tmp_path / "oauth-client.json").read_text())
    assert document["client_id"] == "https://example.org/orizuru/oauth-client.json"
    assert document["redirect_uris"] == ["https://example.org/orizuru/", "https://example.org/orizuru/index.html"]
    assert (document["application_type"], document["token_endpoint_auth_method"]) == ("web", "none")
    build.write_client_metadata(tmp_path / "none", None)  # the site's URL unknown: no document, nothing fails
    with pytest.raises(build.BuildError, match="https"):
        build.write_client_metadata(tmp_path, "http://example.org/")
