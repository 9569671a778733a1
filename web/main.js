// The page's entry point. It only renders and routes messages: Python runs in the worker
// (worker.js), reached through the protocol in protocol.js, so the UI thread never waits on it.

import { STAGES, STAGE_LABELS, WorkerClient } from "./protocol.js";

const boot = JSON.parse(document.getElementById("boot").textContent);
const root = document.documentElement;
const statusText = document.getElementById("core-status-text");
const progress = document.getElementById("core-progress");
const transcript = document.getElementById("transcript");
const composer = document.getElementById("composer");
const messageBox = document.getElementById("message");

const queue = []; // messages sent before the core was ready, in order
let coreReady = false;

const worker = new Worker(new URL(boot.worker, document.baseURI), { type: "module", name: "pycore" });
const core = new WorkerClient(worker, {
  onStage: (stage, detail) => showStage(stage, detail),
  onLog: (level, message) => (console[level] ?? console.log)(`[core] ${message}`),
});

core
  .boot({ base: document.baseURI, pyodide: boot.pyodide, wheels: boot.wheels })
  .then((info) => {
    coreReady = true;
    root.dataset.core = "ready";
    performance.mark("core-ready"); // read by bench/boot
    statusText.textContent = `Ready · Python ${info.python}`;
    for (const pending of queue.splice(0)) deliver(pending);
  })
  .catch((err) => {
    root.dataset.core = "error";
    const stage = STAGE_LABELS[err.stage] ?? err.stage ?? "start-up";
    statusText.textContent = `Python failed to start at “${stage}”: ${err.message}`;
    for (const pending of queue.splice(0)) fail(pending, "the core failed to start, so this was not sent");
  });

function showStage(stage, detail) {
  progress.value = STAGES.indexOf(stage) + 1;
  if (stage === "ready") return;
  const counted = detail?.count ? ` (${detail.done ?? 0}/${detail.count})` : "";
  statusText.textContent = `${STAGE_LABELS[stage] ?? stage}${counted}…`;
}

composer.addEventListener("submit", (ev) => {
  ev.preventDefault();
  send();
});

messageBox.addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    send();
  }
});

function send() {
  const text = messageBox.value.trim();
  if (!text) return;
  messageBox.value = "";
  const item = append("user", text);
  const pending = { text, item };
  if (coreReady) deliver(pending);
  else {
    item.dataset.state = "waiting";
    queue.push(pending);
  }
}

function deliver({ text, item }) {
  delete item.dataset.state;
  const reply = append("assistant", "");
  core
    .call("core.echo", { text }, (event) => {
      if (event.type === "text_delta") reply.textContent += event.text;
    })
    .then(() => (reply.dataset.state = "done"))
    .catch((err) => fail({ item: reply }, err.message));
}

function fail({ item }, message) {
  item.classList.add("error");
  item.dataset.state = "error";
  item.textContent = message;
}

function append(role, text) {
  const li = document.createElement("li");
  li.className = role;
  li.textContent = text; // plain text only; markdown rendering arrives with DOMPurify
  transcript.append(li);
  li.scrollIntoView({ block: "end" });
  return li;
}

performance.mark("ui-usable"); // read by bench/boot: handlers are attached, the message box works
import("./store/pwa.js").then(({ registerServiceWorker }) => registerServiceWorker()); // installable, boots offline
