/**
 * A turn's reply on disk while it streams: each step a stored assistant message (web/store/replies.js writes every
 * piece as it arrives), each step's tool results a message after it, in the order the events came, off the UI path.
 * A write that fails is said (`onError`) and the reply stays on screen.
 *
 *   const record = new ReplyRecord(store, conversationId, {parentId, vendor, model, onError})
 *   record.beginStep() · record.append(streamEvent) · record.finishStep({parts, status, usage, error})
 *   record.addResults(toolResultsMessage, toolMeta) · record.failed(error)   a reply that is only its error
 *   await record.settled()   every write done; record.id: the turn's first step in the store (what the reply becomes)
 */

export class ReplyRecord {
  #chain = Promise.resolve();
  #writer = null;

  constructor(store, conversationId, { parentId, vendor, model, onError }) {
    Object.assign(this, { store, conversationId, vendor, model, onError });
    this.lastId = parentId; // what the next message hangs from
    this.id = null;
  }

  beginStep() {
    this.#queue(async () => {
      this.#writer = await this.#begin();
    });
  }

  append(ev) {
    this.#queue(() => this.#writer?.append(ev));
  }

  finishStep({ parts, status, usage, error }) {
    this.#queue(async () => {
      const writer = this.#writer;
      if (!writer) return;
      this.#writer = null;
      const stored = await writer.finish({ parts, status, usage: usage ?? undefined, error: error ?? undefined });
      this.lastId = stored?.id ?? writer.id ?? this.lastId;
    });
  }

  addResults(message, toolMeta) {
    this.#queue(async () => {
      const stored = await this.store.addMessage(this.conversationId, { parent_id: this.lastId, role: "user",
                                                                        parts: message.parts, tool_meta: toolMeta });
      this.lastId = stored.id;
    });
  }

  failed(error) {
    this.#queue(async () => {
      const writer = await this.#begin();
      await writer.finish({ parts: [], status: "error", error });
    });
  }

  settled() {
    return this.#chain;
  }

  async #begin() {
    const writer = await this.store.beginReply(this.conversationId, { parent_id: this.lastId, vendor: this.vendor,
                                                                      model: this.model });
    this.id ??= writer.id;
    return writer;
  }

  #queue(write) {
    this.#chain = this.#chain.then(write).catch((err) => this.onError(err));
  }
}
