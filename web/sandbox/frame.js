// The code interpreter's frame (web/sandbox/interpreter.js draws it): a sandboxed iframe, so an opaque
// origin with none of the page's storage, cookies or DOM, under a policy that lets nothing be fetched but
// the blobs made here. It starts the Python worker from the source the page sends and hands it the page's
// MessageChannel port; from then on the page and the worker talk over that channel alone. The frame passes
// nothing on: a message the worker's code posts to it is dropped, so code cannot answer in the worker's
// script's place. A classic script: the frame's origin is opaque, so a module script from the site would need
// CORS that a static host does not send. The worker is a classic one: Chromium does not start a module worker
// from a blob of an opaque origin (it fails without a message).
"use strict";

let started = false;

addEventListener("message", (event) => {
  if (event.source !== parent || started) return; // only the page that made this frame, and only once
  const msg = /** @type {Partial<import("./messages.js").Start> | null} */ (event.data);
  if (msg?.type !== "start" || !(msg.port instanceof MessagePort) || !msg.files || typeof msg.source !== "string") {
    return;
  }
  started = true;
  const worker = new Worker(URL.createObjectURL(new Blob([msg.source], { type: "text/javascript" })));
  worker.onerror = (e) => parent.postMessage({ type: "crashed",
    message: e.message ? `${e.message} (${e.filename}:${e.lineno})` : "the worker stopped" }, "*");
  const buffers = Object.values(msg.files).flat().filter((v) => v instanceof ArrayBuffer);
  worker.postMessage({ type: "boot", files: msg.files, packages: msg.packages, port: msg.port }, [msg.port, ...buffers]);
});

// What the policy refused (a fetch to a foreign host, a script from one): the page counts them.
document.addEventListener("securitypolicyviolation", (e) =>
  parent.postMessage({ type: "refused", directive: e.effectiveDirective, blocked: String(e.blockedURI) }, "*"));

parent.postMessage({ type: "frame" }, "*");
