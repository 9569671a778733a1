"""The relay serves the build's precompressed copies (server/static.py) and build.py writes them."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from server.app import create_app

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import build  # noqa: E402

WASM = b"\0asm" + bytes(range(256)) * 400  # compressible, above the 64 KiB threshold


@pytest.fixture
def site(tmp_path: Path) -> Path:
    (tmp_path / "index.html").write_text("<!doctype html><title>site</title>")
    (tmp_path / "big.wasm").write_bytes(WASM)
    (tmp_path / "small.js").write_text("export {};\n")
    (tmp_path / "packed.whl").write_bytes(gzip.compress(WASM))  # already compressed: no copy
    build.write_precompressed(tmp_path)
    return tmp_path


def test_build_writes_a_gzip_copy_only_where_it_pays(site: Path):
    assert gzip.decompress((site / "big.wasm.gz").read_bytes()) == WASM
    assert not (site / "small.js.gz").exists()
    assert not (site / "packed.whl.gz").exists()


def test_a_client_accepting_gzip_gets_the_copy_with_the_original_type(site: Path):
    client = TestClient(create_app(site))
    response = client.get("/big.wasm", headers={"accept-encoding": "gzip, deflate, br"})
    assert response.headers["content-encoding"] == "gzip"
    assert response.headers["content-type"] == "application/wasm"
    assert int(response.headers["content-length"]) == (site / "big.wasm.gz").stat().st_size
    assert response.content == WASM  # httpx undoes the encoding: the bytes the browser sees
    assert "Accept-Encoding" in response.headers["vary"]


@pytest.mark.parametrize("accept", ["identity", "br", "gzip;q=0", ""])
def test_a_client_not_accepting_gzip_gets_the_plain_file(site: Path, accept: str):
    client = TestClient(create_app(site))
    response = client.get("/big.wasm", headers={"accept-encoding": accept})
    assert "content-encoding" not in response.headers
    assert response.content == WASM
    assert response.headers["vary"] == "Accept-Encoding"


def test_files_without_a_copy_are_served_as_before(site: Path):
    client = TestClient(create_app(site))
    response = client.get("/small.js", headers={"accept-encoding": "gzip"})
    assert "content-encoding" not in response.headers and response.text == "export {};\n"
    assert client.get("/", headers={"accept-encoding": "gzip"}).text.startswith("<!doctype html>")
