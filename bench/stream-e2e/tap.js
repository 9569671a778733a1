// bench/stream-e2e: loaded into the app's own worker before its code (bench-worker.js imports this
// file, then the built site's worker unchanged). It notes when each chunk of the vendor's response
// body reaches whoever reads it: every read() of a response to a chat request resolves through a
// wrapper that records the time (on the clock the page shares: timeOrigin + now) and the bytes so
// far. The page asks for the notes with {type: "bench-taps"}; the app's worker ignores that message.
const CHAT_PATH = "/chat/completions";
let taps = [];

const nativeFetch = self.fetch;
self.fetch = async function fetch(input, init) {
  const response = await nativeFetch.call(self, input, init);
  const url = typeof input === "string" ? input : input?.url ?? String(input);
  if (url.includes(CHAT_PATH) && response.body) tap(response.body);
  return response;
};

function tap(body) {
  taps = [];
  let bytes = 0;
  const getReader = body.getReader.bind(body);
  body.getReader = (...args) => {
    const reader = getReader(...args);
    const read = reader.read.bind(reader);
    reader.read = () => read().then((result) => {
      if (!result.done) {
        bytes += result.value.byteLength;
        taps.push(performance.timeOrigin + performance.now(), bytes);
      }
      return result;
    });
    return reader;
  };
}

self.addEventListener("message", ({ data }) => {
  // jspi: whether Pyodide could use JavaScript Promise Integration here (run.py --no-jspi hides it)
  if (data?.type === "bench-taps") self.postMessage({ type: "bench-taps", taps, jspi: "Suspending" in WebAssembly });
});
