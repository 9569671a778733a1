/**
 * Sync: this browser's conversations and a folder of sealed records (target.js) merge both ways, losing nothing.
 *
 *   await syncOnce({store, target, keys, state, sources, onProgress}) -> {downloaded, uploaded, settings: {downloaded, uploaded}}
 *   await openFolder(target, passphrase) -> SyncKeys      creates the folder's header on the first device
 *
 * Files in the folder (names and sealing: crypto.js):
 *   header.json  plaintext {format, kdf: {name, hash, iterations}, salt, check}: `check` is a sealed known value,
 *                so a wrong passphrase is told at once (SyncPassphraseError) and nothing is read or written
 *   b-…          an attachment's bytes, by content hash: written once, whatever refers to it
 *   c-…          a conversation's record (title, folder, pinned, current leaf, deleted_at, assistant): the newer
 *                wins (conversationClock, then the content itself, so every device picks the same): renames,
 *                pins and deletes converge; a write is compare-and-swap, and a lost race reads, merges, retries
 *   m-…          a message: written once. Messages never change once settled (an edit or a regeneration is a
 *                new message), so two devices that wrote to one conversation offline both keep what they wrote:
 *                their messages are siblings (branches), and the newer conversation record names the leaf shown.
 *   s-…, k-…     settings, assistants, prompts and MCP server entries; API keys when the user syncs them: small
 *                records merged last-writer-wins, deletes included (records.js, settings.js)
 * A reply still streaming is not sent until it settles. The state (which versions this browser has applied or
 * sent) lives in the store, so a sync killed half-way resumes where it stopped.
 */

import { MIN_ITERATIONS } from "../store/keys.js";
import { fromBase64, toBase64 } from "../files/base64.js";
import { KDF, SyncKeys, SyncTamperedError } from "./crypto.js";
import { SYNC_NAME, SyncConflictError, SyncError, SyncTargetError } from "./target.js";
import { syncRecords, writeSealed } from "./records.js";

const HEADER = "header.json";
const FORMAT = "orizuru.sync";
const CHECK = "orizuru sync check";
const CONCURRENCY = 8;
const BATCH = 500;
const encoder = new TextEncoder();

/** The passphrase does not open this folder's records. */
export class SyncPassphraseError extends SyncError {
  constructor() {
    super("sync.err.passphrase");
    this.name = "SyncPassphraseError";
  }
}

/**
 * @typedef {{seen: Record<string, string>, sent: Record<string, number>,
 *            ledger?: Record<string, import("./records.js").LedgerEntry>}} SyncState
 *   seen: file name -> the etag this browser applied; sent: file name -> the clock it sent (1 for write-once files);
 *   ledger: "<kind>:<id>" -> the clock and hash of a small record as last synced (records.js)
 * @typedef {{id: string, updated?: number, changed?: number, deleted_at?: number} & Record<string, unknown>} SyncedConversation
 * @typedef {{id: string, conversation_id: string, parts?: unknown[]} & Record<string, unknown>} SyncedMessage
 * @typedef {object} SyncStore   what sync needs of the transcript store (store/transcripts.js)
 * @property {() => Promise<{conversations: SyncedConversation[], messages: SyncedMessage[]}>} syncRecords
 * @property {(c: SyncedConversation, isNewer: (a: SyncedConversation, b: SyncedConversation) => boolean) => Promise<boolean>} applySyncedConversation
 * @property {(messages: SyncedMessage[]) => Promise<number>} applySyncedMessages
 * @property {{read: (ref: string) => Promise<Uint8Array | null>, write: (ref: string, bytes: Uint8Array<ArrayBuffer>) => Promise<void>}} blobs
 * @property {(message: SyncedMessage) => string[]} blobRefsOf
 */

/** When a conversation's record last changed on its device. @param {SyncedConversation} c */
export function conversationClock(c) {
  return Math.max(Number(c.changed) || 0, Number(c.updated) || 0, Number(c.deleted_at) || 0);
}

/** Whether `a` should replace `b`: the later clock, and on a tie the larger content, the same on every device. */
export function isNewer(/** @type {SyncedConversation} */ a, /** @type {SyncedConversation} */ b) {
  const ca = conversationClock(a);
  const cb = conversationClock(b);
  if (ca !== cb) return ca > cb;
  return JSON.stringify(a) > JSON.stringify(b);
}

