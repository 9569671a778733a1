/**
 * The transcript store: conversations and their message trees in IndexedDB, written so that nothing
 * received is lost. Made by openStore() (index.js).
 *
 * Records
 *   Conversation  {id, title, created, updated, current_leaf, deleted_at?, changed?}   times: ms since epoch
 *                 (changed: when its record last changed here, sync's clock: sync/engine.js)
 *   StoredMessage {id, conversation_id, parent_id, role: "user"|"assistant", parts: [Message part JSON],
 *                  status: "complete"|"streaming"|"interrupted"|"error", created,
 *                  vendor?, model?, usage?, finish_reason?, error?, finished?, tasks?}
 *                 (tasks: call id -> TaskHandle, the calls of this step its MCP servers run as tasks: keepTask)
 *   Messages form a tree through parent_id (null = first message). Edit-and-resend and Regenerate
 *   add a sibling (same parent_id); the conversation's current_leaf names the branch on show.
 *
 * Store API
 *   listConversations() -> [Conversation]                 newest first, deleted ones left out
 *   createConversation({title?}) -> Conversation
 *   renameConversation(id, title)
 *   deleteConversation(id) -> undoToken                    hidden at once, purged later (purgeDeleted)
 *   undoDelete(undoToken)
 *   purgeDeleted(olderThanMs = 1 hour)                      really removes deleted conversations
 *   loadConversation(id) -> {conversation, messages: [StoredMessage], focus} | null
 *        messages in creation order. A "streaming" message whose writer is gone comes back
 *        "interrupted" with every stored delta (and is saved so); one still being written by another
 *        tab stays "streaming" and turns "interrupted" or "complete" through subscribe() later.
 *        Shapes older builds stored are repaired (repair.js: empty progress steps), and saved so.
 *   addMessage(conversationId, {parent_id?, role, parts, status?, vendor?, model?, usage?, error?})
 *        -> StoredMessage. Await it BEFORE sending the request. parent_id omitted = append to the
 *        conversation's current leaf (decided inside the transaction, so two tabs appending at once
 *        make one chain, nothing lost); null = a first message; an id = a branch from that message.
 *        The new message becomes the current leaf.
 *   beginReply(conversationId, {parent_id?, vendor?, model?}) -> ReplyWriter (replies.js)
 *   appendDeltas(message, records) -> written?            a ReplyWriter's batch of stream events
 *   compactReply(final)                                    a ReplyWriter's final message replaces its events
 *   keepTask(conversationId, messageId, handle)            a call of that step runs as an MCP task: its handle kept
 *   setCurrentLeaf(conversationId, messageId)              switch branch
 *   setFocus(conversationId, state)                        opaque JSON of the focus-memory module
 *   search(query) -> [{conversation_id, message_id | null, title, snippet}]   case-insensitive, all text;
 *        titles first, then this tab's unsaved and streaming messages, then the stored ones: conversations
 *        newest first, each one's messages in creation order.
 *        Message text is scanned in memory (search.js), read from storage once and kept up to date
 *   prepareSearch()                                        read that text now (the first search does)
 *   exportConversation(id, "json" | "markdown") -> Blob; exportAll("json" | "markdown") -> Blob
 *   importJSON(fileOrText) -> {imported, copied, skipped, conversation_ids}     see exchange.js
 *   profiles                                               saved provider profiles (profiles.js)
 *   assistants                                             assistants (assistants.js)
 *   prompts                                                the prompt library (prompts.js)
 *   setChatSettings(id, {assistant_id, overrides})          the chat's assistant and its own changes to it
 *   setPinned(id, bool); setFolder(id, name | null)         how the sidebar groups it
 *   blobs                                                  attachment bytes in OPFS (blobs.js): messages are
 *        stored with references and read back with the bytes, so callers always see whole parts
 *   syncRecords(); applySyncedConversation(c, isNewer); applySyncedMessages([m]); blobRefsOf(m)   for sync/engine.js
 *   onLocalChange(cb) -> unsubscribe                       this tab's own changes (sync sends them)
 *   subscribe(cb) -> unsubscribe                           changes from other tabs (channel.js), plus
 *        {type: "message", ..., repaired: true} in this tab when a reply is found interrupted later, and
 *        {type: "sync", conversation_ids, synced: true} when sync brought something from another device
 *   close()
 *
 * Failures never throw away data. When a write fails (quota full: QuotaExceededError) the store
 * calls onError({kind: "quota", message}) once per conversation until a write succeeds again,
 * keeps the record in memory, and every read and export of this tab includes it. Other failures
 * report {kind: "storage"}. Writes to one conversation are serialised across tabs by a Web Lock.
 */

