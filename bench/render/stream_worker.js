// Delivers a reply to the page the way the app's worker does: one postMessage per text delta, then a
// "done" message. At full speed (rate 0) as fast as it can; with a rate (tokens per second) paced by
// the clock, a timer tick at a time, as a model streaming at that rate would arrive.
const TICK_MS = 10;

self.onmessage = ({ data: { tokens, rate = 0 } }) => {
  if (!rate) {
    for (const text of tokens) self.postMessage({ type: "text_delta", text });
    self.postMessage({ type: "done" });
    return;
  }
  const start = performance.now();
  let sent = 0;
  const tick = () => {
    const due = Math.min(tokens.length, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
    for (; sent < due; sent += 1) self.postMessage({ type: "text_delta", text: tokens[sent] });
    if (sent < tokens.length) setTimeout(tick, TICK_MS);
    else self.postMessage({ type: "done" });
  };
  tick();
};
