/**
 * API keys: kept in memory by default, saved only when the user asks, and then only encrypted with
 * a passphrase (WebCrypto: PBKDF2-SHA256 derives an AES-256-GCM key; random salt and IV per record).
 *
 *   encryptSecret(passphrase, plaintext) -> Promise<KeyRecord>
 *   decryptSecret(passphrase, record) -> Promise<plaintext>     wrong passphrase -> WrongPassphraseError
 *   isKeyRecord(value) -> bool
 *   sessionKeys                    the in-memory key ring of this tab: set(id, key), get(id), delete(id),
 *                                  clear(); forgotten when the tab closes; never written anywhere
 *   redactSecrets(text) -> text    every key in sessionKeys replaced by "[API key removed]"
 *   containsSecret(text) -> bool
 *
 *   KeyRecord = {format: "orizuru.secret", version: 1, kdf: "PBKDF2-SHA256", iterations, cipher: "AES-GCM",
 *                salt: base64 (16 bytes), iv: base64 (12 bytes), ciphertext: base64 (with the GCM tag)}
 *
 * The record's fields go into the GCM additional data, so a record whose iteration count or salt was
 * edited fails like a wrong passphrase instead of being decrypted under weaker settings.
 */

import { fromBase64, toBase64 } from "../files/base64.js";

/**
 * @typedef {{format: "orizuru.secret", version: 1, kdf: "PBKDF2-SHA256", iterations: number, cipher: "AES-GCM",
 *   salt: string, iv: string, ciphertext: string}} KeyRecord   an API key encrypted under a passphrase
 * @typedef {Omit<KeyRecord, "ciphertext">} KeyHeader   what the GCM additional data covers
 */

// OWASP's 2023 figure for PBKDF2-HMAC-SHA256; well under a second in a current browser.
export const PBKDF2_ITERATIONS = 600_000;
export const MIN_ITERATIONS = 100_000; // a record asking for fewer is refused as tampered

export class WrongPassphraseError extends Error {
  constructor() {
    super("Wrong passphrase: the saved API key could not be decrypted (or the saved record is damaged).");
    this.name = "WrongPassphraseError";
  }
}

/**
 * @param {unknown} passphrase
 * @param {unknown} plaintext
 * @returns {Promise<KeyRecord>}
 */
export async function encryptSecret(passphrase, plaintext) {
  if (typeof passphrase !== "string" || passphrase.length === 0) throw new Error("a passphrase is required to save a key");
  if (typeof plaintext !== "string") throw new Error("the secret to encrypt must be a string");
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  /** @type {KeyHeader} */
  const header = { format: "orizuru.secret", version: 1, kdf: "PBKDF2-SHA256", iterations: PBKDF2_ITERATIONS,
    cipher: "AES-GCM", salt: toBase64(salt), iv: toBase64(iv) };
  const key = await deriveKey(passphrase, salt, PBKDF2_ITERATIONS);
  const ciphertext = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: headerBytes(header) }, key,
    new TextEncoder().encode(plaintext));
  return { ...header, ciphertext: toBase64(new Uint8Array(ciphertext)) };
}

/**
 * @param {unknown} passphrase
 * @param {unknown} record
 * @returns {Promise<string>}
 */
export async function decryptSecret(passphrase, record) {
  if (!isKeyRecord(record)) throw new Error("not an encrypted key record (expected format \"orizuru.secret\" version 1)");
  if (record.iterations < MIN_ITERATIONS) throw new WrongPassphraseError();
  const { ciphertext, ...header } = record;
  const key = await deriveKey(String(passphrase), fromBase64(record.salt), record.iterations);
  try {
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64(record.iv), additionalData: headerBytes(header) },
      key, fromBase64(ciphertext));
    return new TextDecoder().decode(plain);
  } catch {
    throw new WrongPassphraseError();
  }
}

/**
 * @param {unknown} value
 * @returns {value is KeyRecord}
 */
export function isKeyRecord(value) {
  if (value === null || typeof value !== "object") return false;
  const fields = /** @type {Record<string, unknown>} */ (value);
  return (
    fields.format === "orizuru.secret" && fields.version === 1 &&
    fields.kdf === "PBKDF2-SHA256" && fields.cipher === "AES-GCM" && Number.isInteger(fields.iterations) &&
    ["salt", "iv", "ciphertext"].every((k) => typeof fields[k] === "string")
  );
}

/**
 * @param {string} passphrase
 * @param {Uint8Array<ArrayBuffer>} salt
 * @param {number} iterations
 */
async function deriveKey(passphrase, salt, iterations) {
  const material = await crypto.subtle.importKey("raw", new TextEncoder().encode(passphrase), "PBKDF2", false, ["deriveKey"]);
  return crypto.subtle.deriveKey({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, material,
    { name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
}

/** @param {KeyHeader} header */
function headerBytes({ format, version, kdf, iterations, cipher, salt, iv }) {
  return new TextEncoder().encode(JSON.stringify([format, version, kdf, iterations, cipher, salt, iv]));
}

// ------------------------------------------------------------ the in-memory key ring

class KeyRing {
  /** @type {Map<string, string>} */
  #keys = new Map();
  /**
   * @param {string} id
   * @param {unknown} key
   */
  set(id, key) {
    if (typeof key !== "string" || !key) throw new Error("an API key must be a non-empty string");
    this.#keys.set(id, key);
  }
  /** @param {string} id */
  get(id) {
    return this.#keys.get(id);
  }
  /** @param {string} id */
  delete(id) {
    this.#keys.delete(id);
  }
  clear() {
    this.#keys.clear();
  }
  values() {
    return [...this.#keys.values()];
  }
}

export const sessionKeys = new KeyRing();

const REDACTED = "[API key removed]";

/** Every form a key can take in text we write: as is, and JSON-escaped. */
function secretForms() {
  /** @type {Set<string>} */
  const forms = new Set();
  for (const key of sessionKeys.values()) {
    if (key.length < 8) continue; // too short to be a key; replacing it would mangle ordinary text
    forms.add(key);
    forms.add(JSON.stringify(key).slice(1, -1));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** @param {unknown} text */
export function redactSecrets(text) {
  let out = String(text);
  for (const form of secretForms()) out = out.split(form).join(REDACTED);
  return out;
}

/** @param {unknown} text */
export function containsSecret(text) {
  const s = String(text);
  return secretForms().some((form) => s.includes(form));
}
