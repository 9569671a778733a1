/**
 * A sync that is on, kept across reloads in the store's IndexedDB ("meta" records "sync" and "sync-state"), so the
 * passphrase is typed once per browser: the keys are kept as non-extractable CryptoKeys (usable by this origin,
 * never readable as bytes), the WebDAV password only sealed with them, a local folder as its handle (the browser
 * asks again for access after a restart). Turning sync off forgets all of it.
 *
 *   await loadSaved(db) -> SavedSync | null
 *   await saveSaved(db, SavedSync)
 *   await loadState(db) -> SyncState;  await saveState(db, state)
 *   await forgetSaved(db)
 */

import { SyncKeys } from "./crypto.js";

const CONFIG = "sync";
const STATE = "sync-state";
const PASSWORD = "webdav-password";

/**
 * @typedef {({kind: "webdav", url: string, user: string, password: string, keys: SyncKeys, relay?: string | null}
 *          | {kind: "folder", handle: FileSystemDirectoryHandle, keys: SyncKeys}) & {apiKeys?: boolean}} SavedSync
 *   apiKeys: this browser syncs API keys too (off unless the user turns it on: settings.js keysSource)
 *   relay: the name of the relay's bridge to the folder (--allow-webdav NAME=URL), for a server without CORS
 */
/** @typedef {{get: (store: string, key: string) => Promise<any>, put: (store: string, value: unknown, key: string) => Promise<unknown>, delete: (store: string, key: string) => Promise<void>}} MetaDb */

/** @param {MetaDb} db @returns {Promise<SavedSync | null>} */
export async function loadSaved(db) {
  const saved = await db.get("meta", CONFIG);
  if (!saved?.keys?.seal || !saved?.keys?.names) return null;
  const keys = new SyncKeys(saved.keys.seal, saved.keys.names);
  const apiKeys = saved.apiKeys === true;
  if (saved.kind === "folder") return saved.handle ? { kind: "folder", handle: saved.handle, keys, apiKeys } : null;
  const password = saved.password ? String(await keys.openRecord(PASSWORD, saved.password)) : "";
  const relay = typeof saved.relay === "string" ? saved.relay : null;
  return { kind: "webdav", url: String(saved.url), user: String(saved.user ?? ""), password, keys, apiKeys, relay };
}

/** @param {MetaDb} db @param {SavedSync} sync */
export async function saveSaved(db, sync) {
  const keys = { seal: sync.keys.seal, names: sync.keys.names };
  const apiKeys = sync.apiKeys === true;
  if (sync.kind === "folder") {
    return void await db.put("meta", { kind: "folder", handle: sync.handle, keys, apiKeys }, CONFIG);
  }
  const sealed = sync.password ? await sync.keys.sealRecord(PASSWORD, sync.password) : null;
  await db.put("meta", { kind: "webdav", url: sync.url, user: sync.user, password: sealed, keys, apiKeys,
                         relay: sync.relay ?? null }, CONFIG);
}

/** @param {MetaDb} db @returns {Promise<import("./engine.js").SyncState>} */
export async function loadState(db) {
  const state = await db.get("meta", STATE);
  return { seen: { ...state?.seen }, sent: { ...state?.sent }, ledger: { ...state?.ledger } };
}

/** @param {MetaDb} db @param {import("./engine.js").SyncState} state */
export async function saveState(db, state) {
  await db.put("meta", state, STATE);
}

/** @param {MetaDb} db */
export async function forgetSaved(db) {
  await db.delete("meta", CONFIG);
  await db.delete("meta", STATE);
}
