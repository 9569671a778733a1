#!/usr/bin/env python3
"""Orizuru's one entry point: set-up, build, serve and test.

    python3 build.py build            assemble dist/, the static site
    python3 build.py serve [ARGS]     build, then run the app and relay on loopback (ARGS go to the relay)
    python3 build.py test [ARGS]      build, lint (ruff, mypy --strict, eslint, tsc --strict), then run every suite
                                      with a coverage floor (ARGS go to pytest and skip the floor)

Standard library only, so a bare ``python3`` runs it. Every command first does the set-up it needs:

- ``.venv``: created here and filled from ``requirements.lock`` (pinned, with hashes), then the
  project installed editable;
- ``node_modules``: ``npm ci`` from ``package-lock.json``;
- the browser's Python wheels: ``web/pyodide-wheels.lock.json`` (pinned, with sha256), downloaded
  into ``.cache/`` and reused while their hash matches; markupsafe is built from its sdist as pure
  Python because PyPI has no wasm wheel of it;
- for ``test``: Debian's ``chromium`` (apt-get) when ``/usr/bin/chromium`` is missing.

Each step is skipped when a stamp of its inputs says nothing changed.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
CACHE = ROOT / ".cache"
# ORIZURU_DIST moves the site elsewhere (parallel work trees, benchmarks); tests read the same variable.
DIST = Path(os.environ.get("ORIZURU_DIST") or ROOT / "dist").resolve()
WEB = ROOT / "web"
NODE_MODULES = ROOT / "node_modules"
WHEELS_LOCK = WEB / "pyodide-wheels.lock.json"
CHROMIUM = Path("/usr/bin/chromium")
# Wheels in dist/ keep their names (the installer parses them) under a content-hash folder.
SOURCE_DATE_EPOCH = "1700000000"


class BuildError(Exception):
    """A set-up or build step failed; the message says which and why."""


def log(msg: str) -> None:
    print(f"[build] {msg}", flush=True)


def run(cmd: list[str | Path], *, hint: str = "", **kw) -> None:
    """Run a step; on failure raise a BuildError naming the command and, with ``hint``, what to do."""
    todo = f"\n  what to do: {hint}" if hint else ""
    try:
        subprocess.run([str(c) for c in cmd], check=True, cwd=kw.pop("cwd", ROOT), **kw)
    except subprocess.CalledProcessError as e:
        raise BuildError(f"command failed ({e.returncode}): {' '.join(map(str, cmd))}{todo}") from e
    except FileNotFoundError as e:
        raise BuildError(f"command not found: {cmd[0]} ({e}){todo}") from e


PIP_HINT = ("pip needs PyPI (or the index your pip configuration names): check the network and rerun; "
            "the pins are in requirements.lock and web/pyodide-wheels.lock.json")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fingerprint(paths: list[Path]) -> str:
    """A hash of the names and bytes of every file under ``paths``."""
    h = hashlib.sha256()
    for base in paths:
        files = sorted(p for p in base.rglob("*") if p.is_file()) if base.is_dir() else [base]
        for p in files:
            if "__pycache__" in p.parts:
                continue
            h.update(str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def stamped(stamp: Path, value: str) -> bool:
    return stamp.is_file() and stamp.read_text() == value


# ---------------------------------------------------------------- set-up


def venv_python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv() -> None:
    want = fingerprint([ROOT / "requirements.lock", ROOT / "pyproject.toml"])
    stamp = VENV / ".orizuru-stamp"
    if stamped(stamp, want):
        return
    if not venv_python().exists():
        log("creating .venv")
        try:
            venv.EnvBuilder(with_pip=True).create(VENV)
        except (subprocess.CalledProcessError, OSError) as e:
            # Debian's python3 ships venv without ensurepip until python3-venv is installed.
            log(f"venv without pip ({e}); installing python3-venv")
            apt_install("python3-venv")
            shutil.rmtree(VENV, ignore_errors=True)
            venv.EnvBuilder(with_pip=True).create(VENV)
    log("installing Python dependencies from requirements.lock (hash-checked)")
    pip = [venv_python(), "-m", "pip", "--disable-pip-version-check", "--quiet"]
    # --no-deps: the lock is complete (tests/build/test_locks.py proves it), so nothing is resolved and
    # a release published after the lock cannot be picked instead of a pin (pip resolves a dependency
    # with extras, such as google-auth[requests], to the newest release even in hash-checking mode).
    run([*pip, "install", "--require-hashes", "--no-deps", "-r", "requirements.lock"], hint=PIP_HINT)
    run([*pip, "install", "--no-deps", "--no-build-isolation", "-e", "."],
        hint="the project did not install into .venv: delete .venv and rerun")
    stamp.write_text(want)


def ensure_node_modules() -> None:
    want = fingerprint([ROOT / "package-lock.json"])
    stamp = NODE_MODULES / ".orizuru-stamp"
    if stamped(stamp, want):
        return
    log("installing web dependencies (npm ci)")
    run(["npm", "ci", "--no-audit", "--no-fund"],
        hint="npm ci needs Node/npm and the npm registry; check both, delete node_modules/ and rerun")
    stamp.write_text(want)


# How long set-up waits for another apt/dpkg process (unattended upgrades, a second install) to finish.
APT_LOCK_WAIT = 900.0
APT_LOCK_RETRY = 5.0
APT_LOCKED = ("Could not get lock", "Unable to acquire the dpkg frontend lock", "Unable to lock directory")


def apt_get(*args: str, package: str) -> None:
    """Run apt-get, waiting while another process holds apt's or dpkg's lock."""
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = [*sudo, "apt-get", "-o", "DPkg::Lock::Timeout=60", *args]
    deadline = time.monotonic() + APT_LOCK_WAIT
    while True:
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        except FileNotFoundError as e:
            raise BuildError(f"command not found: {cmd[0]} ({e})\n  what to do: install {package} yourself") from e
        if proc.returncode == 0:
            return
        locked = any(text in proc.stderr for text in APT_LOCKED)
        if locked and time.monotonic() < deadline:
            log(f"apt is busy ({proc.stderr.strip().splitlines()[-1]}); waiting for it")
            time.sleep(APT_LOCK_RETRY)
            continue
        said = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "no message"
        why = f"apt stayed locked for {APT_LOCK_WAIT:.0f} s" if locked else said
        raise BuildError(f"command failed ({proc.returncode}): {' '.join(cmd)}: {why}\n"
                         f"  what to do: install it yourself (`sudo apt-get install {package}`) and rerun")


def apt_install(package: str) -> None:
    apt_get("update", "-qq", package=package)
    apt_get("install", "-y", "-qq", package, package=package)


def ensure_chromium() -> None:
    if not CHROMIUM.exists():
        log("installing Debian's chromium for the browser tests")
        apt_install("chromium")


# ---------------------------------------------------------------- browser wheels


def wheel_lock() -> dict:
    return json.loads(WHEELS_LOCK.read_text())


def fetch_locked(entry: dict) -> Path:
    """Return the cached download of one locked file, downloading it if needed; verify its sha256."""
    downloads = CACHE / "downloads"
    path = downloads / entry["file"]
    if path.is_file() and sha256_file(path) == entry["sha256"]:
        return path
    downloads.mkdir(parents=True, exist_ok=True)
    log(f"downloading {entry['file']}")
    with tempfile.TemporaryDirectory(dir=downloads) as tmp:
        # The exact file: pip considers only the release's files whose sha256 is the locked one.
        pinned = Path(tmp) / "pin.txt"
        pinned.write_text(f"{entry['name']}=={entry['version']} --hash=sha256:{entry['sha256']}\n")
        cmd = [venv_python(), "-m", "pip", "--disable-pip-version-check", "--quiet", "download", "--no-deps",
               "--require-hashes", "-d", tmp, "-r", pinned]
        if entry["file"].endswith(".tar.gz"):
            cmd += ["--no-binary", ":all:"]
        else:
            platform = entry.get("platform", "any")
            impl = "cp" if platform != "any" else "py"
            cmd += ["--only-binary", ":all:", "--platform", platform, "--implementation", impl,
                    "--python-version", wheel_lock()["python"]]
        run(cmd, hint=PIP_HINT)
        got = Path(tmp) / entry["file"]
        if not got.is_file():
            found = ", ".join(p.name for p in Path(tmp).iterdir() if p != pinned) or "nothing"
            raise BuildError(f"{entry['file']}: the registry served {found} instead")
        digest = sha256_file(got)
        if digest != entry["sha256"]:
            raise BuildError(f"{entry['file']}: sha256 mismatch (lock {entry['sha256']}, got {digest}); not used")
        got.replace(path)
    return path


def build_pure_wheel(sdist: Path, sha: str) -> Path:
    """Build a pure-Python wheel from an sdist whose C speedups are optional (markupsafe)."""
    out = CACHE / "built" / sha
    wheels = list(out.glob("*.whl")) if out.is_dir() else []
    if wheels:
        return wheels[0]
    log(f"building a pure-Python wheel of {sdist.name}")
    out.mkdir(parents=True, exist_ok=True)
    # A compiler that always fails makes setup.py take its documented plain-Python fallback.
    env = {**os.environ, "CC": "false", "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}
    run([venv_python(), "-m", "pip", "--disable-pip-version-check", "--quiet", "wheel", "--no-deps",
         "--no-build-isolation", "-w", out, sdist], env=env, stdout=subprocess.DEVNULL,
        hint=f"building {sdist.name} needs the setuptools of .venv: delete .venv and .cache/built, then rerun")
    wheel = next(out.glob("*-py3-none-any.whl"), None)
    if wheel is None:
        shutil.rmtree(out)
        raise BuildError(f"{sdist.name}: the build did not give a pure py3-none-any wheel")
    return wheel


def browser_wheels(purpose: str) -> list[Path]:
    """The wheels for Pyodide with the given purpose ('app' or 'test'), in lock order."""
    wheels = []
    for entry in wheel_lock()["packages"]:
        if entry["purpose"] != purpose:
            continue
        path = fetch_locked(entry)
        wheels.append(build_pure_wheel(path, entry["sha256"]) if entry.get("build") == "pure" else path)
    return wheels


def build_pycore_wheel(out: Path) -> Path:
    env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}
    # setuptools copies into build/lib and never deletes there: a module since moved or removed (contract.py
    # became a package) would ship in the wheel beside its successor
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    run([venv_python(), "-m", "pip", "--disable-pip-version-check", "--quiet", "wheel", "--no-deps",
         "--no-build-isolation", "-w", out, "."], env=env, stdout=subprocess.DEVNULL,
        hint="pycore's wheel did not build: the error above names the file (pyproject.toml, package data)")
    return next(out.glob("pycore-*.whl"))


def build_sandbox_zip(out: Path) -> Path:
    """The sandbox's Python (sandbox_py/) as a zip the code interpreter's worker unpacks into site-packages.

    A plain zip of the package, the same bytes for the same sources (fixed dates, sorted names): the page sends it
    in each sandbox's boot message, as it sends Pyodide's files (the sandbox fetches nothing of its own)."""
    package = ROOT / "sandbox_py"
    names = sorted(p for p in package.rglob("*") if p.is_file() and p.suffix in (".py", ".typed"))
    target = out / "sandbox_py.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in names:
            info = zipfile.ZipInfo(path.relative_to(ROOT).as_posix(), date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())
    return target


# ---------------------------------------------------------------- dist/


def pyodide_version() -> str:
    return json.loads((NODE_MODULES / "pyodide" / "package.json").read_text())["version"]


def hashed_copy(src: Path, dest_root: Path, rel_dir: str) -> str:
    """Copy a file into ``rel_dir/<hash>/name`` and return that relative URL."""
    digest = sha256_file(src)[:16]
    dest = dest_root / rel_dir / digest / src.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)
    return f"{rel_dir}/{digest}/{src.name}"


def bundle_web(out: Path) -> dict[str, str]:
    """Bundle web/ with esbuild into content-hashed files; return {entry name: relative URL}."""
    meta = out / "meta.json"
    entries = [WEB / "main.js", WEB / "worker.js", WEB / "styles.css", WEB / "client" / "orizuru.js",
               WEB / "files" / "pdf_worker.js"]
    # --splitting: what the page imports only on first use (pdf.js...) becomes a chunk fetched then.
    run([NODE_MODULES / ".bin" / "esbuild", *entries, "--bundle", "--format=esm", "--target=es2022", "--splitting",
         "--minify", "--sourcemap", "--entry-names=[name]-[hash]", "--chunk-names=chunks/[name]-[hash]",
         "--outdir=" + str(out / "assets"),
         "--metafile=" + str(meta), "--log-level=warning"],
        hint="esbuild names the file and line in web/ above; fix it and rerun")
    outputs = json.loads(meta.read_text())["outputs"]
    meta.unlink()
    names = {}
    for output, info in outputs.items():
        if "entryPoint" in info:
            names[Path(info["entryPoint"]).stem] = (ROOT / output).resolve().relative_to(out.resolve()).as_posix()
    return names


def build() -> Path:
    ensure_venv()
    ensure_node_modules()
    app_wheels = browser_wheels("app")
    sandbox_wheels = browser_wheels("sandbox")
    want = fingerprint([WEB, ROOT / "pycore", ROOT / "sandbox_py", ROOT / "pyproject.toml", ROOT / "package-lock.json",
                        Path(__file__)])
    stamp = DIST / ".build-stamp"
    if stamped(stamp, want):
        return DIST
    log("assembling dist/")
    DIST.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".dist-", dir=DIST.parent))
    try:
        assemble(tmp, app_wheels, sandbox_wheels)
        (tmp / ".build-stamp").write_text(want)
        shutil.rmtree(DIST, ignore_errors=True)
        tmp.rename(DIST)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return DIST


# What ``import pycore.agent.python_tools`` needs: pydantic and its dependencies, and pycore.
# Wheels the core needs only for some methods (focus memory's templates, the MCP client's wire types): fetched and
# installed right after the core is ready, not before (web/worker.js), so the first visit is ready sooner.
LATER_WHEELS = ("jinja2-", "markupsafe-", "mcp_types-")
SANDBOX_TOOL_WHEELS = ("pydantic_core-", "pydantic-", "typing_extensions-", "annotated_types-", "typing_inspection-",
                       "pycore-")


def assemble(out: Path, app_wheels: list[Path], sandbox_wheels: list[Path]) -> None:
    version = pyodide_version()
    expected = wheel_lock()["pyodide"]
    if version != expected:
        raise BuildError(f"node_modules has pyodide {version} but the wheel lock is for {expected}")
    pyodide_dir = out / "pyodide" / version
    pyodide_dir.mkdir(parents=True)
    for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"):
        shutil.copy2(NODE_MODULES / "pyodide" / name, pyodide_dir / name)
    with tempfile.TemporaryDirectory() as tmp:
        pycore_wheel = build_pycore_wheel(Path(tmp))
        wheels = [hashed_copy(w, out, "wheels") for w in [*app_wheels, pycore_wheel]]
        sandbox_python = hashed_copy(build_sandbox_zip(Path(tmp)), out, "wheels")
    assets = bundle_web(out)
    # The code interpreter's frame script and worker (web/sandbox/): loaded by URL into a sandboxed frame, as
    # they are (the worker's source is handed over as text), so copied rather than bundled.
    sandbox: dict[str, object] = {name: hashed_copy(WEB / "sandbox" / f"{name}.js", out, "assets")
                                  for name in ("frame", "worker")}
    sandbox["wheels"] = [hashed_copy(w, out, "wheels") for w in sandbox_wheels]  # micropip, for packages
    sandbox["python"] = sandbox_python  # sandbox_py/: the notebook's cell runner and the Python tools' host
    # The user's Python tools (Tools → Python tools) run in that sandbox too, never in the core's worker: there
    # pycore.agent.python_tools makes their schemas and checks their arguments with pydantic, so the sandbox
    # gets these wheels (the same files as the core's) when the first tool set is defined.
    sandbox["tools"] = [url for url in wheels if url.split("/")[-1].startswith(SANDBOX_TOOL_WHEELS)]
    later = [url for url in wheels if url.split("/")[-1].startswith(LATER_WHEELS)]
    boot = {"pyodide": f"pyodide/{version}/", "wheels": [url for url in wheels if url not in later], "later": later,
            "worker": assets["worker"],
            "pdfWorker": assets["pdf_worker"], "sandbox": sandbox, "mcpAppFrame": MCP_APP_FRAME}
    html = (WEB / "index.html").read_text()
    html = (html.replace("{{styles}}", assets["styles"]).replace("{{main}}", assets["main"])
            .replace("{{boot}}", json.dumps(boot).replace("<", "\\u003c")))
    (out / "index.html").write_text(html)
    # The embeddable agent (web/client/orizuru.js): a stable name to import, and what it boots.
    (out / "boot.json").write_text(json.dumps(boot))
    (out / "orizuru.js").write_text(f'export * from "./{assets["orizuru"]}";\n')
    shutil.copytree(WEB / "examples", out / "examples")
    for static in ("favicon.svg", "manifest.webmanifest"):
        if (WEB / static).exists():
            shutil.copy2(WEB / static, out / static)
    # MCP App views' frame (web/mcp_app/frame.html): a page of its own, with its own policy, beside index.html.
    write_app_frame(out / MCP_APP_FRAME)
    if (WEB / "icons").is_dir():
        shutil.copytree(WEB / "icons", out / "icons")
    write_host_headers(out, html)
    write_client_metadata(out, os.environ.get("ORIZURU_SITE_URL"))
    # The page <-> core contract (pycore/contract.py) as JSON Schema, for anyone embedding the core.
    run([str(venv_python()), "-m", "pycore", "contract", "--schema", str(out / "contract.schema.json")],
        hint="the core's contract did not build: run `.venv/bin/python -m pycore contract` to see why")
    write_service_worker(out)
    write_precompressed(out)


# The app's OAuth Client ID Metadata Document, beside index.html (web/app/oauth.js looks for it there).
CLIENT_METADATA = "oauth-client.json"


def write_client_metadata(out: Path, site_url: str | None) -> None:
    """dist/oauth-client.json: the app's Client ID Metadata Document (MCP 2026-07-28 registration, tried before
    dynamic registration). Its URL is the app's client_id, so it can be written only for the https URL the site
    is served at (ORIZURU_SITE_URL, e.g. https://example.org/orizuru/); without one there is none, and
    authorization servers get a dynamic registration as before."""
    if not site_url:
        log(f"no ORIZURU_SITE_URL: no {CLIENT_METADATA} (authorization servers get a dynamic registration)")
        return
    parts = urllib.parse.urlsplit(site_url)
    if parts.scheme != "https" or not parts.netloc or parts.query or parts.fragment:
        raise BuildError(f"ORIZURU_SITE_URL {site_url!r} must be the https URL the site is served at "
                         "(a client metadata document's URL is an https URL)")
    base = site_url if site_url.endswith("/") else site_url + "/"
    document = {
        "client_id": base + CLIENT_METADATA, "client_name": "Orizuru", "client_uri": base,
        "redirect_uris": [base, base + "index.html"], "application_type": "web",
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    (out / CLIENT_METADATA).write_text(json.dumps(document, indent=2) + "\n")


# The frame MCP App views are drawn in (web/mcp_app/frame.html), at the site's top: it has a policy of its own.
MCP_APP_FRAME = "mcp-app-frame.html"

# Folders whose names change with their content (hashes, versions): any host may cache them forever.
IMMUTABLE_DIRS = ("assets", "wheels", "pyodide")


def write_app_frame(target: Path) -> None:
    """web/mcp_app/frame.html with web/mcp_app/limits.js written into its script where it says so: the frame is a
    page of its own (no bundle reaches it), and the page and the frame must bound a view's messages alike."""
    frame = (WEB / "mcp_app" / "frame.html").read_text()
    marker = "/* @inline web/mcp_app/limits.js */"
    if frame.count(marker) != 1:
        raise BuildError(f"web/mcp_app/frame.html must hold `{marker}` once, where the view's limits go")
    limits = re.sub(r"^export ", "", (WEB / "mcp_app" / "limits.js").read_text(), flags=re.M)
    target.write_text(frame.replace(marker, limits.strip()))


def meta_policy(html: str, name: str) -> str:
    match = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
    if match is None:
        raise BuildError(f"{name} has no Content-Security-Policy <meta>: it would run without one")
    return match[1]


def write_host_headers(out: Path, html: str) -> None:
    """dist/_headers, for static hosts that read one (Netlify, Cloudflare Pages): the page's own <meta>
    policy as a header, plus frame-ancestors (which a <meta> cannot carry), and the cache rules the
    relay applies. Hosts that read no such file still get the policy from the <meta>. The MCP App views'
    frame has a policy of its own (its views run inline scripts) and may be framed by the site: a host
    that matched it by /* too would send both policies, so the page's goes to the site's other paths by name."""
    page = meta_policy(html, "web/index.html")
    frame = meta_policy((out / MCP_APP_FRAME).read_text(), "web/mcp_app/frame.html")
    rules: dict[str, list[str]] = {"/*": ["X-Content-Type-Options: nosniff", "Referrer-Policy: no-referrer",
                                          "Cross-Origin-Opener-Policy: same-origin"]}
    for path in ("/", "/index.html", "/sw.js", "/orizuru.js", *(f"/{folder}/*" for folder in IMMUTABLE_DIRS)):
        rules.setdefault(path, []).append(f"Content-Security-Policy: {page}; frame-ancestors 'none'")
    rules[f"/{MCP_APP_FRAME}"] = [f"Content-Security-Policy: {frame}; frame-ancestors 'self'"]
    for path in ("/", "/index.html", "/sw.js", "/manifest.webmanifest", f"/{MCP_APP_FRAME}"):
        rules.setdefault(path, []).append("Cache-Control: no-cache")
    for folder in IMMUTABLE_DIRS:
        rules[f"/{folder}/*"].append("Cache-Control: public, max-age=31536000, immutable")
    lines = [line for path, headers in rules.items() for line in (path, *(f"  {h}" for h in headers))]
    (out / "_headers").write_text("\n".join(lines) + "\n")


def write_service_worker(out: Path) -> None:
    """dist/sw.js: web/sw.js after one line naming every file of the site to precache for offline use
    (source maps left out) and a version that changes whenever any of those files does."""
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                   if p.is_file() and p.suffix != ".map" and p.name not in ("sw.js", ".build-stamp", "_headers"))
    h = hashlib.sha256()
    for name in files:
        h.update(name.encode() + b"\0" + sha256_file(out / name).encode() + b"\0")
    precache = ["./" if name == "index.html" else name for name in files]
    build = json.dumps({"version": h.hexdigest()[:16], "precache": precache})
    (out / "sw.js").write_text(f"self.ORIZURU_BUILD = {build};\n" + (WEB / "sw.js").read_text())


