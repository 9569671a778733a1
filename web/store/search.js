/**
 * The search index: every stored message's plain text (reduce.js textOfParts), held in memory by
 * conversation, so that a query scans strings instead of reading and cloning every message from
 * IndexedDB. With 25,000 messages (bench/history) one read of them all took ~365 ms a query; the text
 * alone, as its own object store, still took 200-450 ms to read, so the text is read once and kept.
 *
 *   const index = new SearchIndex(db)
 *   index.prepare() -> Promise            read every message once, in chunks (read() calls it; the
 *                                         sidebar asks for it early, while the page is idle)
 *   index.read(live) -> Map conversation id -> [{id, created, text}]   the messages of each conversation
 *                                         of `live` (Map id -> Conversation) in creation order, up to date
 *   index.forget(conversationId)          after a write to its messages settles (this tab's, or another
 *                                         tab's change heard on the channel)
 *
 * Up to date: an entry remembers its conversation's `updated`; when the conversation has moved on (a
 * message added or finished, in any tab) or is new (imported, created elsewhere) its messages are read
 * again at the next query. Writes that leave `updated` alone (a reply marked interrupted, a repair, a
 * purge) reach it through forget(). A read that overlaps a forget() of its conversation answers the
 * query it was made for but is not kept.
 */

import { textOfParts } from "./reduce.js";

const CHUNK = 1000; // messages per read while preparing: no single long task on the page

/**
 * @typedef {{id: string, created: number, text: string}} SearchText   one message's text, for search
 * @typedef {{updated: number | undefined, messages: SearchText[]}} Entry   a conversation's texts, as of `updated`
 * @typedef {{id: string, conversation_id: string, created: number, parts: import("../types/contract").Part[]}}
 *   IndexedMessage   what the index reads of a stored message
 */

export class SearchIndex {
  /** @type {Map<string, Entry>} */
  #entries = new Map(); // conversation id -> {updated, messages: [{id, created, text}]}
  /** @type {Map<string, number>} */
  #forgotten = new Map(); // conversation id -> the count of forget() calls when it was last forgotten
  #forgets = 0;
  /** @type {Promise<void> | null} */
  #ready = null;

  /** @param {import("idb").IDBPDatabase} db */
  constructor(db) {
    this.db = db;
  }

  prepare() {
    this.#ready ??= this.#readAll().catch((err) => {
      this.#ready = null; // try again at the next query
      throw err;
    });
    return this.#ready;
  }

  /** @param {string} conversationId */
  forget(conversationId) {
    this.#forgotten.set(conversationId, ++this.#forgets);
    this.#entries.delete(conversationId);
  }

  /**
   * @param {Map<string, {updated: number}>} live
   * @returns {Promise<Map<string, SearchText[]>>}
   */
  async read(live) {
    await this.prepare();
    const since = this.#forgets;
    /** @type {Map<string, SearchText[]>} */
    const out = new Map();
    /** @type {string[]} */
    const stale = [];
    for (const [id, conversation] of live) {
      const entry = this.#entries.get(id);
      const fresh = entry && entry.updated === conversation.updated;
      out.set(id, entry && fresh ? entry.messages : []); // set now, so the answer keeps the order of `live`
      if (!fresh) stale.push(id);
    }
    if (stale.length) {
      const tx = this.db.transaction(["conversations", "messages"]);
      const read = await Promise.all(stale.map((id) => Promise.all([
        id, tx.objectStore("conversations").get(id), tx.objectStore("messages").index("by_conversation").getAll(id),
      ])));
      for (const [id, conversation, messages] of read) {
        /** @type {Entry} */
        const entry = { updated: conversation?.updated, messages: inOrder(messages.map(textOf)) };
        out.set(id, entry.messages);
        if (conversation) this.#keep(id, entry, since);
      }
    }
    return out;
  }

  async #readAll() {
    const since = this.#forgets;
    /** @type {{id: string, updated: number}[]} */
    const conversations = await this.db.getAll("conversations"); // before the messages: see read()
    /** @type {Map<string, SearchText[]>} */
    const byConversation = new Map(conversations.map((c) => [c.id, []]));
    /** @type {string | null} */
    let after = null;
    for (;;) {
      /** @type {IndexedMessage[]} */
      const chunk = await this.db.getAll("messages", after === null ? null : IDBKeyRange.lowerBound(after, true), CHUNK);
      for (const m of chunk) byConversation.get(m.conversation_id)?.push(textOf(m));
      if (chunk.length < CHUNK) break;
      after = chunk[chunk.length - 1].id;
    }
    // A conversation that moved on while the chunks were read keeps its old `updated` here, so read()
    // reads it again; one created meanwhile is not listed, and read() reads it when it is asked for.
    for (const c of conversations) this.#keep(c.id, { updated: c.updated, messages: inOrder(byConversation.get(c.id) ?? []) }, since);
  }

  /**
   * Keep what a read begun when forget() had been called `since` times found, unless forgotten since.
   * @param {string} id
   * @param {Entry} entry
   * @param {number} since
   */
  #keep(id, entry, since) {
    if ((this.#forgotten.get(id) ?? 0) <= since) this.#entries.set(id, entry);
  }
}

/**
 * @param {IndexedMessage} message
 * @returns {SearchText}
 */
function textOf(message) {
  return { id: message.id, created: message.created, text: textOfParts(message.parts) };
}

/** @param {SearchText[]} messages */
function inOrder(messages) {
  return messages.sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : 1));
}
