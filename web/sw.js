// Orizuru's service worker: the site installs as an app and boots offline from its cache.
//
// build.py writes dist/sw.js as this file preceded by one line:
//   self.ORIZURU_BUILD = {version: "<hash of every file listed>", precache: ["./", "assets/main-XXXX.js", ...]}
// listing every file of the built site (Pyodide runtime, wheels, hashed assets, the page itself)
// except source maps. A new build changes that line, so the browser installs the new worker, which
// caches the new files under a new cache name and drops the old caches when it takes over.
//
// Fetch rules, for GET requests of this origin only:
//   - the page (navigations, "./", "index.html"): network first, the cached copy when offline;
//   - WebAssembly (pyodide.asm.wasm): from the network as the page asked for it — with its
//     immutable header that is the browser's HTTP cache, no server round trip — and the cached
//     copy only when the network fails. Chromium keeps the compiled code of a wasm module beside
//     its HTTP-cache entry; served from Cache Storage the module compiled afresh on every boot
//     (bench/boot: warm boots 1.9 × the bare page with cache-first, 1.0 × this way);
//   - other content-hashed or version-pinned files (assets/, wheels/, pyodide/): cache first;
//   - other precached files (icons, manifest): network first, cache when offline;
//   - everything else, and every request to another origin (vendors, MCP servers) or to the
//     relay's endpoints (/mcp/, /sse/, /api/, /remote/, /webdav/): not touched at all — no respondWith, no caching.

const sw = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self));
const BUILD = self.ORIZURU_BUILD ?? { version: "dev", precache: [] };
const CACHE = `orizuru-${BUILD.version}`;
const IMMUTABLE = ["assets/", "wheels/", "pyodide/"];
const RELAY = ["mcp/", "sse/", "api/", "remote/", "webdav/"];
const scope = new URL(sw.registration.scope);
const PAGE = new URL("./", scope).href;
const PRECACHED = new Set(BUILD.precache.map((path) => new URL(path, scope).href));

sw.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // no-cache: revalidate the page and the small unhashed files; hashed files may come from the HTTP cache.
      await cache.addAll(BUILD.precache.map((path) => new Request(new URL(path, scope), {
        cache: IMMUTABLE.some((p) => path.startsWith(p)) ? "default" : "no-cache",
      })));
      await sw.skipWaiting();
    })(),
  );
});

sw.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name.startsWith("orizuru-") && name !== CACHE) await caches.delete(name);
      await sw.clients.claim();
    })(),
  );
});

sw.addEventListener("fetch", (event) => {
  const { request } = event;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== scope.origin || !url.href.startsWith(scope.href)) return; // vendors, MCP: never touched
  const path = url.pathname.slice(scope.pathname.length);
  if (RELAY.some((p) => path.startsWith(p))) return;
  if (request.mode === "navigate" || path === "" || path === "index.html") {
    event.respondWith(networkFirst(request, PAGE));
  } else if (PRECACHED.has(url.origin + url.pathname)) {
    const key = url.origin + url.pathname;
    if (path.endsWith(".wasm")) event.respondWith(networkThenCache(request, key));
    else if (IMMUTABLE.some((p) => path.startsWith(p))) event.respondWith(cacheFirst(request, key));
    else event.respondWith(networkFirst(request, key));
  }
});

/**
 * @param {Request} request
 * @param {string} key
 * @returns {Promise<Response>}
 */
async function cacheFirst(request, key) {
  const cached = await caches.match(key, { cacheName: CACHE });
  return cached ?? fetch(request);
}

// The network (for an immutable file: the HTTP cache) untouched, Cache Storage only when it fails.
/**
 * @param {Request} request
 * @param {string} key
 * @returns {Promise<Response>}
 */
async function networkThenCache(request, key) {
  try {
    return await fetch(request);
  } catch (err) {
    const cached = await caches.match(key, { cacheName: CACHE });
    if (cached) return cached;
    throw err;
  }
}

// The network, and a fresh copy into Cache Storage for the next offline start.
/**
 * @param {Request} request
 * @param {string} key
 * @returns {Promise<Response>}
 */
async function networkFirst(request, key) {
  try {
    const response = await fetch(request);
    if (response.ok && response.type === "basic") {
      const copy = response.clone();
      caches.open(CACHE).then((cache) => cache.put(key, copy)).catch(() => {});
    }
    return response;
  } catch (err) {
    const cached = await caches.match(key, { cacheName: CACHE });
    if (cached) return cached;
    throw err;
  }
}
