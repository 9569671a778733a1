// The core's warm boot (issue 36 item 1): a memory snapshot of the interpreter, taken on a visit right after
// `import pycore.wire` and before the first call (so it holds code and imported modules, no key and no
// conversation), kept in this origin's Cache Storage under a key made of the exact Pyodide and wheel files (their
// URLs carry their hashes), and restored on the next visit instead of starting Python and importing again.
//
// A snapshot holds the WebAssembly memory only. A compiled extension (pydantic-core's `.so`) also lives outside
// it, as a module instance with entries in the function table, so a snapshot taken after it was imported fails
// on restore unless the extension is instantiated again at the memory and table bases it had (Cloudflare's
// Python Workers do the same). Here both boots load each extension before the interpreter starts, when Emscripten
// places a side module at the end of the static data (not from malloc) and at the table's end, which are the same
// in every boot; the restored memory then finds each one where it left it. Python's own import of the extension
// finds it loaded (by its path) and uses it.
//
//   const snapshots = new Snapshots(key)            key: what the snapshot was made from
//   await snapshots.read()                          {bytes, handles} or null
//   settings for loadPyodide: preload(extensions, saved), then after it made(py, extensions) / restored(py)
//   await snapshots.store(saved) / snapshots.drop()

// Not "orizuru-…": the service worker drops those of older builds when a new one takes over (this cache keys its
// one entry by what it was made of, and drops other entries itself).
const CACHE = "pycore-snapshot";
const HANDLES = "x-orizuru-dlopen-handles";

/**
 * The little of Emscripten's module this file touches (Pyodide's `_module`).
 * @typedef {{ HEAP8: Int8Array, _emscripten_resize_heap(bytes: number): number,
 *   addRunDependency(id: string): void, removeRunDependency(id: string): void,
 *   API: { sitePackages: string },
 *   newDSO(name: string, handle: number | undefined, exports: unknown): Dso,
 *   loadWebAssemblyModule(module: WebAssembly.Module, flags: object, name: string, scope: object): unknown,
 *   LDSO: { loadedLibsByHandle: Record<string, Dso> } }} EmscriptenModule
 * @typedef {{ name: string, refcount: number, global: boolean, exports: unknown }} Dso
 * @typedef {{ name: string, bytes: Uint8Array<ArrayBuffer> }} Extension  a `.so` and its path under site-packages
 * @typedef {{ bytes: Uint8Array<ArrayBuffer>, handles: Record<string, number[]> }} Saved
 *   the snapshot, and the dlopen handles (pointers in the saved memory) of each extension, by its path
 */

export class Snapshots {
  /** @param {string} key a URL naming exactly what the snapshot is made of */
  constructor(key) {
    this.key = key;
  }

  /**
   * The files a boot is made of, as one key. The wheels', Pyodide's and this worker's URLs carry their content
   * hashes (the worker's decides what runs before the snapshot), so any change to one is another key.
   * @param {string} base the site's URL
   * @param {string[]} files the worker, the Pyodide folder and the start-up wheels
   */
  static async keyFor(base, files) {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(files)));
    const hex = Array.from(new Uint8Array(digest).slice(0, 12), (b) => b.toString(16).padStart(2, "0")).join("");
    return new URL(`core-snapshot/${hex}`, base).href;
  }

  /** @returns {Promise<Saved | null>} this key's snapshot; snapshots of other files are thrown away */
  async read() {
    if (typeof caches === "undefined") return null; // not a secure context: no snapshot, a boot as before
    const cache = await caches.open(CACHE);
    for (const request of await cache.keys()) {
      if (request.url !== this.key) await cache.delete(request);
    }
    const response = await cache.match(this.key);
    if (!response) return null;
    const handles = JSON.parse(response.headers.get(HANDLES) ?? "{}");
    return { bytes: new Uint8Array(await response.arrayBuffer()), handles };
  }

  /** @param {Saved} saved */
  async store({ bytes, handles }) {
    if (typeof caches === "undefined") return;
    const cache = await caches.open(CACHE);
    await cache.put(this.key, new Response(bytes, { headers: { [HANDLES]: JSON.stringify(handles),
                                                               "content-type": "application/octet-stream" } }));
  }

  async drop() {
    if (typeof caches !== "undefined") await caches.delete(CACHE);
  }
}