import { Blobs, blobRefs } from "./blobs.js";
import { ChangeChannel } from "./channel.js";
import { holdWriterLock, isWriterAlive, whenWriterGone, withConversationLock } from "./locks.js";
import { ReplyWriter } from "./replies.js";
import { planRepair, withoutToolMeta } from "./repair.js";
import { SearchIndex } from "./search.js";
import { replayEvents, textOfParts } from "./reduce.js";
import { exportConversations, importConversations } from "./exchange.js";
import { Assistants } from "./assistants.js";
import { Prompts } from "./prompts.js";
import { Profiles } from "./profiles.js";
import { isQuotaError, ROLES, STATUSES } from "./schema.js";

/**
 * A message as the store holds it and gives it back (parts whole: the bytes restored).
 * @typedef {{id: string, conversation_id: string, parent_id: string | null, role: "user" | "assistant",
 *            parts: import("../types/contract").Part[], status: "complete" | "streaming" | "interrupted" | "error",
 *            created: number, vendor?: string, model?: string, usage?: import("../types/contract").Usage,
 *            finish_reason?: string, error?: import("../types/contract").ErrorInfo, finished?: number,
 *            tasks?: Record<string, import("../types/contract").TaskHandle>}} StoredMessage
 */
/**
 * A conversation's record.
 * @typedef {{id: string, title: string, created: number, updated: number, current_leaf: string | null,
 *            deleted_at?: number, changed?: number, assistant_id?: string | null,
 *            overrides?: Record<string, unknown> | null, pinned?: boolean, folder?: string | null}} Conversation
 */
/** @typedef {Omit<StoredMessage, "parent_id" | "created">} Draft   a message before its place in the tree */
/** @typedef {{conversation_id: string, state: unknown}} FocusRecord   a conversation's focus-memory state */
/**
 * What a write keeps in memory when storage refuses it (and forgets once a write succeeds).
 * @typedef {{conversation?: Conversation, message?: StoredMessage, focus?: FocusRecord}} Kept
 * @typedef {{conversation?: Conversation, messages: Map<string, StoredMessage>, focus?: FocusRecord}} Unsaved
 */
/** @typedef {{kind: "quota" | "storage", message: string}} StoreTrouble   a write that failed, told to the user */
/** @typedef {import("idb").IDBPTransaction<unknown, string[], "readwrite">} WriteTransaction */
/** @typedef {import("./channel.js").Change} Change */
/** @typedef {import("./channel.js").ChangeListener} ChangeListener */
/** @typedef {import("./replies.js").DeltaRecord} DeltaRecord */
/** @typedef {import("../sync/engine.js").SyncedConversation} SyncedConversation */
/** @typedef {import("../sync/engine.js").SyncedMessage} SyncedMessage */
/** @typedef {import("../sync/engine.js").SyncStore} SyncStore */
/**
 * A search hit: a title (message_id null) or a message's text around the match.
 * @typedef {{conversation_id: string, message_id: string | null, title: string, snippet: string}} SearchHit
 */

const HOUR = 3_600_000;
const SYNC_NOTICE_MS = 100;
const ignore = () => {}; // a failed request also fails its transaction, which _write reports

/**
 * A message for a conversation that is not there any more (deleted here or in another tab, or purged): refused,
 * never written where no list shows it and the purge would take it (callers test `instanceof`).
 */
export class ConversationGoneError extends Error {
  /** @param {string} id */
  constructor(id) {
    super(`conversation ${id} was deleted`);
    this.name = "ConversationGoneError";
  }
}

/** @implements {SyncStore} */
export class Store {
  /**
   * @param {import("./schema.js").Database} db
   * @param {{name: string, onError?: (trouble: StoreTrouble) => void}} options
   */
  constructor(db, { name, onError = () => {} }) {
    this.db = db;
    this.name = name;
    this.onError = onError;
    this.channel = new ChangeChannel(name);
    /** @type {Map<string, ReplyWriter>} */
    this.writers = new Map(); // message id -> live ReplyWriter of this tab
    /** @type {Set<string>} */
    this.watched = new Set(); // message ids whose other-tab writer we wait on
    /** @type {Map<string, Unsaved>} */
    this.unsaved = new Map(); // conversation id -> what is kept in memory only
    /** @type {Set<string>} */
    this.quotaReported = new Set(); // conversation ids
    /** @type {Set<ChangeListener>} */
    this.localListeners = new Set(); // onLocalChange
    /** @type {Set<string>} */
    this.syncedIds = new Set(); // conversations sync changed since the last notice (_announceSynced)
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.syncedNotice = undefined;
    this.profiles = new Profiles(db);
    this.assistants = new Assistants(db);
    this.prompts = new Prompts(db);
    this.blobs = new Blobs(name); // attachment bytes, in OPFS (blobs.js)
    this.searchIndex = new SearchIndex(db);
    // Another tab's write may leave a conversation's `updated` alone (an interrupted reply, a repair).
    this.channel.subscribe((change) => {
      if ((change.type === "conversation" || change.type === "message") && change.conversation_id) {
        this.searchIndex.forget(change.conversation_id);
      }
    });
  }

