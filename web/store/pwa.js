/**
 * The service worker that lets Orizuru install as an app and boot offline (web/sw.js).
 *
 *   registerServiceWorker({url = "sw.js"}) -> Promise<ServiceWorkerRegistration | null>
 *
 * Call once at start-up (main.js). It never throws: without service-worker support (an insecure
 * origin, a private window that forbids it) the page simply works online only, and the reason is
 * logged.
 */

export async function registerServiceWorker({ url = "sw.js" } = {}) {
  if (!("serviceWorker" in navigator)) return null;
  try {
    return await navigator.serviceWorker.register(new URL(url, document.baseURI), { scope: "./", type: "classic" });
  } catch (err) {
    console.warn(`offline support is off: the service worker did not register (${err instanceof Error ? err.message : err})`);
    return null;
  }
}
