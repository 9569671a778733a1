// The core's body pump (issue 36 item 3): pycore/http/fetch.py reads a streamed response through this module,
// which web/worker.js registers as `orizuru_body_pump`, instead of waking Python for each read of the body.
//
// Waking Python in Pyodide costs about 450 µs (a promise to a Python future, an asyncio step, a timer) whatever
// the read holds; a fast vendor's stream arrives in a read every millisecond. Here the body is read in
// JavaScript as fast as it comes and Python is handed everything that arrived since it last asked, at most
// once per frame's time (WAKE_MS): the first chunk after a quiet spell goes at once, so a model's pace keeps its
// latency; a burst is gathered. A stream that fails hands over what arrived first, then the failure.
//
//   coalesce(body) -> { next() -> Promise<{done: boolean, value?: Uint8Array}> }
//       the shape of a ReadableStream reader's read(); the pump owns the body's reader from then on

/** At most one wake of Python per this many ms: one frame at 60 Hz. */
export const WAKE_MS = 16;

/**
 * @param {ReadableStream<Uint8Array>} body
 * @param {number} [wakeMs]
 */
export function coalesce(body, wakeMs = WAKE_MS) {
  const reader = body.getReader();
  /** @type {Uint8Array[]} */
  let chunks = [];
  let ended = false;
  /** @type {unknown} */
  let failure = null;
  let lastWake = -Infinity;
  /** @type {(() => void) | null} */
  let notify = null; // set while Python waits and nothing is queued
  const wake = () => notify?.();

  (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        wake();
      }
    } catch (err) {
      failure = err ?? new Error("the body failed");
    }
    ended = true;
    wake();
  })();

  /** @returns {{ done: boolean, value?: Uint8Array }} */
  const take = () => {
    if (chunks.length === 0) {
      if (failure) throw failure;
      return { done: true };
    }
    const all = chunks.length === 1 ? chunks[0] : concat(chunks);
    chunks = [];
    lastWake = performance.now();
    return { done: false, value: all };
  };

  return {
    /** @returns {Promise<{ done: boolean, value?: Uint8Array }>} */
    async next() {
      if (chunks.length === 0 && !ended) await new Promise((resolve) => { notify = () => resolve(undefined); });
      notify = null;
      const wait = lastWake + wakeMs - performance.now();
      if (wait > 0 && !ended) await new Promise((resolve) => setTimeout(resolve, wait));
      return take();
    },
  };
}

/** @param {Uint8Array[]} parts */
function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