  // ------------------------------------------------------------ export / import (exchange.js)

  /**
   * @param {string} id
   * @param {"json" | "markdown"} [format]
   */
  exportConversation(id, format = "json") {
    return exportConversations(this, [id], format);
  }

  /** @param {"json" | "markdown"} [format] */
  exportAll(format = "json") {
    return exportConversations(this, null, format);
  }

  /** @param {string | Blob} fileOrText */
  importJSON(fileOrText) {
    return importConversations(this, fileOrText);
  }

  /** @param {ChangeListener} cb */
  subscribe(cb) {
    return this.channel.subscribe(cb);
  }

  close() {
    this.channel.close();
    this.db.close();
  }

  // ------------------------------------------------------------ conversations

  /** @returns {Promise<Conversation[]>} */
  async listConversations() {
    const stored = /** @type {Conversation[]} */ (await this.db.getAll("conversations"));
    const byId = new Map(stored.map((c) => [c.id, c]));
    for (const [id, mem] of this.unsaved) if (mem.conversation) byId.set(id, mem.conversation);
    return [...byId.values()].filter((c) => !c.deleted_at).sort((a, b) => b.updated - a.updated);
  }

  /**
   * @param {{title?: string, id?: string}} [fields]
   * @returns {Promise<Conversation>}
   */
  async createConversation({ title = "New chat", id = crypto.randomUUID() } = {}) {
    const now = Date.now();
    /** @type {Conversation} */
    const conversation = { id, title: String(title), created: now, updated: now, current_leaf: null };
    await this._write(id, ["conversations"], (tx) => tx.objectStore("conversations").add(conversation), {
      conversation,
    });
    this._announce({ type: "conversation", conversation_id: id });
    return conversation;
  }

  /**
   * @param {string} id
   * @param {string} title
   */
  renameConversation(id, title) {
    return this._updateConversation(id, (c) => ({ ...c, title: String(title), updated: Date.now() }));
  }

  /**
   * Pinned conversations are listed first.
   * @param {string} id
   * @param {boolean} pinned
   */
  setPinned(id, pinned) {
    return this._updateConversation(id, (c) => ({ ...c, pinned: Boolean(pinned) }));
  }

  /**
   * A folder is a name conversations share (null: none); it exists while a conversation is in it.
   * @param {string} id
   * @param {string | null} folder
   */
  setFolder(id, folder) {
    const name = typeof folder === "string" && folder.trim() ? folder.trim().slice(0, 80) : null;
    return this._updateConversation(id, (c) => ({ ...c, folder: name }));
  }

  /**
   * The chat's assistant and its own changes to that assistant's settings (assistants.js).
   * @param {string} id
   * @param {{assistant_id?: string | null, overrides?: Record<string, unknown> | null}} settings
   */
  setChatSettings(id, { assistant_id, overrides }) {
    return this._updateConversation(id, (c) => ({ ...c, assistant_id, overrides }));
  }

  /**
   * @param {string} id
   * @param {string | null} messageId
   */
  setCurrentLeaf(id, messageId) {
    return this._updateConversation(id, (c) => ({ ...c, current_leaf: messageId }));
  }

  /**
   * @param {string} id
   * @returns {Promise<string>} the undo token
   */
  async deleteConversation(id) {
    const deletedAt = Date.now();
    await this._updateConversation(id, (c) => ({ ...c, deleted_at: deletedAt }));
    return `${id}@${deletedAt}`;
  }

  /** @param {string} undoToken */
  async undoDelete(undoToken) {
    const id = String(undoToken).replace(/@\d+$/, "");
    await this._updateConversation(id, ({ deleted_at: _gone, ...c }) => c);
  }

  /** @param {number} [olderThanMs] */
  async purgeDeleted(olderThanMs = HOUR) {
    const cutoff = Date.now() - olderThanMs;
    const all = /** @type {Conversation[]} */ (await this.db.getAll("conversations"));
    const doomed = all.filter((c) => c.deleted_at && c.deleted_at <= cutoff);
    for (const { id } of doomed) {
      await withConversationLock(this.name, id, () =>
        this._write(id, ["conversations", "messages", "deltas", "focus"], async (tx) => {
          const messages = await tx.objectStore("messages").index("by_conversation").getAllKeys(id);
          const deltas = tx.objectStore("deltas");
          for (const mid of messages) {
            for (const key of await deltas.index("by_message").getAllKeys(mid)) deltas.delete(key).catch(ignore);
            tx.objectStore("messages").delete(mid).catch(ignore);
          }
          tx.objectStore("focus").delete(id).catch(ignore);
          tx.objectStore("conversations").delete(id).catch(ignore);
        }),
      );
      this.unsaved.delete(id);
    }
    if (doomed.length) await this.sweepBlobs();
    return doomed.length;
  }

