// bench/boot/wasm_cache.py's probe: compiles Pyodide's wasm the way Pyodide does
// (WebAssembly.compileStreaming over fetch) and reports how long that took, which tells a
// compiled-code-cache hit (deserialising, tens of ms) from a miss (compiling 10 MB of wasm).
const boot = JSON.parse(document.getElementById("boot").textContent);
const url = new URL(`${boot.pyodide}pyodide.asm.wasm`, document.baseURI).href;
const started = performance.now();
const response = await fetch(url);
await WebAssembly.compileStreaming(response);
const result = {
  compile: performance.now() - started,
  controlled: Boolean(navigator.serviceWorker?.controller),
};
document.documentElement.dataset.probe = JSON.stringify(result);
