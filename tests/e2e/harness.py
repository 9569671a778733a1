"""Test pages for one web module at a time, served like the real site.

A browser test of a single module (the markdown renderer, the transcript store, a panel) bundles a
small entry script with the project's own esbuild and serves it with the real relay, so the page
runs under the site's real Content-Security-Policy and origin rules:

    site = HarnessSite(tmp_path)
    site.add_page("render", entry=Path(__file__).parent / "render_harness" / "entry.js",
                  body='<div id="out"></div>')
    url = site.start()                  # http://127.0.0.1:PORT/  (pages at url + "render.html")
    ...
    site.stop()

The entry may import anything under web/ or node_modules/ by relative path or package name.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
from pathlib import Path

from conftest import ROOT, start_site

ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"

# The site's own policy (web/index.html's <meta>); the relay sends it as a header too.
SITE_CSP = re.search(r'<meta http-equiv="Content-Security-Policy"[^>]*>', (ROOT / "web" / "index.html").read_text())[0]
PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8">{csp}<title>{title}</title>{styles}</head>
<body>{body}<script type="module" src="assets/{name}.js"></script></body>
</html>
"""


class HarnessSite:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.dist = root / "site"
        (self.dist / "assets").mkdir(parents=True, exist_ok=True)
        self._proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def add_page(self, name: str, *, entry: Path, body: str = "", css: Path | None = None) -> None:
        """Bundle ``entry`` to ``assets/<name>.js`` and write ``<name>.html`` that loads it."""
        subprocess.run(
            [str(ESBUILD), str(entry), "--bundle", "--format=esm", "--target=es2022", "--sourcemap",
             f"--outfile={self.dist / 'assets' / (name + '.js')}", "--log-level=warning"],
            cwd=ROOT, check=True, env={**os.environ, "NODE_PATH": str(ROOT / "node_modules")})
        styles = ""
        if css is not None:
            (self.dist / "assets" / f"{name}.css").write_bytes(css.read_bytes())
            styles = f'<link rel="stylesheet" href="assets/{name}.css">'
        (self.dist / f"{name}.html").write_text(
            PAGE.format(csp=SITE_CSP, title=html.escape(name), styles=styles, body=body, name=name))

    def start(self, *args: str) -> str:
        """Serve the pages with the real relay (real CSP and headers); return the base URL."""
        if not (self.dist / "index.html").exists():
            (self.dist / "index.html").write_text(f"<!doctype html>{SITE_CSP}<title>harness</title>")
        self._proc, url = start_site(self.root / "server.log", self.dist, *args)
        self.url = url.split("#", 1)[0]
        return self.url

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=10)
            self._proc = None
