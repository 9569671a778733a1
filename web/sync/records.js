/**
 * Small records that change in place (settings, assistants, prompts, MCP server entries, and API keys when the
 * user syncs them: settings.js), merged last-writer-wins per record, deletes included.
 *
 *   await syncRecords({source, target, keys, state, remote}) -> {downloaded, uploaded}
 *
 * A record's file is `<kind>-HMAC(kind, id)`, sealed (crypto.js) as {id, clock, value}; `value` null is a delete
 * (a tombstone: it stays in the folder so every device learns of it). The clock is when the record changed (its
 * own `updated` where it has one, else when this device saw the change), and the later clock wins on every device,
 * a tie going to the larger sealed text, so all devices pick the same.
 *
 * What changed here is found by comparing each record with what was last synced (`state.ledger`: id -> {clock,
 * hash}, the hash an HMAC under the passphrase's key, so a key's hash is no clue to the key), so the modules that
 * keep these records need no sync code. A write is compare-and-swap; a lost race reads theirs and keeps the newer.
 */

import { SyncTamperedError } from "./crypto.js";
import { SyncConflictError, SyncTargetError } from "./target.js";

const RETRIES = 5;

/**
 * @typedef {object} RecordSource   one kind of record this browser keeps (settings.js)
 * @property {"s" | "k"} kind
 * @property {boolean} tombstones    a record gone here is deleted everywhere (false for keys: a key a tab has
 *                                   not been given yet is not a deleted one)
 * @property {boolean} everyTime     read the folder's records at every sync, seen or not (keys live in memory only)
 * @property {() => Promise<Map<string, unknown>>} records
 * @property {(id: string, value: unknown) => Promise<unknown>} apply   value null deletes; resolves to the record as
 *                                   records() will now give it (undefined: not taken, e.g. a field out of range)
 * @typedef {{id: string, clock: number, value: unknown}} SyncedRecord
 * @typedef {{clock: number, hash: string}} LedgerEntry
 */

/** @param {{clock: number, hash: string}} a @param {{clock: number, hash: string}} b */
const wins = (a, b) => a.clock > b.clock || (a.clock === b.clock && a.hash > b.hash);

/**
 * @param {{source: RecordSource, target: import("./target.js").SyncTarget, keys: import("./crypto.js").SyncKeys,
 *          state: import("./engine.js").SyncState, remote: Map<string, string>}} options
 */
export async function syncRecords({ source, target, keys, state, remote }) {
  const ledger = (state.ledger ??= {});
  const hashOf = (/** @type {unknown} */ value) => keys.nameOf("v", JSON.stringify(value ?? null));
  const key = (/** @type {string} */ id) => `${source.kind}:${id}`;
  let downloaded = 0;
  let uploaded = 0;

  /** Theirs, if newer than what this browser last synced: applied, and the ledger moves. @param {SyncedRecord} theirs */
  const take = async (theirs) => {
    const entry = { clock: theirs.clock, hash: await hashOf(theirs.value) };
    const mine = ledger[key(theirs.id)];
    if (mine && !wins(entry, mine) && !(source.everyTime && mine.clock === entry.clock)) return false;
    const stored = await source.apply(theirs.id, theirs.value);
    ledger[key(theirs.id)] = { clock: theirs.clock, hash: await hashOf(stored === undefined ? theirs.value : stored) };
    return true;
  };

  for (const [name, etag] of remote) {
    if (!name.startsWith(`${source.kind}-`) || (!source.everyTime && state.seen[name] === etag)) continue;
    const theirs = await fetchSynced(target, keys, name, source.kind);
    if (theirs && await take(theirs)) downloaded += 1;
    state.seen[name] = etag;
  }

  const local = await source.records();
  const ids = new Set([...local.keys(), ...Object.keys(ledger).filter((k) => k.startsWith(`${source.kind}:`))
    .map((k) => k.slice(2))]);
  for (const id of ids) {
    const value = local.has(id) ? local.get(id) : null;
    if (value === null && !source.tombstones) continue;
    const hash = await hashOf(value);
    const mine = ledger[key(id)];
    if (mine ? mine.hash === hash : value === null) continue;
    const updated = Number(/** @type {{updated?: unknown} | null} */ (value)?.updated) || 0;
    const clock = Math.max((mine?.clock ?? 0) + 1, updated || Date.now());
    if (!await put({ kind: source.kind, target, keys, state, remote }, { id, clock, value }, take)) continue;
    ledger[key(id)] = { clock, hash };
    uploaded += 1;
  }
  return { downloaded, uploaded };
}

