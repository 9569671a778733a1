// bench/stream-e2e page (run.py drives it through page.evaluate). One vendor stream, two pipelines,
// the same renderer:
//
//   window.bench.setup(vendorBase)  boots the app's core (web/client/orizuru.js, the client the app
//                                   itself uses, with the built site's worker) pointed at the loopback
//                                   vendor; resolves when the core is ready
//   window.bench.run("app")         A: chat.run in the core's worker: pycore fetches, parses with its
//                                   OpenAI adapter and posts text_delta events; here each one goes to
//                                   StreamRenderer.append (web/render/markdown.js), finish() at the end
//   window.bench.run("js")          B: here, on the page: fetch, eventsource-parser, JSON.parse, the
//                                   same StreamRenderer
//
// Each run returns flat arrays for run.py: taps [t, bytesSoFar, ...] (when each body chunk reached
// its reader: the worker's reads for A, the page's for B), appends [t, charsSoFar, ...] (each
// renderer.append) and paints [t, charsShown, ...] (after each DOM update, the end of the frame that
// painted it), all in ms on this page's clock; and the page's long tasks (PerformanceObserver).
import { createParser } from "eventsource-parser";

import { createAgent } from "../../web/client/orizuru.js";
import { StreamRenderer } from "../../web/render/markdown.js";

const MODEL = "gpt-4o-mini";
const KEY = "sk-bench";
const now = () => performance.now();

let agent = null;
let vendor = "";
let rec = null; // the run being recorded

// "Painted": StreamRenderer updates the DOM in animation-frame callbacks. When a callback changed the
// container (its last node is another one: the open tail was rendered again or a block frozen), the
// frame's style, layout and paint run right after the callbacks, in the same task; a message posted
// now is handled in the next task, after that paint. Its time is the paint time, and the text shown is
// all the renderer had then (at these rates a frame update takes in all that arrived).
const painted = new MessageChannel();
painted.port1.onmessage = ({ data: chars }) => rec?.paints.push(now(), chars);
const nativeRaf = window.requestAnimationFrame.bind(window);
window.requestAnimationFrame = (callback) => nativeRaf((time) => {
  const out = rec?.container;
  const before = out?.lastChild;
  callback(time);
  if (rec && out.lastChild !== before) painted.port2.postMessage(rec.renderer.text.length);
});

let longTasks = [];
new PerformanceObserver((list) => {
  if (rec) longTasks.push(...list.getEntries().map((e) => e.duration));
}).observe({ type: "longtask", buffered: false });

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves after the next frame has painted; records it as showing `chars`. */
function afterNextPaint(chars) {
  return new Promise((resolve) => nativeRaf(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      rec.paints.push(now(), chars);
      resolve();
    };
    channel.port2.postMessage(null);
  }));
}

async function setup(vendorBase) {
  vendor = vendorBase;
  const boot = JSON.parse(document.getElementById("boot").textContent);
  agent = createAgent({ boot, site: document.baseURI,
                        profile: { vendor: "openai", model: MODEL, apiKey: KEY, baseUrl: `${vendor}/v1` } });
  return agent.ready;
}

function begin(everyFrame) {
  const out = document.getElementById("out");
  const container = document.createElement("div");
  out.replaceChildren(container);
  longTasks = [];
  performance.mark("bench-start"); // run.py reads the run's window from the trace by these marks
  rec = { container, renderer: new StreamRenderer(container), appends: [], paints: [], start: now() };
  if (everyFrame) flushEveryFrame(rec);
  return rec;
}

/**
 * Diagnostic (run.py --every-frame): render whatever arrived at every animation frame, with
 * StreamRenderer.flush(), instead of the renderer's own pace (at most every 30 ms): what latency the
 * pipeline itself allows.
 */
function flushEveryFrame(r) {
  let flushed = 0;
  const tick = () => {
    if (rec !== r) return;
    const chars = r.renderer.text.length;
    if (chars > flushed) {
      r.renderer.flush();
      flushed = chars;
      painted.port2.postMessage(chars);
    }
    nativeRaf(tick);
  };
  nativeRaf(tick);
}

async function end(r, taps) {
  r.renderer.finish();
  const chars = r.renderer.text.length;
  await afterNextPaint(chars);
  const finalPaint = now();
  performance.mark("bench-end");
  await sleep(150); // the long-task observer reports a little late
  rec = null;
  return { taps, appends: r.appends, paints: r.paints, longTasks, start: r.start, finalPaint, chars,
           domChars: r.container.textContent.length };
}

function onText(r, text) {
  r.renderer.append(text);
  r.appends.push(now(), r.renderer.text.length);
}

/** A: the app's pipeline. The worker's read times come back on the shared clock (timeOrigin + now). */
async function runApp(everyFrame) {
  const r = begin(everyFrame);
  agent.messages = []; // every run is a first turn: the same request as B's
  const result = await agent.run("Write the reply.", {
    onEvent: (ev) => {
      if (ev.type === "text_delta") onText(r, ev.text);
      else if (ev.type === "message" && ev.message.role === "assistant") r.renderer.finish();
    },
  });
  if (result.error) throw new Error(`chat.run failed: ${JSON.stringify(result.error)}`);
  const worker = agent.client.worker;
  const { taps: absolute, jspi } = await new Promise((resolve) => {
    const listen = ({ data }) => {
      if (data?.type !== "bench-taps") return;
      worker.removeEventListener("message", listen);
      resolve(data);
    };
    worker.addEventListener("message", listen);
    worker.postMessage({ type: "bench-taps" });
  });
  const taps = absolute.map((v, i) => (i % 2 ? v : v - performance.timeOrigin));
  return { ...(await end(r, taps)), jspi };
}

/** B: the JS-only pipeline on the page, the same request and the same renderer. */
async function runJs(everyFrame) {
  const r = begin(everyFrame);
  const response = await fetch(`${vendor}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, stream: true, stream_options: { include_usage: true },
                           messages: [{ role: "user", content: "Write the reply." }] }),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  let text = "";
  const parser = createParser({
    onEvent: ({ data }) => {
      if (data === "[DONE]") return;
      const delta = JSON.parse(data).choices?.[0]?.delta?.content;
      if (delta) {
        text += delta;
        onText(r, delta);
      }
    },
  });
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  const taps = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    taps.push(now(), bytes);
    parser.feed(decoder.decode(value, { stream: true }));
  }
  parser.feed(decoder.decode());
  if (text.length !== r.renderer.text.length) throw new Error("B lost text");
  return end(r, taps);
}

const run = (path, everyFrame = false) => (path === "app" ? runApp(everyFrame) : runJs(everyFrame));

window.bench = { setup, run };
document.documentElement.dataset.bench = "ready";
