/**
 * Orizuru's browser storage: transcripts, saved profiles and keys, export/import (IndexedDB via idb).
 *
 *   const store = await openStore({onError, name?})
 *       onError({kind, message}) is how storage problems reach the user; kind is one of
 *       "quota" (storage full: data kept in memory, still exportable), "storage" (another write
 *       failure), "blocked" (an old tab holds the database during an upgrade), "versionchange"
 *       (a newer tab upgraded the database: reload), "terminated".
 *       Opening also asks once for persistent storage and purges conversations deleted over an hour ago.
 *
 * Modules (each documents its API in its header):
 *   transcripts.js  Store: conversations, messages, replies, search, delete/undo, focus, subscribe
 *   replies.js      ReplyWriter: one streamed reply, delta by delta
 *   reduce.js       stream events -> parts (the reply shown, stored and recovered)
 *   repair.js       tree shapes older builds stored, repaired when a conversation is loaded
 *   tree.js         the message tree: ConversationTree, branchPath
 *   search.js       SearchIndex: every message's text in memory, for search
 *   exchange.js     export JSON/Markdown, import JSON (validated first, never overwrites)
 *   keys.js         in-memory keys, passphrase encryption (PBKDF2 + AES-GCM), redaction
 *   profiles.js     saved provider profiles;  assistants.js  assistants (presets a chat starts from)
 *   prompts.js      the prompt library (saved prompts with {{variables}})
 *   schema.js       database schema and upgrades
 *   locks.js        Web Locks; channel.js  BroadcastChannel between tabs
 *   persist.js      navigator.storage.persist(), asked once
 *   pwa.js          registerServiceWorker()
 */

import { requestPersistence } from "./persist.js";
import { DB_NAME, openDatabase } from "./schema.js";
import { Store } from "./transcripts.js";

/**
 * @param {{onError?: (trouble: {kind: string, message: string}) => void, name?: string}} [options]
 *   onError: a write that failed (transcripts.js StoreTrouble) or the database in the way (schema.js SchemaTrouble)
 */
export async function openStore({ onError = () => {}, name = DB_NAME } = {}) {
  const db = await openDatabase({ name, onError });
  const store = new Store(db, { name, onError });
  requestPersistence(db).catch(() => {}); // best effort; the answer is the browser's
  store.purgeDeleted().catch(() => {});
  return store;
}

export { Store } from "./transcripts.js";
export { ReplyWriter } from "./replies.js";
export { ReplyReducer, replayEvents, textOfParts } from "./reduce.js";
export { ConversationTree, branchPath } from "./tree.js";
export { ImportError, validateExport, EXPORT_FORMAT, EXPORT_VERSION } from "./exchange.js";
export {
  encryptSecret, decryptSecret, isKeyRecord, sessionKeys, redactSecrets, containsSecret, WrongPassphraseError,
  PBKDF2_ITERATIONS,
} from "./keys.js";
export { Profiles, VENDORS } from "./profiles.js";
export { Assistants, BUILTIN_ASSISTANTS, effectiveSettings, normalizeAssistant } from "./assistants.js";
export { Prompts, fillPrompt, variablesOf } from "./prompts.js";
export { DB_NAME, SCHEMA_VERSION, MIGRATIONS, ROLES, STATUSES, openDatabase } from "./schema.js";
export { requestPersistence } from "./persist.js";
export { registerServiceWorker } from "./pwa.js";
