/**
 * The relay (server/) opens the page as http://127.0.0.1:PORT/#token=... The token proves the page
 * was opened from the relay's own printout; it authorises /api and /mcp requests.
 *
 *   readRelayToken()   reads the token from the fragment, then removes it from the address bar
 *                      (history.replaceState) so it is not bookmarked, shared or kept in history;
 *                      it stays in sessionStorage, for this tab only, so a reload still works.
 *                      A route beside it (`#/c/<id>&token=…`) is left in place.
 *   listRelayServers(token) -> [{name, url, state, ...}]   GET /api/servers (Bearer token)
 *   listRelayFolders(token) -> [{name, url, target}]       GET /api/webdav: the WebDAV sync folders it forwards to
 *                                                          (--allow-webdav; url is its /webdav/NAME/, target the folder)
 *   relayServerUrl(server)  -> absolute same-origin URL of its streamable-HTTP endpoint
 */

const SESSION_KEY = "orizuru.relayToken";

export function readRelayToken() {
  // The fragment may also hold the page's route (`#/c/<id>`, web/app/router.js), before or after the
  // token and joined by "&": only the token's piece is taken out, the route stays.
  const pieces = location.hash.slice(1).split("&").filter(Boolean);
  const found = pieces.find((piece) => piece.startsWith("token="));
  const token = found ? new URLSearchParams(found).get("token") : null;
  if (token) {
    const rest = pieces.filter((piece) => !piece.startsWith("token=")).join("&");
    history.replaceState(history.state, "", `${location.pathname}${location.search}${rest ? `#${rest}` : ""}`);
    try {
      sessionStorage.setItem(SESSION_KEY, token);
    } catch {
      /* storage off: the token still works for this page load */
    }
    return token;
  }
  try {
    return sessionStorage.getItem(SESSION_KEY);
  } catch {
    return null;
  }
}

/**
 * @typedef {{id?: string, url: string, name?: string, [key: string]: unknown}} RelayServer   the relay's /api/servers entry
 */

/** @typedef {{name: string, url: string, target: string}} RelayFolder   the relay's /api/webdav entry */

/** @param {string} path @param {string} key @param {string} token @returns {Promise<unknown[]>} */
async function relayList(path, key, token) {
  const response = await fetch(new URL(path, document.baseURI), {
    headers: { Authorization: `Bearer ${token}` },
    cache: "no-store",
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const body = await response.json();
  return body[key] ?? [];
}

/** @param {string} token */
export async function listRelayServers(token) {
  return /** @type {RelayServer[]} */ (await relayList("api/servers", "servers", token));
}

/** @param {string} token */
export async function listRelayFolders(token) {
  return /** @type {RelayFolder[]} */ (await relayList("api/webdav", "folders", token));
}

/** @param {{url: string}} server */
export function relayServerUrl(server) {
  return new URL(server.url.replace(/^\//, ""), document.baseURI).href;
}
