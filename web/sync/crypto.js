/**
 * The sync passphrase's keys, and sealing records with them. The storage sees only opaque names and ciphertext.
 *
 * - The passphrase is stretched with PBKDF2-SHA-256 (as saved API keys are: store/keys.js; the one strong KDF
 *   WebCrypto has) over a random salt kept in the folder's header (engine.js), into 512 bits: an AES-GCM
 *   key that seals records and an HMAC key that names them. Both are non-extractable.
 * - A record's file name is `<kind>-` and the HMAC of its kind and id (nothing of the id or title shows), and its
 *   bytes are a fresh 12-byte IV then AES-GCM of its JSON with the file name as additional data: a record the
 *   server moves under another name, or changes by one bit, does not open (SyncTamperedError).
 */

import { PBKDF2_ITERATIONS } from "../store/keys.js";
import { SyncError } from "./target.js";

export const KDF = Object.freeze({ name: "PBKDF2", hash: "SHA-256", iterations: PBKDF2_ITERATIONS });
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A record that does not open with the passphrase's key: changed, moved, or sealed with another passphrase. */
export class SyncTamperedError extends SyncError {
  /** @param {string} name */
  constructor(name) {
    super("sync.err.tampered", { name });
    this.name = "SyncTamperedError";
  }
}

/** @param {ArrayBuffer} buffer */
function hex(buffer) {
  return [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export class SyncKeys {
  /** @param {CryptoKey} seal @param {CryptoKey} names */
  constructor(seal, names) {
    this.seal = seal;
    this.names = names;
  }

  /**
   * @param {string} passphrase
   * @param {Uint8Array} salt
   * @param {number} [iterations]
   */
  static async derive(passphrase, salt, iterations = KDF.iterations) {
    const base = await crypto.subtle.importKey("raw", encoder.encode(passphrase), "PBKDF2", false, ["deriveBits"]);
    const bits = new Uint8Array(await crypto.subtle.deriveBits(
      { name: "PBKDF2", hash: KDF.hash, salt: /** @type {BufferSource} */ (salt), iterations }, base, 512));
    const seal = await crypto.subtle.importKey("raw", bits.slice(0, 32), "AES-GCM", false, ["encrypt", "decrypt"]);
    const names = await crypto.subtle.importKey("raw", bits.slice(32), { name: "HMAC", hash: "SHA-256" }, false,
      ["sign"]);
    bits.fill(0);
    return new SyncKeys(seal, names);
  }

  /** The file name of a record: its kind, then an HMAC of kind and id. @param {string} kind @param {string} id */
  async nameOf(kind, id) {
    const mac = await crypto.subtle.sign("HMAC", this.names, encoder.encode(`${kind}\n${id}`));
    return `${kind}-${hex(mac)}`;
  }

  /** @param {string} name @param {unknown} value @returns {Promise<Uint8Array>} */
  async sealRecord(name, value) {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(name) }, this.seal,
      encoder.encode(JSON.stringify(value)));
    const out = new Uint8Array(12 + sealed.byteLength);
    out.set(iv);
    out.set(new Uint8Array(sealed), 12);
    return out;
  }

  /** @param {string} name @param {Uint8Array} bytes @returns {Promise<unknown>} */
  async openRecord(name, bytes) {
    try {
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: encoder.encode(name) }, this.seal, bytes.slice(12));
      return JSON.parse(decoder.decode(plain));
    } catch {
      throw new SyncTamperedError(name);
    }
  }
}
