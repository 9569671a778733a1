// The code interpreter's frame (web/sandbox/interpreter.js draws it): a sandboxed iframe, so an opaque
// origin with none of the page's storage, cookies or DOM, under a policy that lets nothing be fetched but
// the blobs made here. It starts the Python worker from the source the page sends, and passes messages
// between the page and that worker, nothing else. A classic script: the frame's origin is opaque, so a
// module script from the site would need CORS that a static host does not send. The worker is a classic
// one: Chromium does not start a module worker from a blob of an opaque origin (it fails without a message).
"use strict";

let worker = null;

addEventListener("message", (event) => {
  if (event.source !== parent) return; // only the page that made this frame talks to it
  const msg = event.data;
  if (msg?.type === "start" && !worker) {
    worker = new Worker(URL.createObjectURL(new Blob([msg.source], { type: "text/javascript" })));
    worker.onmessage = ({ data }) => parent.postMessage(data, "*");
    worker.onerror = (e) => parent.postMessage({ type: "crashed",
      message: e.message ? `${e.message} (${e.filename}:${e.lineno})` : "the worker stopped" }, "*");
    const buffers = Object.values(msg.files).flat().filter((v) => v instanceof ArrayBuffer);
    worker.postMessage({ type: "boot", files: msg.files, packages: msg.packages }, buffers);
  } else if (worker && msg?.type !== "start") {
    worker.postMessage(msg, (msg.files ?? []).map((f) => f.data).filter((d) => d instanceof ArrayBuffer));
  }
});

// What the policy refused (a fetch to a foreign host, a script from one): the page counts them.
document.addEventListener("securitypolicyviolation", (e) =>
  parent.postMessage({ type: "refused", directive: e.effectiveDirective, blocked: String(e.blockedURI) }, "*"));

parent.postMessage({ type: "frame" }, "*");
