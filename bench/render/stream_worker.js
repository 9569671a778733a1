// Delivers a reply to the page the way the app's worker does: one postMessage per text delta, as fast
// as it can, then a "done" message.
self.onmessage = ({ data }) => {
  for (const text of data.tokens) self.postMessage({ type: "text_delta", text });
  self.postMessage({ type: "done" });
};