/**
 * Overwrite the folder's record with a tombstone for each of a kind (keys, when the user stops syncing them): no
 * sealed key stays in the folder. Other devices see a delete, which for keys takes nothing from them.
 * @param {{kind: string, target: import("./target.js").SyncTarget, keys: import("./crypto.js").SyncKeys,
 *          state: import("./engine.js").SyncState}} options
 */
export async function eraseRecords({ kind, target, keys, state }) {
  const remote = new Map((await target.list()).map((e) => [e.name, e.etag]));
  for (const name of remote.keys()) {
    if (!name.startsWith(`${kind}-`)) continue;
    const theirs = await fetchSynced(target, keys, name, kind);
    if (!theirs || theirs.value === null) continue;
    await put({ kind, target, keys, state, remote }, { id: theirs.id, clock: Math.max(Date.now(), theirs.clock + 1),
      value: null }, async () => false);
  }
  for (const id of Object.keys(state.ledger ?? {})) if (id.startsWith(`${kind}:`)) delete state.ledger?.[id];
}

/**
 * One record written compare-and-swap. When another device wrote it since, theirs is read: if it wins, it is taken
 * (`take`) and ours is not written; otherwise ours goes over theirs.
 * @param {{kind: string, target: import("./target.js").SyncTarget, keys: import("./crypto.js").SyncKeys,
 *          state: import("./engine.js").SyncState, remote: Map<string, string>}} where
 * @param {SyncedRecord} record @param {(theirs: SyncedRecord) => Promise<boolean>} take
 * @returns {Promise<boolean>} whether ours was written
 */
async function put(where, record, take) {
  const name = await where.keys.nameOf(where.kind, record.id);
  return writeSealed(where, name, record, (opened) => checked(opened, name), take);
}

/**
 * A sealed value written under `name` only if the folder's copy is the one last seen (compare-and-swap, retried):
 * when another device wrote it since, theirs is read back and opened (`open`); `take(theirs)` says whether theirs
 * wins, then it is kept and ours is not written; otherwise ours goes over theirs. Records and conversations alike.
 * @template T
 * @param {{target: import("./target.js").SyncTarget, keys: import("./crypto.js").SyncKeys,
 *          state: import("./engine.js").SyncState, remote: Map<string, string>}} where
 * @param {string} name @param {T} value @param {(opened: unknown) => T} open
 * @param {(theirs: T) => Promise<boolean>} take
 * @returns {Promise<boolean>} whether ours was written
 */
export async function writeSealed({ target, keys, state, remote }, name, value, open, take) {
  let ifMatch = remote.has(name) ? (state.seen[name] ?? remote.get(name) ?? null) : null;
  for (let attempt = 0; attempt < RETRIES; attempt += 1) {
    try {
      const etag = await target.write(name, await keys.sealRecord(name, value), ifMatch);
      if (etag) state.seen[name] = etag;
      return true;
    } catch (err) {
      if (!(err instanceof SyncConflictError)) throw err;
      const found = await target.read(name);
      if (!found) {
        ifMatch = null;
        continue;
      }
      const theirs = open(await keys.openRecord(name, found.bytes));
      state.seen[name] = found.etag;
      if (await take(theirs)) return false;
      ifMatch = found.etag;
    }
  }
  throw new SyncTargetError("sync.err.busy");
}

/**
 * A record of the folder, opened: null when it is gone since the listing. One sealed under another name, or whose id
 * is not the one its name was made from, or not of the record's shape, is refused (SyncTamperedError).
 * @param {import("./target.js").SyncTarget} target @param {import("./crypto.js").SyncKeys} keys
 * @param {string} name @param {string} kind
 */
async function fetchSynced(target, keys, name, kind) {
  const found = await target.read(name);
  if (!found) return null;
  const record = checked(await keys.openRecord(name, found.bytes), name);
  if (await keys.nameOf(kind, record.id) !== name) throw new SyncTamperedError(name);
  return record;
}

/** @param {unknown} value @param {string} name @returns {SyncedRecord} */
function checked(value, name) {
  const record = /** @type {Partial<SyncedRecord> | null} */ (value);
  if (typeof record?.id !== "string" || !Number.isFinite(record.clock) || !("value" in record)) {
    throw new SyncTamperedError(name);
  }
  return /** @type {SyncedRecord} */ (record);
}
