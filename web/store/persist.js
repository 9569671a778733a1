/**
 * Ask the browser once to keep Orizuru's storage when space runs low (navigator.storage.persist()).
 *
 *   requestPersistence(db) -> Promise<bool>   true when storage is (now) persistent
 *
 * Asked at most once per browser profile: the answer is remembered in the "meta" store, because
 * some browsers show a prompt and asking on every visit would nag.
 */

/**
 * @param {import("idb").IDBPDatabase} db
 * @returns {Promise<boolean>}
 */
export async function requestPersistence(db) {
  const storage = navigator.storage;
  if (!storage?.persist) return false;
  if (await storage.persisted()) return true;
  if (await db.get("meta", "persist_asked")) return false;
  await db.put("meta", Date.now(), "persist_asked");
  return storage.persist();
}