def write_precompressed(out: Path, least: int = 64 * 1024) -> None:
    """NAME.gz beside each file of at least ``least`` bytes that gzip shrinks by a tenth or more (the
    wasm, the JS; not the wheels or the stdlib zip, already deflated), for the relay to send with
    Content-Encoding: gzip (server/static.py). Written after sw.js, so the precache lists no copy."""
    for path in sorted(p for p in out.rglob("*") if p.is_file() and p.suffix not in (".gz", ".map")):
        data = path.read_bytes()
        if len(data) < least:
            continue
        packed = gzip.compress(data, compresslevel=9, mtime=0)
        if len(packed) <= 0.9 * len(data):
            path.with_name(path.name + ".gz").write_bytes(packed)


# ---------------------------------------------------------------- commands


def cmd_serve(args: list[str]) -> int:
    build()
    return subprocess.call([venv_python(), "-m", "server", "--dist", DIST, *args], cwd=ROOT)


def lint() -> None:
    """The tooling that holds the line, before any suite: each must report nothing."""
    log("ruff")
    run([VENV / "bin" / "ruff", "check", "--no-cache", "."],
        hint="fix what ruff names above (`.venv/bin/ruff check --fix .` fixes the simple ones)")
    log("mypy --strict on pycore/, sandbox_py/ and server/")
    run([VENV / "bin" / "mypy", "--no-incremental", "--cache-dir", os.devnull],
        hint="fix the type errors above; the settings are [tool.mypy] in pyproject.toml")
    log("eslint on web/, tests/ and bench/ JavaScript")
    run([NODE_MODULES / ".bin" / "eslint", "--max-warnings", "0", "."],
        hint="fix what eslint names above; the settings are in eslint.config.js")
    log("tsc --strict on web/: the page, and its workers")
    for project in ("web/tsconfig.json", "web/tsconfig.worker.json"):
        run([NODE_MODULES / ".bin" / "tsc", "-p", project],
            hint=f"fix the type errors above; the settings are in {project}, the contract's types in web/types/")


def cmd_test(args: list[str]) -> int:
    ensure_chromium()
    build()
    browser_wheels("test")  # fetched now so that the Pyodide suite finds them in .cache/
    lint()
    env = {**os.environ, "ORIZURU_DIST": str(DIST)}
    # The whole suite measures coverage of pycore/, sandbox_py/ and server/ against the floor in pyproject.toml
    # ([tool.coverage.report] fail_under); a run of chosen tests (ARGS) does not.
    coverage = [] if args else ["--cov", "--cov-report=term:skip-covered"]
    return subprocess.call([venv_python(), "-m", "pytest", *coverage, *args], cwd=ROOT, env=env)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="build.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["build", "serve", "test"])
    ns, rest = parser.parse_known_args(argv)
    try:
        if ns.command == "build":
            log(f"built {build()}/")
            return 0
        return cmd_serve(rest) if ns.command == "serve" else cmd_test(rest)
    except BuildError as e:
        print(f"build.py: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