/**
 * Settings for `loadPyodide`'s `createPyodideModule`: load each extension before the interpreter starts and, when
 * restoring, first grow the memory to the snapshot's size (this build sizes its memory itself, so the restore
 * would not fit).
 * @param {Promise<Extension[]>} extensions
 * @param {Saved | null} saved
 * @param {(err: unknown) => void} failed told if an extension cannot be loaded (Python then loads it on import,
 *   and no snapshot of this boot can be restored)
 * @param {string[]} [loaded] given the path of each extension loaded
 * @returns {(module: EmscriptenModule) => void} a `preRun` step
 */
export function preload(extensions, saved, failed, loaded = []) {
  return (module) => {
    module.addRunDependency("orizuru-extensions");
    extensions.then((all) => {
      if (saved && module.HEAP8.length < saved.bytes.byteLength) module._emscripten_resize_heap(saved.bytes.byteLength);
      for (const { name, bytes } of all) {
        const path = `${module.API.sitePackages}/${name}`;
        const dso = module.newDSO(path, undefined, "loading");
        dso.global = false;
        dso.exports = module.loadWebAssemblyModule(new WebAssembly.Module(bytes), { loadAsync: false, nodelete: true },
                                                   path, {});
        for (const handle of saved?.handles[path] ?? []) module.LDSO.loadedLibsByHandle[handle] = dso;
        loaded.push(path);
      }
    }).catch(failed).finally(() => module.removeRunDependency("orizuru-extensions"));
  };
}

/**
 * After the snapshot's code ran in the boot that makes it: the dlopen handles Python holds for each extension, or
 * null when a library was loaded that was not loaded ahead (its place could not be kept: no snapshot).
 * @param {EmscriptenModule} module
 * @param {string[]} preloaded the extensions' paths
 * @returns {Record<string, number[]> | null}
 */
export function handlesOf(module, preloaded) {
  /** @type {Record<string, number[]>} */
  const handles = {};
  for (const [handle, { name }] of Object.entries(module.LDSO.loadedLibsByHandle)) {
    if (handle === "0") continue; // the interpreter itself
    if (!preloaded.includes(name)) return null;
    (handles[name] ??= []).push(Number(handle));
  }
  return handles;
}

/**
 * In the boot that made the snapshot, once it is taken: Pyodide gave Python, for the making, a `js` module that
 * records every path taken through the page's globals; its getters run with the wrong receiver, so a browser
 * accessor read through it (as any after the snapshot may be) throws `Illegal invocation`. Python gets the real
 * globals back for every `import js` from now on, and in each module that imported it already (a restored boot
 * gets them from the start).
 * @param {{ runPython(code: string): unknown, registerJsModule(name: string, module: object): void }} py
 */
export function realGlobals(py) {
  py.runPython("import sys\n_orizuru_recorded_js = sys.modules.pop('js', None)");
  py.registerJsModule("js", globalThis);
  py.runPython(`import sys, js
if _orizuru_recorded_js is not None:
    for module in list(sys.modules.values()):
        if getattr(module, "js", None) is _orizuru_recorded_js:
            module.js = js
del _orizuru_recorded_js`);
}

/**
 * Python run once a snapshot is restored: every warm boot would otherwise draw the same numbers from `random`
 * (its state was saved with the memory). `os.urandom` and `secrets` ask the browser each time and need nothing.
 */
export const AFTER_RESTORE = "import sys\nif 'random' in sys.modules: sys.modules['random'].seed()";