  /**
   * Remove the attachment files no message refers to any more (after a purge); blobs.sweep's options.
   * @param {{minAgeMs?: number}} [options]
   */
  async sweepBlobs(options) {
    /** @type {Set<string>} */
    const referenced = new Set();
    for (const mem of this.unsaved.values()) for (const m of mem.messages.values()) blobRefs(m).forEach((r) => referenced.add(r));
    let cursor = await this.db.transaction("messages").store.openCursor();
    while (cursor) {
      blobRefs(cursor.value).forEach((r) => referenced.add(r));
      cursor = await cursor.continue();
    }
    return this.blobs.sweep(referenced, options);
  }

  /**
   * @param {string} conversationId
   * @param {unknown} state
   */
  async setFocus(conversationId, state) {
    /** @type {FocusRecord} */
    const record = { conversation_id: conversationId, state: structuredClone(state) };
    await this._write(conversationId, ["focus"], (tx) => tx.objectStore("focus").put(record), { focus: record });
  }

  // ------------------------------------------------------------ messages

  /**
   * @param {string} conversationId
   * @param {{id?: string, parent_id?: string | null, role: "user" | "assistant",
   *          parts?: import("../types/contract").Part[], status?: StoredMessage["status"], vendor?: string,
   *          model?: string, usage?: StoredMessage["usage"], error?: StoredMessage["error"]}} message
   * @returns {Promise<StoredMessage>}
   */
  async addMessage(conversationId, { id = crypto.randomUUID(), parent_id, role, parts = [], status = "complete", ...rest }) {
    if (!ROLES.includes(role)) throw new Error(`addMessage: role must be "user" or "assistant", not ${JSON.stringify(role)}`);
    if (!STATUSES.includes(status)) throw new Error(`addMessage: unknown status ${JSON.stringify(status)}`);
    if (!Array.isArray(parts)) throw new Error("addMessage: parts must be an array of message parts");
    /** @type {Draft} */
    const draft = { id, conversation_id: conversationId, role, parts: await this.blobs.offload(parts), status,
      ...withoutUndefined(rest) };
    const message = await withConversationLock(this.name, conversationId, () => this._insertMessage(draft, parent_id));
    // The bytes stay with the caller; the record holds their references.
    return { ...message, parts };
  }

  /**
   * @param {string} conversationId
   * @param {{parent_id?: string | null, vendor?: string, model?: string}} [options]
   * @returns {Promise<ReplyWriter>}
   */
  async beginReply(conversationId, { parent_id, vendor, model } = {}) {
    const id = crypto.randomUUID();
    const release = await holdWriterLock(this.name, id); // held before the message exists anywhere
    try {
      /** @type {Draft} */
      const draft = { id, conversation_id: conversationId, role: "assistant", parts: [], status: "streaming",
        ...withoutUndefined({ vendor, model }) };
      const message = await withConversationLock(this.name, conversationId, () => this._insertMessage(draft, parent_id));
      const writer = new ReplyWriter(this, message, release);
      this.writers.set(id, writer);
      return writer;
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * @param {Draft} draft
   * @param {string | null | undefined} parentId   undefined: the conversation's current leaf
   * @returns {Promise<StoredMessage>}
   */
  async _insertMessage(draft, parentId) {
    const mem = this.unsaved.get(draft.conversation_id);
    /** @type {StoredMessage | undefined} */
    let message;
    /** @type {Conversation | undefined} */
    let conversation;
    await this._write(draft.conversation_id, ["conversations", "messages"], async (tx) => {
      const stored = /** @type {Conversation | undefined} */ (await tx.objectStore("conversations").get(draft.conversation_id));
      const current = mem?.conversation ?? stored;
      if (!current || current.deleted_at) throw new ConversationGoneError(draft.conversation_id);
      const added = { ...draft, parent_id: parentId === undefined ? current.current_leaf : parentId, created: Date.now() };
      message = added;
      conversation = { ...current, current_leaf: added.id, updated: added.created };
      tx.objectStore("messages").add(added).catch(ignore);
      tx.objectStore("conversations").put(conversation).catch(ignore);
    }, () => ({ conversation, message }));
    // message is there when the write succeeded, and when storage refused it (then kept in memory only)
    if (!message) throw new Error(`could not add a message to conversation ${draft.conversation_id}`);
    this._announce({ type: "message", conversation_id: draft.conversation_id, message_id: message.id });
    return message;
  }

  /**
   * @param {string} id
   * @returns {Promise<{conversation: Conversation, messages: StoredMessage[], focus: unknown} | null>}
   */
  async loadConversation(id) {
    const tx = this.db.transaction(["conversations", "messages", "focus"]);
    const [stored, storedMessages, focus] = /** @type {[Conversation | undefined, StoredMessage[], FocusRecord | undefined, void]} */ (
      await Promise.all([
        tx.objectStore("conversations").get(id),
        tx.objectStore("messages").index("by_conversation").getAll(id),
        tx.objectStore("focus").get(id),
        tx.done,
      ]));
    const mem = this.unsaved.get(id);
    const conversation = mem?.conversation ?? stored;
    if (!conversation) return null;
    const byId = new Map(storedMessages.map((m) => [m.id, m]));
    for (const [mid, m] of mem?.messages ?? []) byId.set(mid, m);
    for (const [mid, m] of byId) if (m.status === "streaming") byId.set(mid, await this._streamingView(m));
    const messages = await Promise.all([...byId.values()]
      .sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : 1))
      .map(async (stored) => {
        const m = withoutToolMeta(stored); // an older build's tool cards (repair.js), upgraded as read
        const parts = await this.blobs.restore(m.parts);
        return parts === m.parts ? m : { ...m, parts };
      }));
    const repair = planRepair(conversation, messages);
    if (repair) {
      const repaired = await this._applyRepair(conversation, repair);
      return { conversation: repaired, messages: repair.messages, focus: (mem?.focus ?? focus)?.state };
    }
    return { conversation, messages, focus: (mem?.focus ?? focus)?.state };
  }

