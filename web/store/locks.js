/**
 * Web Locks for the store: who is writing what, across every tab of this origin.
 *
 *   withConversationLock(dbName, conversationId, fn) -> fn's result
 *       serialises this origin's multi-step writes to one conversation (all tabs)
 *   holdWriterLock(dbName, messageId) -> Promise<release()>
 *       held for as long as a reply is being streamed into storage; the browser drops it when the
 *       tab is reloaded, closed or killed, which is how a reader tells "streaming" from "interrupted"
 *   isWriterAlive(dbName, messageId) -> Promise<bool>
 *   whenWriterGone(dbName, messageId) -> Promise   resolves once no tab holds the writer lock
 */

/**
 * @param {string} db
 * @param {string} id
 */
const conversationLock = (db, id) => `orizuru:${db}:conversation:${id}`;
/**
 * @param {string} db
 * @param {string} id
 */
const writerLock = (db, id) => `orizuru:${db}:writer:${id}`;

/**
 * @template T
 * @param {string} dbName
 * @param {string} conversationId
 * @param {() => T | Promise<T>} fn
 * @returns {Promise<T>}
 */
export function withConversationLock(dbName, conversationId, fn) {
  return navigator.locks.request(conversationLock(dbName, conversationId), fn);
}

/**
 * @param {string} dbName
 * @param {string} messageId
 * @returns {Promise<() => void>}
 */
export function holdWriterLock(dbName, messageId) {
  return new Promise((granted, failed) => {
    /** @type {() => void} */
    let release = () => {};
    /** @type {Promise<void>} */
    const held = new Promise((resolve) => (release = resolve));
    navigator.locks
      .request(writerLock(dbName, messageId), () => {
        granted(release);
        return held;
      })
      .catch(failed);
  });
}

/**
 * @param {string} dbName
 * @param {string} messageId
 */
export async function isWriterAlive(dbName, messageId) {
  const { held = [] } = await navigator.locks.query();
  const name = writerLock(dbName, messageId);
  return held.some((lock) => lock.name === name);
}

/**
 * @param {string} dbName
 * @param {string} messageId
 */
export function whenWriterGone(dbName, messageId) {
  return navigator.locks.request(writerLock(dbName, messageId), () => undefined);
}
