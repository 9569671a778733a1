/**
 * OAuth sign-in for protected MCP servers, the page's half (the core's half is pycore/mcp/oauth.py,
 * reached through the wire methods mcp.oauth_*). Self-contained; no imports.
 *
 * The app page opens the authorization server in a popup; the authorization server sends the popup
 * back to the app's own URL with ?code&state&iss; that second copy of the app hands the URL to the
 * page that opened it and closes. The PKCE verifier, the expected state and the tokens stay in the worker,
 * which keeps the tokens across reloads in its own encrypted vault (web/oauth_vault.js, SECURITY.md T-A11):
 * this page never receives them.
 *
 *   // at the very start of main.js, before booting anything:
 *   import { handleOAuthRedirect } from "./app/oauth.js";
 *   if (handleOAuthRedirect()) return;        // this window is the popup coming back: done
 *
 *   // when mcp.connect fails with a 401 (MCPAuthRequiredError), from the click on "Sign in":
 *   const result = await signIn(core, { serverUrl });        // {resource, issuer, scope, expires_at}
 *   await core.call("mcp.connect", { id, url: serverUrl });   // the worker now sends the token, after a reload too
 *
 *   // signing out (deleting the server): the worker forgets its tokens, in its vault too
 *   await core.call("mcp.oauth_forget", { server_url: serverUrl });
 *
 * Exports:
 *   redirectUri(loc?)                 the app URL the authorization server sends the popup back to
 *                                     (origin + path, no query or fragment): register this one
 *   isOAuthRedirect(loc?)             this page load carries an authorization response (?state&code|error)
 *   handleOAuthRedirect()             in the popup: post the response URL to the opener (exact origin)
 *                                     or, if the authorization server cut the opener link (COOP), over a
 *                                     same-origin BroadcastChannel; wipe the query; close. true if handled
 *   safeAuthorizationUrl(url)         a URL object if http(s), else throws (never navigate to
 *                                     javascript:, data:, file:; SECURITY.md C21/T-A3)
 *   siteClientMetadataUrl(loc?, fetch?)  the URL of the site's oauth-client.json (its client id) when
 *                                     it is there and names itself and this page, else undefined
 *   signIn(core, {serverUrl, wwwAuthenticate?, scope?, clientId?, clientSecret?, clientMetadataUrl?,
 *                 signal?, timeoutMs?})
 *                                     MUST be called from a user gesture (the popup is opened at once,
 *                                     before any await, or the browser blocks it). Resolves with the
 *                                     result of mcp.oauth_finish ({resource, issuer, scope, expires_at}:
 *                                     no tokens). Rejects on a closed/blocked popup, abort, timeout,
 *                                     or a refused callback (the worker's error message).
 */

export const OAUTH_MESSAGE = "orizuru-oauth-callback";
export const OAUTH_CHANNEL = "orizuru-oauth";
const POPUP_NAME = "orizuru-oauth";
const POPUP_FEATURES = "popup=yes,width=520,height=720";
const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

/** @param {Location | URL} [loc] @returns {string} */
export function redirectUri(loc = window.location) {
  return `${loc.origin}${loc.pathname}`;
}

/** @param {Location | URL} [loc] @returns {boolean} */
export function isOAuthRedirect(loc = window.location) {
  const params = new URLSearchParams(loc.search);
  return params.has("state") && (params.has("code") || params.has("error"));
}

export function handleOAuthRedirect() {
  if (!isOAuthRedirect()) return false;
  const message = { type: OAUTH_MESSAGE, url: window.location.href };
  // The response must never linger in the address bar or the history.
  window.history.replaceState(null, "", redirectUri());
  let delivered = false;
  try {
    if (window.opener && !window.opener.closed) {
      // Exact origin: only a page of this same app can receive it.
      window.opener.postMessage(message, window.location.origin);
      delivered = true;
    }
  } catch {
    delivered = false;
  }
  if (!delivered && "BroadcastChannel" in window) {
    const channel = new BroadcastChannel(OAUTH_CHANNEL); // same-origin only, by construction
    channel.postMessage(message);
    channel.close();
  }
  window.close();
  return true;
}

/** @param {string} url */
export function safeAuthorizationUrl(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error("the authorization server gave an invalid sign-in URL; refused");
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new Error(`the sign-in URL uses ${parsed.protocol}, not https; refused`);
  }
  if (parsed.username || parsed.password) throw new Error("the sign-in URL carries credentials; refused");
  return parsed;
}

