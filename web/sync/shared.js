/**
 * A conversation shared as a read-only link (#34): one file, sealed with a fresh random key that only the link
 * carries, in its fragment (`#/shared/<file's address>&k=<key>`), which a browser never sends to any server.
 *
 *   await sealShared(payload) -> {name, bytes, key}     name: `shared-<32 hex>` (sync never reads it: target.js)
 *   await openShared(bytes, key) -> SharedPayload       SharedLinkError if it does not open or is not one
 *   linkOf(site, location, key) -> string;  parseLink(hash) -> {location, key} | null
 *
 * The file is 12 bytes of IV, then AES-256-GCM of the payload's JSON with FORMAT as additional data.
 * SharedPayload = {format, version: 1, title, messages: [{role: "user" | "assistant", text}]}: text only, rendered
 * on the viewer's side by the page's own renderer (markdown, math, the sanitizer, images held), as any reply is.
 */

import { fromBase64, toBase64 } from "../files/base64.js";
import { SyncError } from "./target.js";

const FORMAT = "orizuru.shared";
const MAX_MESSAGES = 10_000;
const encoder = new TextEncoder();

/** @typedef {{format: string, version: number, title: string, messages: {role: "user" | "assistant", text: string}[]}} SharedPayload */

/** The shared file did not open (a wrong or cut key, a changed file) or is not a shared conversation. */
export class SharedLinkError extends SyncError {
  /** @param {string} key */
  constructor(key) {
    super(key);
    this.name = "SharedLinkError";
  }
}

/** @param {Uint8Array} bytes */
const base64url = (bytes) => toBase64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

/** @param {string} text */
const fromBase64url = (text) => fromBase64(text.replaceAll("-", "+").replaceAll("_", "/"));

/** @param {{title: string, messages: {role: "user" | "assistant", text: string}[]}} conversation */
export async function sealShared({ title, messages }) {
  const raw = crypto.getRandomValues(new Uint8Array(32));
  const key = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt"]);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const payload = { format: FORMAT, version: 1, title, messages };
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(FORMAT) }, key,
    encoder.encode(JSON.stringify(payload)));
  const bytes = new Uint8Array(12 + sealed.byteLength);
  bytes.set(iv);
  bytes.set(new Uint8Array(sealed), 12);
  const name = `shared-${[...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
  return { name, bytes, key: base64url(raw) };
}

/** @param {Uint8Array} bytes @param {string} key @returns {Promise<SharedPayload>} */
export async function openShared(bytes, key) {
  let payload;
  try {
    const raw = fromBase64url(key);
    if (raw.length !== 32) throw new Error("not a 256-bit key");
    const aes = await crypto.subtle.importKey("raw", /** @type {BufferSource} */ (raw), "AES-GCM", false, ["decrypt"]);
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: encoder.encode(FORMAT) },
      aes, bytes.slice(12));
    payload = JSON.parse(new TextDecoder().decode(plain));
  } catch {
    throw new SharedLinkError("shared.doesNotOpen");
  }
  const messages = Array.isArray(payload?.messages) ? payload.messages.slice(0, MAX_MESSAGES) : null;
  if (payload?.format !== FORMAT || typeof payload.title !== "string" || !messages) throw new SharedLinkError("shared.notShared");
  return {
    format: FORMAT, version: 1, title: payload.title,
    messages: messages.filter((/** @type {any} */ m) => (m?.role === "user" || m?.role === "assistant") && typeof m.text === "string")
      .map((/** @type {{role: "user" | "assistant", text: string}} */ m) => ({ role: m.role, text: m.text })),
  };
}

/** The link: the site's address, then only in the fragment the file's address and the key. */
export function linkOf(/** @type {string} */ site, /** @type {string} */ location, /** @type {string} */ key) {
  const url = new URL(site);
  url.hash = "";
  return `${url.href}#/shared/${encodeURIComponent(location)}&k=${key}`;
}

/** @param {string} hash @returns {{location: string, key: string} | null} */
export function parseLink(hash) {
  const match = /^#\/shared\/([^&#]+)&k=([A-Za-z0-9_-]{43})$/.exec(hash);
  if (!match) return null;
  try {
    return { location: decodeURIComponent(match[1]), key: match[2] };
  } catch {
    return null;
  }
}
