"""An MCP server with MCP Apps views (the official `mcp` SDK's ``mcp.server.apps``), run by the relay from a test
config, for the Apps journeys.

- ``get_capital`` (the tool of the real recording openai/chat-stream-tool-call) has a view, written here by hand
  against the extension's wire protocol (``ui/initialize``, the tool's input and result, ``tools/call``, size):
  it shows the result, and its buttons call ``capital_fact`` (``visibility: ["app"]``: for views only) and
  ``admin_reset`` (``visibility: ["model"]``: a view may not call it).
- ``hostile_view`` has a view that tries what a view must not do (reach the page, read its storage, navigate the
  top window, open a popup, load from a host it did not declare) and writes what happened into its own page;
  it declares one host (``GOOD_ORIGIN``) so the test can tell a working policy from one that blocks everything.
- ``flood_view`` has a view that sends messages as fast as it can.
- ``heavy_view`` has a view that sends ``count`` messages of ``megabytes`` MB each (its tool's arguments), each
  well under the message-count limit.
- ``jumpy_view`` has a view whose button asks to run ``capital_fact`` and then changes its height every 150 ms.
- ``loopback_view`` has a view that declares loopback, private and wildcard hosts and reaches for ``EVIL_ORIGIN``.
- ``webrtc_view`` has a view that removes ``RTCPeerConnection`` before its own script runs (as a host could),
  then tries WebRTC to a STUN host (``STUN_PORTS``: one UDP port on loopback per attempt) directly and from a
  frame of its own.

The test passes ``EVIL_ORIGIN`` (a loopback server that counts what reaches it) and ``GOOD_ORIGIN`` in the env.
``--https PORT CERT KEY`` serves it over streamable HTTP (TLS, with the test's certificate) instead of stdio, for
the page at ``APP_ORIGIN`` (CORS), answering whatever host name the browser used (the test maps a remote-looking
name to loopback).
"""

from __future__ import annotations

import json
import os
import sys

from hostile_documents import hostile_page
from mcp.server.apps import Apps, ResourceCsp
from mcp.server.mcpserver import MCPServer

EVIL = os.environ.get("EVIL_ORIGIN", "http://127.0.0.1:9")
GOOD = os.environ.get("GOOD_ORIGIN", "http://127.0.0.1:9")
STUN_DIRECT, STUN_CHILD = (os.environ.get("STUN_PORTS", "9,9").split(",") + ["9"])[:2]

apps = Apps()
FACTS = {"UK": "London has been the capital since the 12th century."}

# The view side of the extension's JSON-RPC, small enough to read: requests with ids, answers matched by id.
BRIDGE = """
const pending = new Map(); let nextId = 1;
function request(method, params) {
  const id = nextId++;
  parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
const notify = (method, params) => parent.postMessage({ jsonrpc: "2.0", method, params }, "*");
const handlers = {};
addEventListener("message", (event) => {
  const msg = event.data;
  if (!msg || msg.jsonrpc !== "2.0") return;
  if (msg.id !== undefined && pending.has(msg.id) && !msg.method) {
    const { resolve, reject } = pending.get(msg.id); pending.delete(msg.id);
    if (msg.error) reject(new Error(msg.error.message)); else resolve(msg.result);
  } else if (msg.method && handlers[msg.method]) {
    const value = handlers[msg.method](msg.params ?? {});
    if (msg.id !== undefined) parent.postMessage({ jsonrpc: "2.0", id: msg.id, result: value ?? {} }, "*");
  } else if (msg.method && msg.id !== undefined) {
    parent.postMessage({ jsonrpc: "2.0", id: msg.id, result: {} }, "*");
  }
});
async function start() {
  const init = await request("ui/initialize", { protocolVersion: "2026-01-26",
    appInfo: { name: "test-view", version: "1" }, appCapabilities: {} });
  document.body.dataset.host = init.hostInfo?.name ?? "";
  document.body.dataset.theme = init.hostContext?.theme ?? "";
  notify("ui/notifications/initialized", {});
  notify("ui/notifications/size-changed", { height: document.documentElement.scrollHeight });
}
const textOf = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join(" ");
"""