  /**
   * Save a repair.js plan: moved messages get their new parent (only if their parent is still the one
   * the plan moved them from), removed ones go, the conversation gets the plan's current leaf. The
   * repaired conversation comes back even when the write fails (it is repaired again next time).
   */
  /**
   * @param {Conversation} conversation
   * @param {{moved: StoredMessage[], removed: string[], currentLeaf: string | null}} plan
   * @returns {Promise<Conversation>}
   */
  _applyRepair(conversation, { moved, removed, currentLeaf }) {
    const id = conversation.id;
    const gone = new Set(removed);
    let updated = { ...conversation, current_leaf: currentLeaf };
    return withConversationLock(this.name, id, async () => {
      await this._write(id, ["conversations", "messages"], async (tx) => {
        const messages = tx.objectStore("messages");
        for (const msg of moved) {
          const current = /** @type {StoredMessage | undefined} */ (await messages.get(msg.id));
          if (current?.parent_id && gone.has(current.parent_id)) messages.put({ ...current, parent_id: msg.parent_id }).catch(ignore);
        }
        for (const mid of removed) messages.delete(mid).catch(ignore);
        const stored = /** @type {Conversation | undefined} */ (await tx.objectStore("conversations").get(id));
        if (stored) {
          updated = { ...stored, current_leaf: currentLeaf };
          tx.objectStore("conversations").put(updated).catch(ignore);
        }
      });
      this._announce({ type: "conversation", conversation_id: id });
      return updated;
    });
  }

  /**
   * The best current view of a message stored as "streaming".
   * @param {StoredMessage} message
   * @returns {Promise<StoredMessage>}
   */
  async _streamingView(message) {
    const own = this.writers.get(message.id);
    if (own) return own.snapshot();
    if (await isWriterAlive(this.name, message.id)) {
      this._watchWriter(message);
      const events = await this._deltaEvents(message.id);
      return { ...message, ...replayEvents(events), status: "streaming" };
    }
    return this._markInterrupted(message);
  }

  /** @param {StoredMessage} message */
  _watchWriter(message) {
    if (this.watched.has(message.id)) return;
    this.watched.add(message.id);
    whenWriterGone(this.name, message.id).then(async () => {
      this.watched.delete(message.id);
      const repaired = await this._markInterrupted(message);
      this.channel.emit({ type: "message", conversation_id: message.conversation_id, message_id: message.id,
        repaired: repaired.status === "interrupted" });
    });
  }

  /**
   * @param {string} messageId
   * @returns {Promise<import("../types/contract").CoreEvent[]>}
   */
  async _deltaEvents(messageId) {
    const records = /** @type {DeltaRecord[]} */ (await this.db.getAllFromIndex("deltas", "by_message", messageId));
    return records.map((r) => r.event);
  }

