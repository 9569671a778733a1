// bench/stream worker: parses the same byte chunks with pycore (Pyodide) and with the plain-JS
// baseline (eventsource-parser + JSON.parse, or line split + JSON.parse for NDJSON).
import { createParser } from "eventsource-parser";

let py = null;
let parse = null;

async function boot(base, boot) {
  const indexURL = new URL(boot.pyodide, base).href;
  const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
  py = await loadPyodide({ indexURL, packages: [] });
  const extractDir = py.runPython("import site; site.getsitepackages()[0]");
  for (const w of boot.wheels) {
    const bytes = await (await fetch(new URL(w, base))).arrayBuffer();
    py.unpackArchive(bytes, "wheel", { extractDir });
  }
  // Each chunk crosses to Python as bytes, as the fetch transport hands them over; events stay in
  // Python; the completion (the whole message) is built at the end, as ChatClient does.
  parse = py.runPython(`
from pycore.adapters import get_adapter
def parse(vendor, chunks):
    parser = get_adapter(vendor).stream_parser()
    count = 0
    for chunk in chunks:
        count += len(parser.feed(chunk.to_bytes()))
    count += len(parser.finish())
    parser.completion()
    return count
parse`);
}

function jsBaseline(vendor, chunks) {
  let count = 0;
  const decoder = new TextDecoder();
  if (vendor === "ollama") {
    let rest = "";
    for (const chunk of chunks) {
      const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
      rest = lines.pop();
      for (const line of lines) if (line.trim()) (JSON.parse(line), count++);
    }
    return count;
  }
  const parser = createParser({
    onEvent: (event) => {
      if (event.data !== "[DONE]") JSON.parse(event.data);
      count++;
    },
  });
  for (const chunk of chunks) parser.feed(decoder.decode(chunk, { stream: true }));
  return count;
}

function chunked(bytes, size) {
  const out = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

// The stream is fetched and cut once and kept while the runs on it last: a fresh copy per run would
// leave megabytes of garbage for V8 to collect during whichever run came next.
let stream = { key: null };

async function chunksOf(url, size) {
  const key = `${url} ${size}`;
  if (stream.key !== key) {
    stream = { key: null }; // the last stream's bytes go before the next one's arrive
    const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
    stream = { key, bytes: bytes.length, chunks: chunked(bytes, size) };
  }
  return stream;
}

self.onmessage = async ({ data }) => {
  if (data.type === "boot") {
    await boot(data.base, data.boot);
    return self.postMessage({ type: "ready" });
  }
  const { bytes, chunks } = await chunksOf(data.url, data.chunkSize);
  const t0 = performance.now();
  const unified = data.impl === "pycore" ? parse(data.vendor, chunks) : jsBaseline(data.vendor, chunks);
  const ms = performance.now() - t0;
  self.postMessage({ type: "result", ms, unified, bytes, chunks: chunks.length });
};
