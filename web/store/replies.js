/**
 * ReplyWriter: streams one assistant reply into storage as it arrives. Made by store.beginReply().
 *
 *   writer.id, writer.message                the StoredMessage (status "streaming")
 *   writer.append(event) -> Promise<bool>    one pycore stream event (text_delta, tool_call_start, ...);
 *                                            stored as its own small record. Resolves true once it is
 *                                            on disk, false when it could not be written (quota: the
 *                                            store reported it through onError; it stays in memory
 *                                            and is retried with the next write). Never rejects.
 *   writer.flushed() -> Promise              every event appended so far has been tried
 *   writer.snapshot() -> StoredMessage       the reply so far, rebuilt from the events in memory
 *   writer.finish({parts?, status?, usage?, finish_reason?, error?}) -> Promise<StoredMessage>
 *                                            compacts the event records into the message (parts given,
 *                                            else rebuilt from the events) and releases the writer lock.
 *                                            status: "complete" (default) | "interrupted" (Stop, cut off) | "error"
 *
 * Batching: there is no timer. The first event starts a transaction at once; events that arrive
 * while it commits wait and go together in the next one, so a fast stream costs one transaction per
 * commit, a slow one one per event, and an event is never held back longer than one commit. The
 * records keep their order: a batch that fails goes back to the front of the queue.
 *
 * While the writer lives it holds a Web Lock named after the message (locks.js); a reader in any tab
 * that finds the message "streaming" and that lock free knows the writer is gone (reload, closed or
 * killed tab) and turns the message "interrupted", keeping every stored event.
 */

import { replayEvents } from "./reduce.js";

/** @typedef {import("./transcripts.js").StoredMessage} StoredMessage */
/** @typedef {import("../types/contract").CoreEvent} CoreEvent */
/** @typedef {{message_id: string, conversation_id: string, event: CoreEvent}} DeltaRecord */
/**
 * How a reply ends (finish()): the parts given (else rebuilt from the events), its status and what the stream said.
 * @typedef {{parts?: import("../types/contract").Part[], status?: StoredMessage["status"],
 *            usage?: StoredMessage["usage"], finish_reason?: string, error?: StoredMessage["error"]}} Ending
 */

export class ReplyWriter {
  /**
   * @param {import("./transcripts.js").Store} store
   * @param {StoredMessage} message
   * @param {() => void} release   lets go of the writer lock
   */
  constructor(store, message, release) {
    this.store = store;
    this.message = message;
    /** @type {CoreEvent[]} */
    this.events = [];
    /** @type {{record: DeltaRecord, resolve: (written: boolean) => void}[]} */
    this.queue = [];
    /** @type {Promise<void> | null} */
    this.flushing = null;
    this.closed = false;
    this.release = release;
  }

  get id() {
    return this.message.id;
  }

  /**
   * @param {CoreEvent} event
   * @returns {Promise<boolean>}
   */
  append(event) {
    if (this.closed) throw new Error("this reply is already finished; start a new one with beginReply()");
    this.events.push(event);
    const record = { message_id: this.message.id, conversation_id: this.message.conversation_id, event };
    return new Promise((resolve) => {
      this.queue.push({ record, resolve });
      this.flushing ??= this.#flush();
    });
  }

  async flushed() {
    while (this.flushing) await this.flushing;
  }

  /** @returns {StoredMessage} */
  snapshot() {
    const replayed = replayEvents(this.events);
    return { ...this.message, ...replayed, status: this.closed ? this.message.status : "streaming" };
  }

  /**
   * @param {Ending} [ending]
   * @returns {Promise<StoredMessage>}
   */
  async finish({ parts, status = "complete", usage, finish_reason, error } = {}) {
    if (this.closed) throw new Error("this reply is already finished");
    this.closed = true;
    await this.flushed();
    const replayed = replayEvents(this.events);
    const final = {
      ...this.message,
      parts: parts ?? replayed.parts,
      status,
      usage: usage ?? replayed.usage,
      finish_reason: finish_reason ?? replayed.finish_reason,
      error: error ?? replayed.error,
      finished: Date.now(),
    };
    for (const key of /** @type {const} */ (["usage", "finish_reason", "error"])) if (final[key] === undefined) delete final[key];
    try {
      this.message = await this.store.compactReply(final);
    } finally {
      this.queue.length = 0;
      this.store.writers.delete(this.id);
      this.release();
    }
    return this.message;
  }

  async #flush() {
    try {
      await null; // let a synchronous burst of appends join the first batch
      while (this.queue.length) {
        const batch = this.queue.splice(0);
        const saved = await this.store.appendDeltas(this.message, batch.map((b) => b.record));
        for (const b of batch) b.resolve(saved);
        if (!saved) {
          this.queue.unshift(...batch.map(({ record }) => ({ record, resolve: () => {} })));
          break; // retried with the next append or at finish
        }
      }
    } finally {
      this.flushing = null;
    }
  }
}
