// A bare page for bench/boot: boots Pyodide, installs the same wheels as the app and imports
// pydantic and jinja2 — nothing of ours. Runs on the main thread, or in a worker when loaded as one.
// Mode "pyodide" is the floor for the first visit: loadPyodide in a worker and nothing else.

const inWorker = typeof window === "undefined";

async function bareBoot(base, boot, onlyPyodide = false) {
  const indexURL = new URL(boot.pyodide, base).href;
  if (onlyPyodide) {
    const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
    await loadPyodide({ indexURL, packages: [] });
    return;
  }
  const wheels = [...boot.wheels, ...(boot.later ?? [])] // all of them, as the app installed before ready until it deferred some
    .filter((w) => !w.includes("/pycore-"))
    .map((w) => fetch(new URL(w, base)).then((r) => r.arrayBuffer()));
  const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
  const py = await loadPyodide({ indexURL, packages: [] });
  performance.mark("stage:packages");
  const extractDir = py.runPython("import site; site.getsitepackages()[0]");
  for (const bytes of wheels) py.unpackArchive(await bytes, "wheel", { extractDir });
  performance.mark("stage:core");
  py.runPython("import pydantic, jinja2");
}

if (inWorker) {
  self.onmessage = async ({ data }) => {
    await bareBoot(data.base, data.boot, data.onlyPyodide);
    self.postMessage("ready");
  };
} else {
  const boot = JSON.parse(document.getElementById("boot").textContent);
  performance.mark("ui-usable");
  const done = () => {
    document.documentElement.dataset.core = "ready";
    performance.mark("core-ready");
  };
  const mode = document.documentElement.dataset.mode;
  if (mode === "worker" || mode === "pyodide") {
    const worker = new Worker(new URL(import.meta.url), { type: "module" });
    worker.onmessage = done;
    worker.postMessage({ base: document.baseURI, boot, onlyPyodide: mode === "pyodide" });
  } else {
    bareBoot(document.baseURI, boot).then(done);
  }
}
