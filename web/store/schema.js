/**
 * The IndexedDB schema and how a connection is opened, upgraded and given up.
 *
 *   DB_NAME = "orizuru"; SCHEMA_VERSION = MIGRATIONS.length
 *   openDatabase({name, onError}) -> Promise<IDBPDatabase>   (an idb-wrapped connection)
 *
 * Object stores (version 3):
 *   conversations  keyPath "id"   {id, title, created, updated, current_leaf, deleted_at?, assistant_id?,
 *                                 overrides?, pinned?, folder?} (overrides: the chat's own changes to its
 *                                 assistant's settings; folder: a name, or null)
 *   messages       keyPath "id"   StoredMessage (see transcripts.js); index "by_conversation"
 *   deltas         autoIncrement  {message_id, conversation_id, event} one record per streamed
 *                                 event of a reply still being written; index "by_message"
 *   focus          keyPath "conversation_id"  {conversation_id, state}  (opaque focus-memory JSON)
 *   profiles       keyPath "id"   see profiles.js (encrypted key records only)
 *   assistants     keyPath "id"   see assistants.js (the built-ins as the user edited them, and theirs)
 *   prompts        keyPath "id"   see prompts.js (saved prompts with {{variables}})
 *   meta           out-of-line keys: small flags such as "persist_asked"
 *
 * Migrations run in order inside the single upgrade transaction IndexedDB gives us, so an upgrade
 * killed half-way leaves the database at its old version with its old data (T-S7).
 *
 * Two tabs and an upgrade (T-S4): a tab whose connection is in the way of a newer schema closes it
 * at once ("blocking") and reports {kind: "versionchange"} so the page can ask for a reload; a tab
 * that wants to upgrade while an old connection does not let go reports {kind: "blocked"} and waits.
 */

import { openDB } from "idb";

export const DB_NAME = "orizuru";
export const ROLES = Object.freeze(["user", "assistant"]);
export const STATUSES = Object.freeze(["complete", "streaming", "interrupted", "error"]);

/** @typedef {import("idb").IDBPDatabase} Database */
/** @typedef {(db: Database) => void} Migration */
/** @typedef {{kind: "blocked" | "versionchange" | "terminated", message: string}} SchemaTrouble */

/** One function per schema version, applied in order; never edit a published one, append. */
export const MIGRATIONS = Object.freeze(/** @type {Migration[]} */ ([
  // 1: transcripts
  (db) => {
    db.createObjectStore("conversations", { keyPath: "id" });
    const messages = db.createObjectStore("messages", { keyPath: "id" });
    messages.createIndex("by_conversation", "conversation_id");
    const deltas = db.createObjectStore("deltas", { autoIncrement: true });
    deltas.createIndex("by_message", "message_id");
  },
  // 2: per-conversation focus state, saved profiles, flags
  (db) => {
    db.createObjectStore("focus", { keyPath: "conversation_id" });
    db.createObjectStore("profiles", { keyPath: "id" });
    db.createObjectStore("meta");
  },
  // 3: assistants (store/assistants.js) and the prompt library (store/prompts.js)
  (db) => {
    db.createObjectStore("assistants", { keyPath: "id" });
    db.createObjectStore("prompts", { keyPath: "id" });
  },
]));

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Open (creating or upgrading) the database. `migrations` exists so a test can open the database
 * as an older build would; the app always uses the default.
 */
/**
 * @param {{name?: string, onError?: (trouble: SchemaTrouble) => void, migrations?: readonly Migration[]}} [options]
 * @returns {Promise<Database>}
 */
export async function openDatabase({ name = DB_NAME, onError = () => {}, migrations = MIGRATIONS } = {}) {
  /** @type {Database | null} */
  let db = null; // blocking() below reads it, and openDB is handed blocking() before db is assigned
  db = await openDB(name, migrations.length, {
    upgrade(database, oldVersion) {
      for (let v = oldVersion; v < migrations.length; v++) migrations[v](database);
    },
    blocked(currentVersion, blockedVersion) {
      onError({
        kind: "blocked",
        message: `Another Orizuru tab still uses storage version ${currentVersion}; close it (or reload it) ` +
          `so this one can upgrade to version ${blockedVersion}.`,
      });
    },
    blocking() {
      db?.close();
      onError({
        kind: "versionchange",
        message: "Orizuru was updated in another tab, so this tab let go of its storage. Reload this tab.",
      });
    },
    terminated() {
      onError({ kind: "terminated", message: "The browser closed this tab's storage unexpectedly. Reload the tab." });
    },
  });
  return db;
}

/** True when `err` (a DOMException or a transaction's error) says the storage quota is full. */
/** @param {unknown} err */
export function isQuotaError(err) {
  if (!(err instanceof Object)) return false;
  const { name, inner } = /** @type {{name?: unknown, inner?: {name?: unknown}}} */ (err);
  return name === "QuotaExceededError" || inner?.name === "QuotaExceededError";
}
