// The worker's OAuth vault (pycore/mcp/oauth_vault.py, SECURITY.md T-A11): tokens and client registrations
// outlive a reload here, and only here; the page's thread never receives them. web/worker.js registers this
// module as `orizuru_oauth_vault` for pycore/mcp/oauth_idb.py.
//
// Each record is encrypted with AES-GCM under one key the worker generates with `extractable: false` and keeps
// in IndexedDB (a CryptoKey survives there as itself), so no script can read the key's bytes: no export, log or
// copy made by script carries a usable token. The record's name is the additional data, so a record copied
// under another name does not decrypt. A record that does not decrypt (the key was deleted, or it was tampered
// with) reads as absent: the user is asked to sign in again.
//
//   read(name) -> Promise<string | undefined>     write(name, text) -> Promise     remove(name) -> Promise
//
// DPoP (RFC 9449, SECURITY.md T-A12): one ECDSA P-256 key pair per server, generated with a non-extractable
// private half and kept in the same IndexedDB, so a token bound to it is useless to whoever copies it out of the
// worker: only this worker can sign the proof each request needs.
//
//   dpopPublicJwk(name) -> Promise<string>        the public key as JSON (kty, crv, x, y); made on first use
//   dpopSign(name, text) -> Promise<string>       ES256 signature (r||s) of the ASCII text, base64url
//   dpopForget(name) -> Promise

const DB_NAME = "orizuru-oauth";
const KEYS = "keys";
const RECORDS = "records";
const KEY_ID = "aes-gcm";
const encoder = new TextEncoder();

/** @typedef {{ iv: Uint8Array<ArrayBuffer>, data: ArrayBuffer }} SealedRecord */

/** @type {Promise<{ db: IDBDatabase, key: CryptoKey }> | null} */
let opened = null;

/**
 * @template T
 * @param {IDBRequest<T>} req
 * @returns {Promise<T>}
 */
function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/**
 * @param {IDBTransaction} tx
 * @returns {Promise<void>}
 */
function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = tx.onabort = () => reject(tx.error ?? new Error("the OAuth vault's transaction was aborted"));
  });
}

async function open() {
  const req = indexedDB.open(DB_NAME, 1);
  req.onupgradeneeded = () => {
    req.result.createObjectStore(KEYS);
    req.result.createObjectStore(RECORDS);
  };
  const db = await request(req);
  // A candidate key first (an await inside the transaction would end it); the transaction then keeps the key
  // already saved, by this worker before or by another tab's, so all of them encrypt under one key.
  const candidate = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
  const tx = db.transaction(KEYS, "readwrite");
  const keys = tx.objectStore(KEYS);
  let key = /** @type {CryptoKey | undefined} */ (await request(keys.get(KEY_ID)));
  if (!key) {
    keys.add(candidate, KEY_ID);
    key = candidate;
  }
  await done(tx);
  return { db, key };
}

function vault() {
  opened ??= open().catch((err) => {
    opened = null; // tried again on the next use
    throw err;
  });
  return opened;
}

/**
 * @param {string} name
 * @returns {Promise<string | undefined>}
 */
export async function read(name) {
  const { db, key } = await vault();
  const record = /** @type {SealedRecord | undefined} */ (await request(db.transaction(RECORDS).objectStore(RECORDS).get(name)));
  if (!record) return undefined;
  try {
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: record.iv, additionalData: encoder.encode(name) },
                                              key, record.data);
    return new TextDecoder().decode(plain);
  } catch {
    return undefined;
  }
}

/**
 * @param {string} name
 * @param {string} text
 */
export async function write(name, text) {
  const { db, key } = await vault();
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(name) }, key,
                                           encoder.encode(text));
  const tx = db.transaction(RECORDS, "readwrite");
  tx.objectStore(RECORDS).put({ iv, data }, name);
  await done(tx);
}

/** @param {string} name */
export async function remove(name) {
  const { db } = await vault();
  const tx = db.transaction(RECORDS, "readwrite");
  tx.objectStore(RECORDS).delete(name);
  await done(tx);
}

/** @param {string} name */
const dpopId = (name) => `dpop ${name}`;
/** @type {Map<string, Promise<CryptoKeyPair>>} name -> the server's key pair */
const dpopPairs = new Map();

/**
 * @param {string} name
 * @returns {Promise<CryptoKeyPair>}
 */
async function openDpopPair(name) {
  const { db } = await vault();
  // As for the vault's key: a candidate first, then one transaction keeps whichever pair was saved first.
  const candidate = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign", "verify"]);
  const tx = db.transaction(KEYS, "readwrite");
  const keys = tx.objectStore(KEYS);
  let pair = /** @type {CryptoKeyPair | undefined} */ (await request(keys.get(dpopId(name))));
  if (!pair) {
    pair = { privateKey: candidate.privateKey, publicKey: candidate.publicKey };
    keys.add(pair, dpopId(name));
  }
  await done(tx);
  return pair;
}

/**
 * @param {string} name
 * @returns {Promise<CryptoKeyPair>}
 */
function dpopPair(name) {
  let pair = dpopPairs.get(name);
  if (!pair) {
    pair = openDpopPair(name).catch((err) => {
      dpopPairs.delete(name);
      throw err;
    });
    dpopPairs.set(name, pair);
  }
  return pair;
}

/** @param {ArrayBuffer} bytes */
function base64url(bytes) {
  let text = "";
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * @param {string} name
 * @returns {Promise<string>}
 */
export async function dpopPublicJwk(name) {
  const { publicKey } = await dpopPair(name);
  const { kty, crv, x, y } = await crypto.subtle.exportKey("jwk", publicKey);
  return JSON.stringify({ kty, crv, x, y });
}

/**
 * @param {string} name
 * @param {string} text
 * @returns {Promise<string>}
 */
export async function dpopSign(name, text) {
  const { privateKey } = await dpopPair(name);
  return base64url(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, privateKey, encoder.encode(text)));
}

/** @param {string} name */
export async function dpopForget(name) {
  const { db } = await vault();
  dpopPairs.delete(name);
  const tx = db.transaction(KEYS, "readwrite");
  tx.objectStore(KEYS).delete(dpopId(name));
  await done(tx);
}