/**
 * The folder's keys from the passphrase: the header is read (or, in an empty folder, written) and its check opened.
 * @param {import("./target.js").SyncTarget} target @param {string} passphrase
 */
export async function openFolder(target, passphrase) {
  if (!passphrase) throw new SyncPassphraseError();
  let found = await target.read(HEADER);
  if (!found) {
    const salt = crypto.getRandomValues(new Uint8Array(16));
    const keys = await SyncKeys.derive(passphrase, salt);
    const header = { format: FORMAT, version: 1, kdf: KDF, salt: toBase64(salt),
      check: toBase64(await keys.sealRecord(HEADER, CHECK)) };
    try {
      await target.write(HEADER, encoder.encode(JSON.stringify(header)), null);
      return keys;
    } catch (err) {
      if (!(err instanceof SyncConflictError)) throw err;
      found = await target.read(HEADER); // another device made the folder first: use its header
      if (!found) throw err;
    }
  }
  return keysFromHeader(found.bytes, passphrase);
}

/** @param {Uint8Array} bytes @param {string} passphrase */
async function keysFromHeader(bytes, passphrase) {
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new SyncTargetError("sync.err.notOurs");
  }
  const iterations = Number(header?.kdf?.iterations);
  if (header?.format !== FORMAT || header?.kdf?.name !== KDF.name || header?.kdf?.hash !== KDF.hash
      || !(iterations >= MIN_ITERATIONS) || typeof header.salt !== "string" || typeof header.check !== "string") {
    throw new SyncTargetError("sync.err.header");
  }
  const keys = await SyncKeys.derive(passphrase, fromBase64(header.salt), iterations);
  try {
    if (await keys.openRecord(HEADER, fromBase64(header.check)) !== CHECK) throw new SyncPassphraseError();
  } catch {
    throw new SyncPassphraseError();
  }
  return keys;
}

/**
 * One sync, both ways. `state` is changed in place (the caller stores it, also after a failure: what was done stays done).
 * `sources`: the small records (settings.js) merged after the conversations.
 * @param {{store: SyncStore, target: import("./target.js").SyncTarget, keys: SyncKeys, state: SyncState,
 *          sources?: import("./records.js").RecordSource[], onProgress?: (done: number, total: number) => void}} options
 */
export async function syncOnce({ store, target, keys, state, sources = [], onProgress = () => {} }) {
  const remote = new Map((await target.list()).map((e) => [e.name, e.etag]));
  const incoming = [...remote].filter(([name, etag]) => /^[cmb]-/.test(name) && SYNC_NAME.test(name)
    && state.seen[name] !== etag);
  const local = await store.syncRecords();
  const total = incoming.length + local.conversations.length + local.messages.length;
  let done = 0;
  const step = () => onProgress(++done, total);
  const downloaded = await downloadAll({ store, target, keys, state, incoming, step });
  let uploaded = 0;
  await pool(local.conversations, async (conversation) => {
    if (await uploadConversation(store, target, keys, state, remote, conversation)) uploaded += 1;
    step();
  });
  await pool(local.messages, async (message) => {
    if (await uploadMessage(store, target, keys, state, remote, message)) uploaded += 1;
    step();
  });
  const settings = { downloaded: 0, uploaded: 0 };
  for (const source of sources) {
    const records = await syncRecords({ source, target, keys, state, remote });
    settings.downloaded += records.downloaded;
    settings.uploaded += records.uploaded;
  }
  onProgress(total, total);
  return { downloaded, uploaded, settings };
}

/**
 * `fn` over `items`, CONCURRENCY at a time (a folder answers several requests at once; one at a time is slow).
 * @template T @param {T[]} items @param {(item: T) => Promise<void>} fn
 */
async function pool(items, fn) {
  let next = 0;
  const work = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, work));
}

/**
 * What the folder has and this browser has not applied: attachments first, then conversations, then messages (what
 * a record refers to is there before it); messages are applied in batches, one transaction each.
 * @param {{store: SyncStore, target: import("./target.js").SyncTarget, keys: SyncKeys, state: SyncState,
 *          incoming: [string, string][], step: () => void}} options
 */