  /**
   * Turn a "streaming" message whose writer is gone into "interrupted", keeping every delta.
   * @param {StoredMessage} message
   * @returns {Promise<StoredMessage>}
   */
  _markInterrupted(message) {
    return withConversationLock(this.name, message.conversation_id, async () => {
      let result = message;
      let changed = false;
      await this._write(message.conversation_id, ["messages", "deltas"], async (tx) => {
        const current = /** @type {StoredMessage | undefined} */ (await tx.objectStore("messages").get(message.id));
        if (!current || current.status !== "streaming") {
          result = current ?? message; // finished meanwhile: nothing to repair
          return;
        }
        const deltas = tx.objectStore("deltas");
        const keys = await deltas.index("by_message").getAllKeys(message.id);
        const records = /** @type {DeltaRecord[]} */ (await deltas.index("by_message").getAll(message.id));
        const events = records.map((r) => r.event);
        const replayed = replayEvents(events);
        result = { ...current, ...withoutUndefined(replayed), status: "interrupted" };
        tx.objectStore("messages").put(result).catch(ignore);
        for (const key of keys) deltas.delete(key).catch(ignore);
        changed = true;
      });
      if (changed) this._announce({ type: "message", conversation_id: message.conversation_id, message_id: message.id });
      return result;
    });
  }

  /**
   * ReplyWriter's batch of delta records; true when written.
   * @param {StoredMessage} message
   * @param {DeltaRecord[]} records
   * @returns {Promise<boolean>}
   */
  async appendDeltas(message, records) {
    const ok = await this._write(message.conversation_id, ["deltas"], (tx) => {
      const deltas = tx.objectStore("deltas");
      for (const record of records) deltas.add(record).catch(ignore);
    });
    if (ok) {
      for (const { event } of records) {
        this.channel.post({ type: "delta", conversation_id: message.conversation_id, message_id: message.id, event });
      }
    }
    return ok;
  }

  /**
   * ReplyWriter.finish: the final message replaces the reply's delta records in one transaction.
   * @param {StoredMessage} final
   * @returns {Promise<StoredMessage>}
   */
  async compactReply(final) {
    const record = { ...final, parts: await this.blobs.offload(final.parts) };
    await withConversationLock(this.name, final.conversation_id, () =>
      this._write(final.conversation_id, ["conversations", "messages", "deltas"], async (tx) => {
        const deltas = tx.objectStore("deltas");
        for (const key of await deltas.index("by_message").getAllKeys(final.id)) deltas.delete(key).catch(ignore);
        tx.objectStore("messages").put(record).catch(ignore);
        const conversation = /** @type {Conversation | undefined} */ (await tx.objectStore("conversations").get(final.conversation_id));
        if (conversation) tx.objectStore("conversations").put({ ...conversation, updated: Date.now() }).catch(ignore);
      }, () => ({ message: final })),
    );
    this._announce({ type: "message", conversation_id: final.conversation_id, message_id: final.id });
    return final;
  }

  /**
   * A step's tool call became a task on its MCP server: its handle goes on the step's message (`tasks`, by call id),
   * so that a reload picks the task up again (web/app/task_resume.js).
   * @param {string} conversationId
   * @param {string} messageId
   * @param {import("../types/contract").TaskHandle} handle
   */
  async keepTask(conversationId, messageId, handle) {
    /** @type {StoredMessage | null} */
    let kept = null;
    await withConversationLock(this.name, conversationId, () =>
      this._write(conversationId, ["messages"], async (tx) => {
        const current = /** @type {StoredMessage | undefined} */ (await tx.objectStore("messages").get(messageId));
        if (!current) return;
        kept = { ...current, tasks: { ...current.tasks, [handle.call_id]: handle } };
        tx.objectStore("messages").put(kept).catch(ignore);
      }),
    );
    if (kept) this._announce({ type: "message", conversation_id: conversationId, message_id: messageId });
  }

  // ------------------------------------------------------------ search

  prepareSearch() {
    return this.searchIndex.prepare();
  }

  /**
   * @param {string} query
   * @returns {Promise<SearchHit[]>}
   */
  async search(query) {
    const needle = String(query ?? "").trim().toLowerCase();
    if (!needle) return [];
    /** @type {SearchHit[]} */
    const hits = [];
    const live = new Map((await this.listConversations()).map((c) => [c.id, c]));
    for (const c of live.values()) {
      if (c.title.toLowerCase().includes(needle)) {
        hits.push({ conversation_id: c.id, message_id: null, title: c.title, snippet: c.title });
      }
    }
    /** @type {Set<string>} */
    const seen = new Set();
    /**
     * @param {string} conversationId
     * @param {string} id
     * @param {string} text
     */
    const consider = (conversationId, id, text) => {
      const conversation = live.get(conversationId);
      if (!conversation || seen.has(id)) return;
      seen.add(id);
      const at = text.toLowerCase().indexOf(needle);
      if (at >= 0) hits.push({ conversation_id: conversationId, message_id: id, title: conversation.title,
        snippet: snippet(text, at, needle.length) });
    };
    // What only this tab has first: messages kept in memory, replies being written.
    for (const mem of this.unsaved.values()) {
      for (const m of mem.messages.values()) consider(m.conversation_id, m.id, textOfParts(m.parts));
    }
    for (const w of this.writers.values()) {
      const m = w.snapshot();
      consider(m.conversation_id, m.id, textOfParts(m.parts));
    }
    for (const [conversationId, messages] of await this.searchIndex.read(live)) {
      for (const m of messages) consider(conversationId, m.id, m.text);
    }
    return hits;
  }

