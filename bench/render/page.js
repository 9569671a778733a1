// Render benchmark page (bench/render/run.py drives it through page.evaluate).
//
//   window.bench.run(mode, tokens, capMs, rate) -> {deliveredMs, totalMs, updates, longestUpdateMs,
//                                             renderWorkMs, finishMs, longestTaskMs, tokensRendered}
// (an "update" is a frame callback, an append()/naive re-render, or the final finish(); renderWorkMs
// sums them all)
// modes:
//   "none"         tokens are only collected: the stream's own duration
//   "incremental"  StreamRenderer.append per token (batched per animation frame), finish() at the end
//   "naive"        per token: container.innerHTML = DOMPurify.sanitize(marked.parse(full text));
//                  stops after capMs (it would take many minutes) and reports how far it got
import DOMPurify from "dompurify";
import { marked } from "marked";

import { highlightNow } from "../../web/render/lazy_highlight.js";
import { StreamRenderer } from "../../web/render/markdown.js";
import { lex, tokensToHtml } from "../../web/render/parse.js";
import { sanitizeToFragment } from "../../web/render/sanitize.js";

// Time every animation-frame callback: that is where StreamRenderer does its work.
const frameTimes = [];
const nativeRaf = window.requestAnimationFrame.bind(window);
window.requestAnimationFrame = (callback) => nativeRaf((time) => {
  const start = performance.now();
  callback(time);
  frameTimes.push(performance.now() - start);
});

let longTasks = [];
new PerformanceObserver((list) => { longTasks.push(...list.getEntries()); }).observe({ type: "longtask", buffered: false });

const nextFrame = () => new Promise((resolve) => nativeRaf(() => resolve()));

function run(mode, tokens, capMs = 60000, rate = 0) {
  return new Promise((resolve) => {
    const out = document.getElementById("out");
    out.replaceChildren();
    const container = document.createElement("div");
    out.append(container);
    frameTimes.length = 0;
    longTasks = [];
    const handlerTimes = [];
    const worker = new Worker(new URL("assets/stream_worker.js", document.baseURI), { type: "module" });
    const renderer = mode === "incremental" ? new StreamRenderer(container) : null;
    let text = "";
    let first = 0;
    let received = 0;
    let capped = false;
    worker.onmessage = async ({ data }) => {
      const now = performance.now();
      if (!first) first = now;
      if (data.type === "done") {
        const delivered = now - first;
        const finishStart = performance.now();
        if (renderer) renderer.finish();
        const finishMs = performance.now() - finishStart;
        void container.offsetHeight; // the final layout is part of the cost
        const total = performance.now() - first;
        worker.terminate();
        await nextFrame();
        await new Promise((r) => setTimeout(r, 100)); // let the long-task observer report
        const longestTaskMs = Math.max(0, ...longTasks.map((t) => t.duration));
        const longTaskCount = longTasks.length;
        resolve({
          deliveredMs: delivered,
          totalMs: total,
          updates: mode === "naive" ? handlerTimes.length : frameTimes.length,
          longestUpdateMs: Math.max(0, ...frameTimes, ...handlerTimes, finishMs),
          renderWorkMs: [...frameTimes, ...handlerTimes, finishMs].reduce((a, b) => a + b, 0),
          finishMs,
          longestTaskMs,
          longTasks: longTaskCount,
          tokensRendered: received,
          capped,
          finalChars: container.textContent.length,
        });
        return;
      }
      received += 1;
      text += data.text;
      if (renderer) {
        const start = performance.now();
        renderer.append(data.text);
        handlerTimes.push(performance.now() - start);
      } else if (mode === "naive" && !capped) {
        const start = performance.now();
        container.innerHTML = DOMPurify.sanitize(marked.parse(text));
        handlerTimes.push(performance.now() - start);
        if (performance.now() - first > capMs) capped = received;
      }
    };
    worker.postMessage({ tokens, rate }); // rate: tokens per second, 0 = as fast as possible
  });
}

/**
 * After run(): code blocks frozen while the text outran the frames are highlighted when scrolled into
 * view (lazy_highlight.js). Not part of the stream's cost, but reported: highlighting all of them now
 * (what scrolling through the whole reply would cost, spread over the scrolling).
 */
function highlightDeferred() {
  const container = document.getElementById("out");
  const deferred = [...container.querySelectorAll("pre > code[class*='language-']:not(.hljs)")];
  const start = performance.now();
  for (const code of deferred) highlightNow(code);
  return {
    deferredHighlightMs: performance.now() - start,
    deferredBlocks: deferred.filter((code) => code.classList.contains("hljs")).length,
    codeBlocks: container.querySelectorAll("pre > code").length,
  };
}

/**
 * The floor under any renderer built on marked and DOMPurify: the whole final text rendered once,
 * code left for lazy highlighting as the stream leaves it. Even an ideal incremental renderer does
 * at least this much work in total.
 */
function oneShot(tokens) {
  const out = document.getElementById("out");
  out.replaceChildren();
  const text = tokens.join("");
  const t0 = performance.now();
  const html = tokensToHtml(lex(text, {}), { deferHighlighting: true });
  const t1 = performance.now();
  const fragment = sanitizeToFragment(html);
  const t2 = performance.now();
  out.append(fragment);
  void out.offsetHeight;
  const t3 = performance.now();
  return { markedMs: t1 - t0, sanitizeMs: t2 - t1, insertMs: t3 - t2, totalMs: t3 - t0, htmlChars: html.length };
}

window.bench = { run, highlightDeferred, oneShot };
document.documentElement.dataset.bench = "ready";