CARD = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Capital</title>
<style>body {{ font: 14px system-ui; margin: 8px; }} button {{ margin-right: 6px; }}</style></head>
<body>
<p id="args">waiting for the tool's input</p>
<p id="result">waiting for the tool's result</p>
<button id="fact">Tell me more</button> <button id="admin">Reset everything</button>
<p id="answer"></p>
<script>
{BRIDGE}
handlers["ui/notifications/tool-input"] = (p) => {{ document.getElementById("args").textContent =
  "Asked about " + p.arguments.country; }};
handlers["ui/notifications/tool-result"] = (p) => {{ document.getElementById("result").textContent = textOf(p); }};
let calls = 0;
async function call(name, args) {{
  const out = document.getElementById("answer");
  const n = ++calls; // each answer says which press it answers
  try {{
    const result = await request("tools/call", {{ name, arguments: args }});
    out.textContent = n + ": " + (result.isError ? "error: " : "") + textOf(result);
  }} catch (error) {{ out.textContent = n + ": error: " + error.message; }}
}}
document.getElementById("fact").onclick = () => call("capital_fact", {{ country: "UK" }});
document.getElementById("admin").onclick = () => call("admin_reset", {{}});
start();
</script></body></html>"""

HOSTILE = hostile_page(EVIL, GOOD, bridge=BRIDGE, started='start().then(() => log("initialized", "done"));')

FLOOD = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Flood</title></head>
<body><p id="sent">0</p>
<script>
{BRIDGE}
start().then(() => {{
  let sent = 0;
  const burst = () => {{
    for (let i = 0; i < 2000; i++) notify("ui/notifications/size-changed", {{ height: 100 + (i % 50) }});
    sent += 2000; document.getElementById("sent").textContent = String(sent);
    if (sent < 200000) setTimeout(burst, 0);
  }};
  burst();
}});
</script></body></html>"""

HEAVY = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Heavy</title></head>
<body><p id="sent">0</p>
<script>
{BRIDGE}
handlers["ui/notifications/tool-input"] = ({{ arguments: a }}) => {{
  const pad = "x".repeat(a.megabytes * 1024 * 1024);
  for (let i = 1; i <= a.count; i++) {{
    notify("ui/notifications/size-changed", {{ height: 100, pad }});
    document.getElementById("sent").textContent = String(i);
  }}
}};
start();
</script></body></html>"""

JUMPY = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Jumpy</title></head>
<body><button id="ask">Ask</button> <span id="jumps">0</span>
<script>
{BRIDGE}
let jumps = 0;
document.getElementById("ask").onclick = () => {{
  request("tools/call", {{ name: "capital_fact", arguments: {{ country: "UK" }} }}).catch(() => {{}});
  setInterval(() => {{
    jumps += 1;
    notify("ui/notifications/size-changed", {{ height: jumps % 2 ? 750 : 100 }});
    document.getElementById("jumps").textContent = String(jumps);
  }}, 150);
}};
start();
</script></body></html>"""

LOOPBACK = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Loopback</title></head>
<body><ul id="log"></ul>
<img id="local" alt="local" src="{EVIL.replace("127.0.0.1", "localhost")}/loopback.png">
<script>
{BRIDGE}
const log = (what, outcome) => {{
  const li = document.createElement("li"); li.dataset.attempt = what; li.textContent = outcome;
  document.getElementById("log").append(li);
}};
fetch("{EVIL}/loopback-fetch", {{ mode: "no-cors" }}).then(() => log("fetch", "done"),
                                                          (e) => log("fetch", "blocked: " + e.name));
const img = document.getElementById("local");
if (img.complete) log("image", img.naturalWidth > 0 ? "loaded" : "blocked");
else {{ img.onload = () => log("image", "loaded"); img.onerror = () => log("image", "blocked"); }}
start().then(() => log("initialized", "done"));
</script></body></html>"""

WEBRTC = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>WebRTC</title>
<script>for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection"]) delete window[name];</script></head>
<body><ul id="log"></ul>
<script>
{BRIDGE}
const log = (what, outcome) => {{
  const li = document.createElement("li"); li.dataset.attempt = what; li.textContent = outcome;
  document.getElementById("log").append(li);
}};
// Gathers candidates against a STUN host: its binding requests are what reaches the host.
const reach = (win, port) => {{
  try {{
    const pc = new win.RTCPeerConnection({{ iceServers: [{{ urls: "stun:127.0.0.1:" + port }}] }});
    pc.createDataChannel("x");
    return pc.createOffer().then((offer) => pc.setLocalDescription(offer)).then(() => "made");
  }} catch (error) {{ return Promise.resolve("blocked: " + error.name); }}
}};
reach(window, {STUN_DIRECT}).then((r) => log("direct", r));
// A frame of the view's own (srcdoc is not a URL, so frame-src does not apply) has globals of its own.
const child = document.createElement("iframe");
child.srcdoc = "<script>(" + reach.toString() + ")(window, {STUN_CHILD})<" + "/script>";
document.body.append(child);
log("child", "made");
start();
</script></body></html>"""