  // ------------------------------------------------------------ sync (sync/engine.js)

  /**
   * Every conversation (the deleted ones too: a delete syncs) and every settled message, as stored, but for the
   * handles of its MCP tasks (`tasks`): a task is picked up again by the browser that started it, never also by
   * another device, which would go on with the same turn a second time.
   * @returns {Promise<{conversations: Conversation[], messages: StoredMessage[]}>}
   */
  async syncRecords() {
    const tx = this.db.transaction(["conversations", "messages"]);
    const [conversations, messages] = /** @type {[Conversation[], StoredMessage[], void]} */ (await Promise.all([
      tx.objectStore("conversations").getAll(), tx.objectStore("messages").getAll(), tx.done]));
    return { conversations, messages: messages.filter((m) => m.status !== "streaming")
      .map(({ tasks: _tasks, ...message }) => message) };
  }

  /**
   * Another device's record of a conversation, kept where `isNewer(it, ours)`. Resolves to whether it was.
   * @param {SyncedConversation} remote
   * @param {(a: SyncedConversation, b: SyncedConversation) => boolean} isNewer
   * @returns {Promise<boolean>}
   */
  async applySyncedConversation(remote, isNewer) {
    let applied = false;
    await withConversationLock(this.name, remote.id, () =>
      this._write(remote.id, ["conversations"], async (tx) => {
        const stored = /** @type {Conversation | undefined} */ (await tx.objectStore("conversations").get(remote.id));
        if (stored && !isNewer(remote, stored)) return;
        tx.objectStore("conversations").put(remote).catch(ignore);
        applied = true;
      }));
    if (applied) this._announceSynced(remote.id);
    return applied;
  }

  /** Other devices' messages, in one transaction: each added when this browser has neither it nor a purge of its
   * conversation. Resolves to how many were added.
   * @param {SyncedMessage[]} messages
   * @returns {Promise<number>}
   */
  async applySyncedMessages(messages) {
    /** @type {SyncedMessage[]} */
    const added = [];
    const conversationIds = [...new Set(messages.map((m) => m.conversation_id))];
    await this._write(conversationIds[0] ?? "", ["conversations", "messages"], async (tx) => {
      /** @type {Set<string>} */
      const present = new Set();
      for (const id of conversationIds) if (await tx.objectStore("conversations").get(id)) present.add(id);
      for (const message of messages) {
        if (!present.has(message.conversation_id) || await tx.objectStore("messages").get(message.id)) continue;
        tx.objectStore("messages").add(message).catch(ignore);
        added.push(message);
      }
    });
    for (const id of new Set(added.map((m) => m.conversation_id))) {
      this.searchIndex.forget(id);
      this._announceSynced(id);
    }
    return added.length;
  }

  /**
   * The attachment files a message refers to (sync sends each once).
   * @param {SyncedMessage} message   a message record as syncRecords gave it: its parts are stored parts
   * @returns {string[]}
   */
  blobRefsOf(message) {
    return blobRefs(/** @type {{parts?: import("./blobs.js").LoosePart[]}} */ (message));
  }

  /**
   * What came from another device is news to this tab too (its list and open chat redraw), and to the others: one
   * notice per burst, `{type: "sync", conversation_ids}`, not one a record (a first sync brings thousands).
   * @param {string} conversationId
   */
  _announceSynced(conversationId) {
    this.syncedIds.add(conversationId);
    this.syncedNotice ??= setTimeout(() => {
      const notice = { type: /** @type {const} */ ("sync"), conversation_ids: [...this.syncedIds] };
      this.syncedIds.clear();
      this.syncedNotice = undefined;
      this.channel.post(notice);
      this.channel.emit({ ...notice, synced: true });
    }, SYNC_NOTICE_MS);
  }

  // ------------------------------------------------------------ plumbing

  /**
   * @param {string} id
   * @param {(current: Conversation) => Conversation} change
   * @returns {Promise<Conversation>}
   */
  async _updateConversation(id, change) {
    return withConversationLock(this.name, id, async () => {
      /** @type {Conversation | undefined} */
      let updated;
      await this._write(id, ["conversations"], async (tx) => {
        const current = this.unsaved.get(id)?.conversation ??
          /** @type {Conversation | undefined} */ (await tx.objectStore("conversations").get(id));
        if (!current) throw new Error(`no conversation with id ${id}`);
        updated = { ...change(current), changed: Date.now() }; // sync's clock (sync/engine.js)
        tx.objectStore("conversations").put(updated).catch(ignore);
      }, () => ({ conversation: updated }));
      if (!updated) throw new Error(`no conversation with id ${id}`);
      this._announce({ type: "conversation", conversation_id: id });
      return updated;
    });
  }

