/**
 * The WebDAV doctor: when the page cannot reach the sync folder, find out why and say what to set on the server.
 *
 *   await diagnoseWebDav(target) -> Finding[]      Finding = {code, host, origin?, header?, method?}
 *
 * A browser hides why a cross-origin request failed (every CORS failure is the same TypeError), so, as the MCP
 * doctor does in the browser (pycore/mcp/doctor.py), the cause is inferred from which requests fail:
 *   - a `no-cors` GET fails only when the server cannot be reached at all       -> "unreachable"
 *   - a plain GET (no preflight) fails when no Access-Control-Allow-Origin answers this origin -> "no_cors"
 *   - a GET adding one request header sync sends (each needs the preflight to allow it) -> "header"
 *   - PROPFIND and PUT (not simple methods, so named in the preflight)          -> "method"
 * The probes change nothing: they read the folder, and the PUT goes into a folder that is not there, which a
 * WebDAV server refuses (409: it never makes the folders on the way, RFC 4918 9.7.1). They carry the user's login, as sync does: a server
 * may answer a request without it with no CORS headers at all.
 */

/** @typedef {{code: "unreachable" | "no_cors" | "header" | "method", host: string, origin?: string, header?: string, method?: string}} Finding */

const HEADERS = /** @type {const} */ ([
  ["Depth", "1"], ["If-Match", "\"orizuru-doctor\""], ["If-None-Match", "*"], ["Content-Type", "application/xml"],
]);
const PROBE = "orizuru-doctor-none/probe";

/** @param {import("./webdav.js").WebDavTarget} target @returns {Promise<Finding[]>} */
export async function diagnoseWebDav(target) {
  const host = target.folder.host;
  const url = target.folder.href;
  /** @param {RequestInit & {headers?: Record<string, string>}} init @param {string} [at] */
  const passes = async (init, at = url) => {
    try {
      await fetch(at, { credentials: "omit", cache: "no-store", redirect: "manual", referrerPolicy: "no-referrer", ...init });
      return true;
    } catch {
      return false;
    }
  };
  if (!(await passes({ mode: "no-cors", redirect: "follow" }))) return [{ code: "unreachable", host }]; // no-cors: follow only
  if (!(await passes({}))) return [{ code: "no_cors", host, origin: location.origin }];
  /** @type {Finding[]} */
  const findings = [];
  const auth = target.auth;
  if (auth.Authorization && !(await passes({ headers: auth }))) findings.push({ code: "header", host, header: "Authorization" });
  for (const [header, value] of HEADERS) {
    if (!(await passes({ headers: { [header]: value } }))) findings.push({ code: "header", host, header });
  }
  if (findings.length) return findings; // the methods' probes carry these headers: their preflight fails the same
  if (!(await passes({ method: "PROPFIND", headers: { ...auth, Depth: "0" } }))) findings.push({ code: "method", host, method: "PROPFIND" });
  const probe = new URL(PROBE, target.folder).href;
  if (!(await passes({ method: "PUT", body: "", headers: { ...auth, "If-None-Match": "*" } }, probe))) {
    findings.push({ code: "method", host, method: "PUT" });
  }
  return findings;
}