// The site's own Client ID Metadata Document (build.py writes it when told the site's URL): its URL, when it is
// served at the https URL it names as client_id and lists this page as a redirect, else undefined (the worker
// then registers dynamically).
export const CLIENT_METADATA = "oauth-client.json";

/** @param {Location | URL} [loc] @param {typeof fetch} [fetchDocument] @returns {Promise<string | undefined>} */
export async function siteClientMetadataUrl(loc = window.location, fetchDocument = fetch) {
  const url = new URL(CLIENT_METADATA, redirectUri(loc)).href;
  if (!url.startsWith("https:")) return undefined;
  try {
    const response = await fetchDocument(url, { cache: "no-cache", credentials: "omit" });
    /** @type {{client_id?: unknown, redirect_uris?: unknown} | null} */
    const metadata = response.ok ? await response.json() : null;
    const listed = Array.isArray(metadata?.redirect_uris) && metadata.redirect_uris.includes(redirectUri(loc));
    return metadata?.client_id === url && listed ? url : undefined;
  } catch {
    return undefined; // not there, or not JSON: no document
  }
}

/**
 * @typedef {{serverUrl: string, wwwAuthenticate?: string | null, scope?: string | null, clientId?: string | null,
 *   clientSecret?: string | null, clientMetadataUrl?: string | null, signal?: AbortSignal | null,
 *   timeoutMs?: number}} SignInOptions
 */

/**
 * @param {import("../client/orizuru.js").Agent} core
 * @param {SignInOptions} options
 */
export async function signIn(core, { serverUrl, wwwAuthenticate, scope, clientId, clientSecret, clientMetadataUrl,
                                     signal, timeoutMs = DEFAULT_TIMEOUT_MS }) {
  // Opened before the first await: a popup opened later than the click is blocked.
  const popup = window.open("about:blank", POPUP_NAME, POPUP_FEATURES);
  if (!popup) throw new Error("the browser blocked the sign-in window; allow pop-ups for this site and try again");
  try {
    clientMetadataUrl ??= await siteClientMetadataUrl();
    const begun = await core.call("mcp.oauth_begin", {
      server_url: serverUrl, redirect_uri: redirectUri(), www_authenticate: wwwAuthenticate, scope,
      client_id: clientId, client_secret: clientSecret, client_metadata_url: clientMetadataUrl,
    });
    popup.location.href = safeAuthorizationUrl(begun.authorization_url).href;
    const callbackUrl = await waitForCallback(popup, begun.state, { signal, timeoutMs });
    return await core.call("mcp.oauth_finish", { callback_url: callbackUrl });
  } finally {
    if (!popup.closed) popup.close();
  }
}

/** @param {string} url */
function stateOf(url) {
  try {
    return new URL(url).searchParams.get("state");
  } catch {
    return null;
  }
}

/**
 * @param {Window} popup
 * @param {string} state
 * @param {{signal?: AbortSignal | null, timeoutMs: number}} options
 * @returns {Promise<string>} the callback's URL
 */
function waitForCallback(popup, state, { signal, timeoutMs }) {
  return new Promise((resolve, reject) => {
    const channel = "BroadcastChannel" in window ? new BroadcastChannel(OAUTH_CHANNEL) : null;
    /**
     * @template T
     * @param {(value: T) => void} fn
     * @param {T} value
     */
    const done = (fn, value) => {
      window.removeEventListener("message", onMessage);
      channel?.close();
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      fn(value);
    };
    /** @param {{type?: unknown, url?: unknown} | null | undefined} data */
    const accept = (data) => {
      // Only our message, for this sign-in; anything else is ignored (another tab's sign-in, noise).
      if (data?.type !== OAUTH_MESSAGE || typeof data.url !== "string" || stateOf(data.url) !== state) return;
      done(resolve, data.url);
    };
    /** @param {MessageEvent} ev */
    const onMessage = (ev) => {
      if (ev.origin !== window.location.origin || ev.source !== popup) return;
      accept(ev.data);
    };
    const onAbort = () => done(reject, new Error("sign-in cancelled"));
    const timer = setTimeout(() => done(reject, new Error("sign-in timed out; try again")), timeoutMs);
    window.addEventListener("message", onMessage);
    if (channel) channel.onmessage = (ev) => accept(ev.data);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort);
  });
}