  /** @param {Change} change */
  _announce(change) {
    this.channel.post(change);
    for (const listener of this.localListeners) listener(change);
  }

  /**
   * This tab's own changes (subscribe() hears the other tabs'): sync sends them.
   * @param {ChangeListener} listener
   * @returns {() => boolean} unsubscribe
   */
  onLocalChange(listener) {
    this.localListeners.add(listener);
    return () => this.localListeners.delete(listener);
  }

  /**
   * Run `fn(tx)` in one read-write transaction. On failure: a quota error keeps what `keep()`
   * returns ({conversation?, message?, focus?}) in memory and reports it; any other error is
   * reported and, when it is not a storage failure (a bad argument), thrown. Returns true when the
   * transaction committed.
   * @param {string} conversationId
   * @param {string[]} storeNames
   * @param {(tx: WriteTransaction) => unknown} fn
   * @param {Kept | (() => Kept)} [keep]
   * @returns {Promise<boolean>}
   */
  async _write(conversationId, storeNames, fn, keep) {
    let tx;
    try {
      tx = this.db.transaction(storeNames, "readwrite");
    } catch (err) {
      const name = err instanceof Error ? err.name : String(err); // a DOMException: InvalidStateError, NotFoundError
      this.onError({ kind: "storage", message: `Storage is closed (${name}); reload this tab. Nothing was saved.` });
      if (keep) this._keep(conversationId, typeof keep === "function" ? keep() : keep);
      return false;
    }
    const done = tx.done;
    done.catch(() => {});
    // Once the write has settled, not before: a search reading meanwhile would keep what it replaced.
    if (storeNames.includes("messages")) done.finally(() => this.searchIndex.forget(conversationId)).catch(ignore);
    try {
      await fn(tx);
      await done;
      this._saved(conversationId, typeof keep === "function" ? keep() : keep);
      return true;
    } catch (err) {
      try {
        tx.abort();
      } catch {
        // already finished or aborted
      }
      const cause = tx.error ?? err;
      if (isQuotaError(cause) || isQuotaError(err)) {
        if (keep) this._keep(conversationId, typeof keep === "function" ? keep() : keep);
        if (!this.quotaReported.has(conversationId)) {
          this.quotaReported.add(conversationId);
          this.onError({
            kind: "quota",
            message: "This browser's storage for Orizuru is full, so the latest messages are kept only in this " +
              "tab. Export the conversation to keep a copy, or free space and keep going.",
          });
        }
        return false;
      }
      if (err instanceof DOMException || cause instanceof DOMException) {
        if (keep) this._keep(conversationId, typeof keep === "function" ? keep() : keep);
        const failure = cause instanceof DOMException ? cause : /** @type {DOMException} */ (err);
        this.onError({ kind: "storage", message: `Could not save to storage: ${failure.name}: ${failure.message}` });
        return false;
      }
      throw err;
    }
  }

  /**
   * @param {string} conversationId
   * @param {Kept} kept
   */
  _keep(conversationId, { conversation, message, focus } = {}) {
    let mem = this.unsaved.get(conversationId);
    if (!mem) this.unsaved.set(conversationId, (mem = { messages: new Map() }));
    if (conversation) mem.conversation = conversation;
    if (message) mem.messages.set(message.id, message);
    if (focus) mem.focus = focus;
  }

  /**
   * @param {string} conversationId
   * @param {Kept} [kept]
   */
  _saved(conversationId, { conversation, message, focus } = {}) {
    this.quotaReported.delete(conversationId);
    const mem = this.unsaved.get(conversationId);
    if (!mem) return;
    if (conversation && mem.conversation?.id === conversation.id) delete mem.conversation;
    if (message) mem.messages.delete(message.id);
    if (focus) delete mem.focus;
    if (!mem.conversation && !mem.focus && mem.messages.size === 0) this.unsaved.delete(conversationId);
  }
}

/**
 * @template {object} T
 * @param {T} obj
 * @returns {Partial<T>}
 */
function withoutUndefined(obj) {
  return /** @type {Partial<T>} */ (Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)));
}

/**
 * @param {string} text
 * @param {number} at
 * @param {number} length
 * @param {number} [around]
 */
function snippet(text, at, length, around = 40) {
  const start = Math.max(0, at - around);
  const end = Math.min(text.length, at + length + around);
  return `${start > 0 ? "…" : ""}${text.slice(start, end)}${end < text.length ? "…" : ""}`;
}
