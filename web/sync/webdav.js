/**
 * A WebDAV folder as a sync target (target.js): Nextcloud, ownCloud, Synology, Fastmail Files, or any WebDAV
 * server that answers this site's origin with CORS headers (Access-Control-Allow-Origin, -Headers:
 * Authorization, Depth, If-Match, If-None-Match, Content-Type; -Expose-Headers: ETag; -Methods: PROPFIND, PUT).
 *
 *   new WebDavTarget(folderUrl, {user, password})   folderUrl ends in "/" (added when missing)
 *
 * list() is one PROPFIND (Depth: 1) asking for each file's getetag; read() a GET; write() a PUT with If-Match
 * (or If-None-Match: * for a new file), so two devices never overwrite each other unseen (412: SyncConflictError).
 *
 *   new WebDavTarget(folderUrl, {user, password, relay: {name, token}})   through the relay (server/webdav.py) for a
 *       server that sends no CORS headers: the same requests go to the relay's same-origin /webdav/NAME/ with its
 *       token, and the folder's login rides in Remote-Authorization (the relay sends it on as Authorization)
 */

import { SYNC_NAME, SyncConflictError, SyncTargetError } from "./target.js";

const PROPFIND = `<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><d:resourcetype/></d:prop></d:propfind>`;

/** @typedef {import("./target.js").SyncTarget} SyncTarget */

/** @implements {SyncTarget} */
export class WebDavTarget {
  /**
   * @param {string} url
   * @param {{user?: string, password?: string, relay?: {name: string, token: string | null} | null}} [login]
   */
  constructor(url, { user = "", password = "", relay = null } = {}) {
    let folder;
    try {
      folder = new URL(url);
    } catch {
      throw new SyncTargetError("sync.err.notUrl", { url });
    }
    if (folder.protocol !== "https:" && folder.protocol !== "http:") {
      throw new SyncTargetError("sync.err.notWeb", { url });
    }
    if (!folder.pathname.endsWith("/")) folder.pathname += "/";
    if (folder.username || folder.password) {
      throw new SyncTargetError("sync.err.loginInUrl");
    }
    this.folder = folder;
    this.label = folder.href;
    /** @type {Record<string, string>} */
    this.auth = user || password ? { Authorization: `Basic ${btoa(unescape(encodeURIComponent(`${user}:${password}`)))}` } : {};
    this.relay = relay;
    /** Where the requests go: the folder, or the relay's bridge to it. */
    this.endpoint = relay ? new URL(`webdav/${encodeURIComponent(relay.name)}/`, document.baseURI) : folder;
  }

  /** The login, as the folder or the relay takes it. @returns {Record<string, string>} */
  #login() {
    if (!this.relay) return this.auth;
    const basic = this.auth.Authorization;
    return { Authorization: `Bearer ${this.relay.token}`, ...(basic ? { "Remote-Authorization": basic } : {}) };
  }

  /** @param {string} method @param {string} name @param {RequestInit & {headers?: Record<string, string>}} [init] */
  async #request(method, name, init = {}) {
    const relay = this.relay && { name: this.relay.name, url: this.folder.href, host: this.folder.host };
    if (relay && !this.relay?.token) throw new SyncTargetError("sync.err.relayRefused", relay);
    let response;
    try {
      response = await fetch(new URL(name, this.endpoint), {
        ...init, method, headers: { ...this.#login(), ...init.headers }, credentials: "omit", cache: "no-store",
        redirect: "error", referrerPolicy: "no-referrer",
      });
    } catch {
      if (relay) throw new SyncTargetError("sync.err.relayDown", relay);
      throw new SyncTargetError("sync.err.unreachable", { host: this.folder.host }, "unreachable");
    }
    const host = this.folder.host;
    if (relay && await refusedByRelay(response)) throw new SyncTargetError("sync.err.relayRefused", relay);
    if (response.status === 401 || response.status === 403) {
      throw new SyncTargetError("sync.err.login", { host, status: response.status });
    }
    if (response.status === 507) throw new SyncTargetError("sync.err.full", { host });
    return response;
  }

  async list() {
    const response = await this.#request("PROPFIND", "", {
      body: PROPFIND, headers: { Depth: "1", "Content-Type": "application/xml; charset=utf-8" },
    });
    if (response.status === 404) {
      throw new SyncTargetError("sync.err.noFolder", { url: this.folder.href });
    }
    const host = this.folder.host;
    if (response.status !== 207) throw new SyncTargetError("sync.err.listing", { host, status: response.status });
    const doc = new DOMParser().parseFromString(await response.text(), "application/xml");
    /** @type {import("./target.js").RemoteEntry[]} */
    const entries = [];
    for (const item of doc.getElementsByTagNameNS("DAV:", "response")) {
      const href = item.getElementsByTagNameNS("DAV:", "href")[0]?.textContent ?? "";
      const etag = item.getElementsByTagNameNS("DAV:", "getetag")[0]?.textContent ?? "";
      let name;
      try {
        name = decodeURIComponent(new URL(href, this.folder).pathname.split("/").pop() ?? "");
      } catch {
        continue;
      }
      if (SYNC_NAME.test(name)) entries.push({ name, etag });
    }
    return entries;
  }

  /** @param {string} name */
  async read(name) {
    const response = await this.#request("GET", name);
    if (response.status === 404) return null;
    if (!response.ok) throw new SyncTargetError("sync.err.reading", { host: this.folder.host, status: response.status, name });
    return { bytes: new Uint8Array(await response.arrayBuffer()), etag: response.headers.get("ETag") ?? "" };
  }

  /** @param {string} name @param {Uint8Array} bytes @param {string | null} ifMatch */
  async write(name, bytes, ifMatch) {
    const response = await this.#request("PUT", name, {
      body: /** @type {BodyInit} */ (bytes),
      headers: { "Content-Type": "application/octet-stream", ...(ifMatch === null ? { "If-None-Match": "*" } : { "If-Match": ifMatch }) },
    });
    if (response.status === 412) throw new SyncConflictError(name);
    if (!response.ok) throw new SyncTargetError("sync.err.saving", { host: this.folder.host, status: response.status, name });
    return response.headers.get("ETag") ?? "";
  }
}

/** The relay's own refusal (a stale token, or no --allow-webdav folder of that name: server/webdav.py), not the folder's.
 *  @param {Response} response */
async function refusedByRelay(response) {
  if (response.headers.get("WWW-Authenticate")?.includes("orizuru-relay")) return true;
  return response.status === 403 && (await response.clone().text()).includes("no --allow-webdav URL");
}
