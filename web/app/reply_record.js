/**
 * A turn's reply on disk while it streams: each step a stored assistant message (web/store/replies.js writes every
 * piece as it arrives), each step's tool results a message after it, in the order the events came, off the UI path.
 * A write that fails is said (`onError`) and the reply stays on screen.
 *
 *   const record = new ReplyRecord(store, conversationId, {parentId, vendor, model, onError})
 *   record.beginStep() · record.append(streamEvent) · record.finishStep({parts, status, usage, error})
 *   record.addResults(toolResultsMessage) · record.failed(error)   a reply that is only its error
 *   record.keepTask(handle)   a call of the step just finished runs as an MCP task: its handle on that step
 *   await record.settled()   every write done; record.id: the turn's first step in the store (what the reply becomes)
 */

/** @typedef {import("../store/replies.js").ReplyWriter} ReplyWriter */
/** @typedef {import("../store/transcripts.js").StoredMessage} StoredMessage */
/** @typedef {{role: "user" | "assistant", parts: import("../types/contract").Part[]}} Message */

export class ReplyRecord {
  /** @type {Promise<void>} */
  #chain = Promise.resolve();
  /** @type {ReplyWriter | null} */
  #writer = null;

  /**
   * @param {import("../store/transcripts.js").Store} store
   * @param {string} conversationId
   * @param {{parentId: string | null, vendor?: string, model?: string, onError: (err: Error) => void}} options
   */
  constructor(store, conversationId, { parentId, vendor, model, onError }) {
    this.store = store;
    this.conversationId = conversationId;
    this.vendor = vendor;
    this.model = model;
    this.onError = onError;
    /** @type {string | null} */
    this.lastId = parentId; // what the next message hangs from
    /** @type {string | null} */
    this.id = null;
  }

  beginStep() {
    this.#queue(async () => {
      this.#writer = await this.#begin();
    });
  }

  /** @param {import("../types/contract").CoreEvent} ev */
  append(ev) {
    this.#queue(() => this.#writer?.append(ev));
  }

  /**
   * @param {{parts?: import("../types/contract").Part[], status: StoredMessage["status"],
   *          usage?: StoredMessage["usage"] | null, error?: StoredMessage["error"] | null}} ending
   */
  finishStep({ parts, status, usage, error }) {
    this.#queue(async () => {
      const writer = this.#writer;
      if (!writer) return;
      this.#writer = null;
      const stored = await writer.finish({ parts, status, usage: usage ?? undefined, error: error ?? undefined });
      this.lastId = stored?.id ?? writer.id ?? this.lastId;
    });
  }

  /** @param {Message} message   the tool results, each part's display with the page's additions */
  addResults(message) {
    this.#queue(async () => {
      const stored = await this.store.addMessage(this.conversationId, { parent_id: this.lastId, role: "user",
                                                                        parts: message.parts });
      this.lastId = stored.id;
    });
  }

  /** @param {import("../types/contract").TaskHandle} handle */
  keepTask(handle) {
    this.#queue(async () => {
      if (this.lastId) await this.store.keepTask(this.conversationId, this.lastId, handle);
    });
  }

  /** @param {import("../types/contract").ErrorInfo} error */
  failed(error) {
    this.#queue(async () => {
      const writer = await this.#begin();
      await writer.finish({ parts: [], status: "error", error });
    });
  }

  settled() {
    return this.#chain;
  }

  /** @returns {Promise<ReplyWriter>} */
  async #begin() {
    const writer = await this.store.beginReply(this.conversationId, { parent_id: this.lastId, vendor: this.vendor,
                                                                      model: this.model });
    this.id ??= writer.id;
    return writer;
  }

  /** @param {() => unknown} write */
  #queue(write) {
    this.#chain = this.#chain.then(write).then(() => {}, (err) => this.onError(err));
  }
}