async function downloadAll({ store, target, keys, state, incoming, step }) {
  const of = (/** @type {string} */ kind) => incoming.filter(([name]) => name.startsWith(`${kind}-`));
  let downloaded = 0;
  await pool(of("b"), async ([name, etag]) => {
    const value = await fetchRecord(target, keys, name, "b");
    if (value && typeof value.ref === "string" && typeof value.data === "string") {
      await store.blobs.write(value.ref, fromBase64(value.data));
    }
    state.seen[name] = etag;
    step();
  });
  await pool(of("c"), async ([name, etag]) => {
    const value = await fetchRecord(target, keys, name, "c");
    if (value && await store.applySyncedConversation(/** @type {SyncedConversation} */ (value), isNewer)) downloaded += 1;
    state.seen[name] = etag;
    step();
  });
  const messages = of("m");
  for (let i = 0; i < messages.length; i += BATCH) {
    const batch = messages.slice(i, i + BATCH);
    /** @type {SyncedMessage[]} */
    const values = [];
    await pool(batch, async ([name]) => {
      const value = await fetchRecord(target, keys, name, "m");
      if (value) values.push(/** @type {SyncedMessage} */ (value));
    });
    downloaded += await store.applySyncedMessages(values);
    for (const [name, etag] of batch) {
      state.seen[name] = etag;
      step();
    }
  }
  return downloaded;
}

/**
 * One record, opened: null when it is gone since the listing. A record sealed for another name does not open
 * (SyncTamperedError), nor one whose id is not the one its name was made from.
 * @param {import("./target.js").SyncTarget} target @param {SyncKeys} keys @param {string} name @param {string} kind
 */
async function fetchRecord(target, keys, name, kind) {
  const found = await target.read(name);
  if (!found) return null;
  const value = /** @type {Record<string, unknown>} */ (await keys.openRecord(name, found.bytes));
  const id = kind === "b" ? value.ref : value.id;
  if (await keys.nameOf(kind, String(id)) !== name) throw new SyncTamperedError(name);
  return value;
}

/**
 * @param {SyncStore} store @param {import("./target.js").SyncTarget} target @param {SyncKeys} keys
 * @param {SyncState} state @param {Map<string, string>} remote @param {SyncedConversation} conversation
 */
async function uploadConversation(store, target, keys, state, remote, conversation) {
  const name = await keys.nameOf("c", conversation.id);
  const clock = conversationClock(conversation);
  if (state.sent[name] === clock) return false;
  // Another device wrote it since: take theirs where it is newer, and write ours over theirs only if ours is.
  const written = await writeSealed({ target, keys, state, remote }, name, conversation,
    (opened) => /** @type {SyncedConversation} */ (opened), async (theirs) => {
      if (isNewer(conversation, theirs)) return false;
      await store.applySyncedConversation(theirs, isNewer);
      return true;
    });
  state.sent[name] = clock;
  return written;
}

/**
 * @param {SyncStore} store @param {import("./target.js").SyncTarget} target @param {SyncKeys} keys
 * @param {SyncState} state @param {Map<string, string>} remote @param {SyncedMessage} message
 */
async function uploadMessage(store, target, keys, state, remote, message) {
  const name = await keys.nameOf("m", message.id);
  if (state.sent[name] || remote.has(name)) {
    state.sent[name] = 1;
    return false;
  }
  for (const ref of store.blobRefsOf(message)) {
    const blobName = await keys.nameOf("b", ref);
    if (state.sent[blobName] || remote.has(blobName)) continue;
    const bytes = await store.blobs.read(ref);
    if (bytes) await writeOnce(target, blobName, await keys.sealRecord(blobName, { ref, data: toBase64(bytes) }));
    state.sent[blobName] = 1;
  }
  await writeOnce(target, name, await keys.sealRecord(name, message));
  state.sent[name] = 1;
  return true;
}

/** A write-once file: if it is there already, another device wrote the same record. */
async function writeOnce(/** @type {import("./target.js").SyncTarget} */ target, /** @type {string} */ name,
  /** @type {Uint8Array} */ bytes) {
  try {
    await target.write(name, bytes, null);
  } catch (err) {
    if (!(err instanceof SyncConflictError)) throw err;
  }
}