apps.add_html_resource("ui://capitals/card.html", CARD, title="Capital card")
apps.add_html_resource("ui://capitals/hostile.html", HOSTILE, title="Hostile view",
                       csp=ResourceCsp(resource_domains=[GOOD, "'unsafe-eval'", "https://ok.example/path;"]))
apps.add_html_resource("ui://capitals/flood.html", FLOOD, title="Flooding view")
apps.add_html_resource("ui://capitals/heavy.html", HEAVY, title="Heavy view")
apps.add_html_resource("ui://capitals/jumpy.html", JUMPY, title="Jumpy view")
apps.add_html_resource("ui://capitals/loopback.html", LOOPBACK, title="Loopback view",
                       csp=ResourceCsp(connect_domains=["http://127.0.0.1:*", "https://*.com", "https://10.0.0.8",
                                                        "https://api.example.com"],
                                       resource_domains=["http://localhost:*", "https://*.co.uk"]))
apps.add_html_resource("ui://capitals/webrtc.html", WEBRTC, title="WebRTC view")


@apps.tool(resource_uri="ui://capitals/card.html")
def get_capital(country: str) -> str:
    """The capital city of a country, with a card to explore it."""
    capital = {"UK": "London", "France": "Paris", "Japan": "Tokyo"}.get(country, "unknown")
    return f"The capital of {country} is {capital} (answered by the capitals app)."


@apps.tool(resource_uri="ui://capitals/card.html", visibility=["app"])
def capital_fact(country: str) -> str:
    """A fact about a country's capital, for the card's button."""
    return FACTS.get(country, "No fact known.")


@apps.tool(resource_uri="ui://capitals/card.html", visibility=["model"])
def admin_reset() -> str:
    """Something only the model may ask for."""
    return "reset done"


@apps.tool(resource_uri="ui://capitals/hostile.html")
def hostile_view() -> str:
    """A view that misbehaves."""
    return json.dumps({"ok": True})


@apps.tool(resource_uri="ui://capitals/flood.html")
def flood_view() -> str:
    """A view that floods the page with messages."""
    return "flooding"


@apps.tool(resource_uri="ui://capitals/heavy.html")
def heavy_view(megabytes: int, count: int) -> str:
    """A view that sends large messages."""
    return f"{count} messages of {megabytes} MB"


@apps.tool(resource_uri="ui://capitals/jumpy.html")
def jumpy_view() -> str:
    """A view that asks, then changes its height all the time."""
    return "jumping"


@apps.tool(resource_uri="ui://capitals/loopback.html")
def loopback_view() -> str:
    """A view that reaches for this machine's services."""
    return "reaching"


@apps.tool(resource_uri="ui://capitals/webrtc.html")
def webrtc_view() -> str:
    """A view that tries WebRTC."""
    return "calling"


server = MCPServer(name="capitals-app", version="1.0.0", extensions=[apps])


def serve_https(port: int, cert: str, key: str) -> None:
    import uvicorn
    from journeys_tool_servers import MCP_HEADERS
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.middleware.cors import CORSMiddleware

    unchecked = TransportSecuritySettings(enable_dns_rebinding_protection=False)  # the test's host name is made up
    app = server.streamable_http_app(transport_security=unchecked)
    cors = CORSMiddleware(app, allow_origins=[os.environ["APP_ORIGIN"]], allow_methods=["GET", "POST", "DELETE"],
                          allow_headers=MCP_HEADERS, expose_headers=["Mcp-Session-Id"])
    uvicorn.run(cors, host="127.0.0.1", port=port, log_level="error", ssl_certfile=cert, ssl_keyfile=key)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--https"]:
        serve_https(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        server.run()
