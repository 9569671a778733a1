"""The CORS doctor: when the page cannot talk to an MCP server (or Ollama), find out why and say how to fix it.

Two ways to look, because a browser hides exactly what we want to see:

- **direct** (CPython: the ``python -m pycore mcp URL doctor`` CLI, tests, a relay): send the preflight
  ourselves (``OPTIONS`` with ``Origin`` and ``Access-Control-Request-*``) and an ``initialize`` with
  ``Origin``, and read every header: which ``Access-Control-Allow-*`` / ``-Expose-Headers`` are missing,
  whether the 403 is Ollama's origin check, whether the server is reachable at all.
- **browser** (Pyodide, over ``fetch``): a preflight cannot be read and every CORS failure is the same
  ``TypeError``, so we infer from *which* requests fail: a ``no-cors`` request tells "unreachable" from
  "reachable but hidden"; a simple GET fails only without ``Access-Control-Allow-Origin``; then POSTs that
  add one request header at a time (``Content-Type: application/json``, ``MCP-Protocol-Version``,
  ``Mcp-Session-Id``, ``Authorization``, the user's own headers) pin the preflight that fails to the header
  it does not allow; a successful ``initialize`` whose session id we cannot see, followed by a 400
  "missing session" on the next request, means ``Mcp-Session-Id`` is not exposed. The probes are plain
  data (:func:`browser_probes`) and the conclusions a pure function (:func:`interpret_browser`) of their
  outcomes, so the same logic runs on outcomes a real browser produced.

Every finding has a ``code``, a ``message`` (what is wrong) and a ``fix``; :data:`relay_hint` is the
fallback route when the server cannot be changed. Like every request of the core, the probes never
follow a redirect: a server that redirects gets the ``redirect`` finding (the client refuses it too).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pycore.exceptions import APIConnectionError
from pycore.http import Request, Transport

NEEDED_HEADERS = ("content-type", "mcp-protocol-version", "mcp-session-id", "last-event-id")
SPELLING = {"content-type": "Content-Type", "mcp-protocol-version": "MCP-Protocol-Version",
            "mcp-session-id": "Mcp-Session-Id", "last-event-id": "Last-Event-ID", "authorization": "Authorization"}
OLLAMA_PORT = 11434
PROBE_TIMEOUT = 10.0
_PING = json.dumps({"jsonrpc": "2.0", "id": "orizuru-doctor", "method": "ping"}).encode()
_INIT = json.dumps({"jsonrpc": "2.0", "id": "orizuru-doctor", "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "orizuru-doctor", "version": "0"}}})


@dataclass
class Finding:
    code: str
    message: str
    fix: str


@dataclass
class Diagnosis:
    url: str
    origin: str
    mode: str  # "direct" or "browser"
    findings: list[Finding] = field(default_factory=list)
    relay_hint: str = ""

    def add(self, code: str, message: str, fix: str) -> None:
        if all(f.code != code or f.message != message for f in self.findings):
            self.findings.append(Finding(code, message, fix))

    def codes(self) -> list[str]:
        return [f.code for f in self.findings]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def relay_hint(url: str) -> str:
    """How to reach ``url`` through the local relay, which the browser may call (loopback, our CORS)."""
    name = (urlsplit(url).hostname or "server").split(".")[0] or "server"
    return (f"If you cannot change the server, route it through the local relay: run `python3 build.py serve "
            f"--allow-remote {name}={url}` and connect to http://127.0.0.1:PORT/remote/{name} instead (for a local "
            "stdio server, list it in a config file and run `python3 build.py serve --config servers.json`).")


def _fix_cors(origin: str, what: str) -> str:
    return (f"On the MCP server, answer CORS for the origin {origin}: {what}. With the official Python SDK, wrap "
            "the app in Starlette's CORSMiddleware(allow_origins=[...], allow_methods=['GET', 'POST', 'DELETE'], "
            "allow_headers=['Content-Type', 'Authorization', 'Mcp-Session-Id', 'MCP-Protocol-Version', "
            "'Last-Event-ID'], expose_headers=['Mcp-Session-Id', 'WWW-Authenticate']).")


def _ollama_fix(origin: str) -> str:
    return (f"Start Ollama with OLLAMA_ORIGINS={origin} (e.g. `OLLAMA_ORIGINS={origin} ollama serve`, or "
            f"`launchctl setenv OLLAMA_ORIGINS {origin}` / `systemctl edit ollama` with "
            f"Environment=\"OLLAMA_ORIGINS={origin}\"), then restart it.")


def looks_like_ollama(url: str) -> bool:
    parts = urlsplit(url)
    return parts.port == OLLAMA_PORT or "ollama" in (parts.hostname or "")


# -- direct: read the headers ourselves -----------------------------------------------------------------


async def diagnose_direct(http: Transport, url: str, origin: str, headers: Mapping[str, str] | None = None
                          ) -> Diagnosis:
    diagnosis = Diagnosis(url, origin, "direct", relay_hint=relay_hint(url))
    wanted = [*NEEDED_HEADERS, *(h.lower() for h in (headers or {}))]
    try:
        preflight = await _send(http, "OPTIONS", url, {
            "origin": origin, "access-control-request-method": "POST",
            "access-control-request-headers": ", ".join(sorted(set(wanted)))})
    except APIConnectionError as e:
        diagnosis.add("unreachable", f"{url} cannot be reached at all ({e}).",
                      "Check the URL and that the server is running; a local server must listen on this machine.")
        return diagnosis
    if _redirected(diagnosis, preflight):
        return diagnosis
    if preflight.status == 403 and await _is_ollama(http, url):
        diagnosis.add("ollama_origins", f"Ollama at {url} refuses the origin {origin} (403).", _ollama_fix(origin))
        return diagnosis
    _check_preflight(diagnosis, preflight, origin, wanted)
    answer = await _send(http, "POST", url, {"origin": origin, "content-type": "application/json",
                                             "accept": "application/json, text/event-stream", **(headers or {})},
                         _INIT.encode())
    _check_answer(diagnosis, answer, origin)
    return diagnosis


@dataclass
class _Seen:
    status: int
    headers: dict[str, str]
    body: str


async def _send(http: Transport, method: str, url: str, headers: dict[str, str], body: bytes | None = None) -> _Seen:
    response = await http.send(Request(method, url, headers, body, timeout=PROBE_TIMEOUT))
    try:
        text = ""
        async for chunk in response.aiter_bytes():
            text += chunk.decode("utf-8", "replace")
            if len(text) > 4096 or "\n\n" in text:  # enough to judge; an SSE answer may stay open
                break
    except APIConnectionError:
        pass
    finally:
        await response.aclose()
    return _Seen(response.status, response.headers, text[:4096])


async def _is_ollama(http: Transport, url: str) -> bool:
    parts = urlsplit(url)
    try:
        root = await _send(http, "GET", urlunsplit((parts.scheme, parts.netloc, "/", "", "")), {})
    except APIConnectionError:
        return False
    return "ollama is running" in root.body.lower()


def _split(value: str | None) -> set[str]:
    return {item.strip().lower() for item in (value or "").split(",") if item.strip()}


def _check_preflight(diagnosis: Diagnosis, seen: _Seen, origin: str, wanted: list[str]) -> None:
    before = len(diagnosis.findings)
    allow_origin = seen.headers.get("access-control-allow-origin")
    if allow_origin is None:
        diagnosis.add("no_allow_origin", f"{diagnosis.url} sends no Access-Control-Allow-Origin, so the browser "
                      f"hides every answer from {origin}.", _fix_cors(origin, f"send Access-Control-Allow-Origin: "
                                                                      f"{origin}"))
    elif allow_origin not in ("*", origin):
        diagnosis.add("wrong_allow_origin", f"{diagnosis.url} allows the origin {allow_origin!r}, not {origin}.",
                      _fix_cors(origin, f"send Access-Control-Allow-Origin: {origin}"))
    else:
        _check_allowed(diagnosis, seen, origin, wanted, allow_origin)
    if seen.status >= 400 and len(diagnosis.findings) == before or seen.status >= 400 and allow_origin is None:
        diagnosis.findings.insert(before, Finding(
            "preflight_refused", f"{diagnosis.url} answers the browser's CORS preflight (OPTIONS) with HTTP "
            f"{seen.status}, so the browser never sends the real request.",
            _fix_cors(origin, "answer OPTIONS with 204 and the Access-Control-Allow-* headers")))


def _check_allowed(diagnosis: Diagnosis, seen: _Seen, origin: str, wanted: list[str], allow_origin: str) -> None:
    allowed = _split(seen.headers.get("access-control-allow-headers"))
    for header in dict.fromkeys(wanted):
        covered = header in allowed or ("*" in allowed and header != "authorization" and allow_origin == "*")
        if not covered:
            name = SPELLING.get(header, header)
            diagnosis.add("header_not_allowed", f"{diagnosis.url} does not allow the request header {name} "
                          "(Access-Control-Allow-Headers), so the browser refuses to send requests carrying it.",
                          _fix_cors(origin, f"add {name} to Access-Control-Allow-Headers"))
    methods = _split(seen.headers.get("access-control-allow-methods"))
    if methods and "*" not in methods and "post" not in methods:
        diagnosis.add("method_not_allowed", f"{diagnosis.url} does not allow POST (Access-Control-Allow-Methods).",
                      _fix_cors(origin, "add POST, GET and DELETE to Access-Control-Allow-Methods"))


def _redirected(diagnosis: Diagnosis, seen: _Seen | Outcome) -> bool:
    if not (seen.status == 0 or 300 <= seen.status < 400):
        return False
    how = f"HTTP {seen.status}" if seen.status else "the browser hides where to"
    where = f" to {seen.headers['location']}" if seen.headers.get("location") else ""
    diagnosis.add("redirect", f"{diagnosis.url} redirects requests ({how}{where}); the app never follows a "
                  "redirect, so your headers and tokens stay with the address you gave.",
                  "Connect to the server's final address instead (often the same URL with or without a trailing "
                  "slash).")
    return True


def _check_answer(diagnosis: Diagnosis, seen: _Seen, origin: str) -> None:
    if _redirected(diagnosis, seen):
        return
    allow_origin = seen.headers.get("access-control-allow-origin")
    if seen.status == 403:
        diagnosis.add("origin_rejected", f"{diagnosis.url} rejects requests from the origin {origin} (403).",
                      f"Add {origin} to the server's allowed origins (MCP servers must check Origin; this one does "
                      "not list the app).")
        return
    if allow_origin is None:
        if "no_allow_origin" not in diagnosis.codes():
            fix = _fix_cors(origin, f"send Access-Control-Allow-Origin: {origin} on every response, not only OPTIONS")
            diagnosis.add("no_allow_origin", f"{diagnosis.url} answers POST without Access-Control-Allow-Origin, "
                          "so the browser hides the answer.", fix)
        return  # nothing else is visible to the page until that is fixed
    if allow_origin not in ("*", origin):
        return  # reported by the preflight check; the page sees nothing else
    exposed = _split(seen.headers.get("access-control-expose-headers"))
    if "mcp-session-id" in seen.headers and "mcp-session-id" not in exposed and "*" not in exposed:
        diagnosis.add("session_id_not_exposed", f"{diagnosis.url} sets Mcp-Session-Id but does not expose it, so "
                      "the browser cannot read it and every later request fails.",
                      _fix_cors(origin, "add Mcp-Session-Id to Access-Control-Expose-Headers"))
    if seen.status == 401 and "www-authenticate" in seen.headers and "www-authenticate" not in exposed:
        diagnosis.add("www_authenticate_not_exposed", f"{diagnosis.url} wants authorization but hides its "
                      "WWW-Authenticate challenge from the browser; sign-in falls back to the well-known metadata "
                      "URLs and cannot see the requested scope.",
                      _fix_cors(origin, "add WWW-Authenticate to Access-Control-Expose-Headers"))


# -- browser: infer from which requests fail ------------------------------------------------------------


@dataclass
class Probe:
    name: str
    method: str
    headers: dict[str, str]
    body: str | None = None


@dataclass
class Outcome:
    """What one probe showed the browser: ``ok`` False is the opaque ``TypeError``."""

    ok: bool
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""


def browser_probes(headers: Mapping[str, str] | None = None) -> list[Probe]:
    """The requests to try, in order. Header values are dummies: only the names matter to a preflight."""
    json_post = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    ping = _PING.decode()
    probes = [
        Probe("simple", "GET", {"accept": "text/event-stream"}),
        Probe("json", "POST", json_post, ping),
        Probe("mcp-protocol-version", "POST", {**json_post, "mcp-protocol-version": "2025-11-25"}, ping),
        Probe("mcp-session-id", "POST", {**json_post, "mcp-session-id": "orizuru-doctor-probe"}, ping),
        Probe("authorization", "POST", {**json_post, "authorization": "Bearer orizuru-doctor-probe"}, ping),
    ]
    for name in headers or {}:
        if name.lower() not in {p.name for p in probes} and name.lower() not in json_post:
            probes.append(Probe(name.lower(), "POST", {**json_post, name.lower(): "orizuru-doctor-probe"}, ping))
    probes.append(Probe("initialize", "POST", json_post, _INIT))
    probes.append(Probe("after-initialize", "POST", {**json_post, "mcp-protocol-version": "2025-11-25"}, ping))
    return probes


def interpret_browser(url: str, origin: str, outcomes: Mapping[str, Outcome], reachable: bool | None) -> Diagnosis:
    diagnosis = Diagnosis(url, origin, "browser", relay_hint=relay_hint(url))
    if reachable is False:
        diagnosis.add("unreachable", f"{url} cannot be reached at all (not even an opaque no-cors request got an "
                      "answer).", "Check the URL and that the server is running and reachable from this computer; "
                      "Chrome may also be blocking this page from reaching local addresses (allow it when asked).")
        return diagnosis
    simple, json_post = outcomes.get("simple"), outcomes.get("json")
    if simple is not None and simple.ok and _redirected(diagnosis, simple):
        return diagnosis  # its preflighted probes fail for that reason alone: a preflight must not redirect
    if simple is not None and not simple.ok and (json_post is None or not json_post.ok):
        if looks_like_ollama(url):
            diagnosis.add("ollama_origins", f"Ollama at {url} does not allow the origin {origin}.",
                          _ollama_fix(origin))
            return diagnosis
        where = "answers" if reachable else "may answer"
        diagnosis.add("no_allow_origin", f"{url} {where}, but without Access-Control-Allow-Origin for {origin}, so "
                      "the browser hides every answer.", _fix_cors(origin, f"send Access-Control-Allow-Origin: "
                                                                   f"{origin}"))
        return diagnosis
    if json_post is not None and not json_post.ok:
        diagnosis.add("preflight_refused", f"{url} answers simple requests but refuses the CORS preflight of a JSON "
                      "POST (OPTIONS fails, or Content-Type is not allowed).",
                      _fix_cors(origin, "answer OPTIONS with 204 and allow Content-Type"))
        return diagnosis
    for name, outcome in outcomes.items():
        if name in ("simple", "json", "initialize", "after-initialize") or outcome.ok:
            continue
        spelled = SPELLING.get(name, name)
        diagnosis.add("header_not_allowed", f"{url} does not allow the request header {spelled} "
                      "(Access-Control-Allow-Headers), so the browser refuses requests carrying it.",
                      _fix_cors(origin, f"add {spelled} to Access-Control-Allow-Headers"))
    _interpret_session(diagnosis, outcomes, origin)
    return diagnosis


def _interpret_session(diagnosis: Diagnosis, outcomes: Mapping[str, Outcome], origin: str) -> None:
    init, after = outcomes.get("initialize"), outcomes.get("after-initialize")
    if init is None or not init.ok:
        return
    if init.status == 401 and "www-authenticate" not in init.headers:
        diagnosis.add("www_authenticate_not_exposed", f"{diagnosis.url} wants authorization (401); if sign-in "
                      "cannot find its metadata, the server may hide WWW-Authenticate from the browser.",
                      _fix_cors(origin, "add WWW-Authenticate to Access-Control-Expose-Headers"))
    if init.status == 200 and "mcp-session-id" not in init.headers and after is not None and after.ok \
            and after.status == 400 and "session" in after.body.lower():
        diagnosis.add("session_id_not_exposed", f"{diagnosis.url} started a session but the browser cannot read "
                      "its Mcp-Session-Id, and the server then asks for it.",
                      _fix_cors(origin, "add Mcp-Session-Id to Access-Control-Expose-Headers"))


async def diagnose_browser(http: Transport, url: str, origin: str, headers: Mapping[str, str] | None = None,
                           reachable: bool | None = None) -> Diagnosis:
    """Run :func:`browser_probes` through ``http`` (the browser's fetch) and interpret what failed. When the
    ``no-cors`` request already got no answer (``reachable`` False) no probe is sent: each would only fail the
    same way, or wait out its timeout on a server that accepts connections and never answers."""
    outcomes: dict[str, Outcome] = {}
    if reachable is False:
        return interpret_browser(url, origin, outcomes, reachable)
    for probe in browser_probes(headers):
        try:
            seen = await _send(http, probe.method, url, probe.headers, probe.body.encode() if probe.body else None)
        except APIConnectionError:
            outcomes[probe.name] = Outcome(ok=False)
            continue
        outcomes[probe.name] = Outcome(ok=True, status=seen.status, headers=seen.headers, body=seen.body)
        if probe.name == "simple" and reachable is None:
            reachable = True
    return interpret_browser(url, origin, outcomes, reachable)


__all__ = ["Diagnosis", "Finding", "Outcome", "Probe", "browser_probes", "diagnose_browser", "diagnose_direct",
           "interpret_browser", "looks_like_ollama", "relay_hint"]
