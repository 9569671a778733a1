/**
 * The one place on the page where pycore's stream events become message parts: the reply shown while
 * it streams (app/message_view.js), the reply stored as it arrives (replies.js) and the recovery of
 * a reply cut off by a reload or a killed tab (transcripts.js) all fold events through ReplyReducer.
 * Pure, no storage, no DOM.
 *
 *   const reply = new ReplyReducer()
 *   reply.apply(event) -> change | null     what this event changed, for a view that draws as it goes:
 *       {part, index, added, delta?, done?} a part was added (added), grew by `delta` (text, reasoning
 *                                           or tool-call argument text) or was finished (done: a tool
 *                                           call's final id and arguments)
 *       {usage} | {finish_reason} | {error} the reply's usage, finish reason or error
 *   reply.result() -> {parts, usage?, finish_reason?, error?}   parts in the order of their `index`,
 *                                           in the unified Message part JSON (pycore/messages.py)
 *   replayEvents(events) -> the same result for a whole list
 *
 * `events` are pycore's unified stream events as JSON (docs/PROTOCOL.md). The loop's own events
 * (step, tool_start, ...) are not part events and change nothing here. A tool call whose arguments
 * never finished keeps the arguments that parse, else `{}`, and its raw text in
 * provider_details.partial_arguments. Adding a part type means a case here and one in exchange.js
 * (its Markdown); tests/pycore/test_contract.py fails while either side lacks it.
 */

/** @typedef {import("../types/contract").Part} Part */
/** @typedef {import("../types/contract").CoreEvent} CoreEvent */
/** @typedef {import("../types/contract").TextPart | import("../types/contract").ReasoningPart
 *            | import("../types/contract").ToolCallPart} StreamedPart   a part a stream builds */
/**
 * What one event changed: a part added, grown by `delta` or finished (`done`), or the reply's usage, finish reason
 * or error.
 * @typedef {{part: StreamedPart, index: number, added: boolean, delta?: string, done?: boolean}} PartChange
 * @typedef {PartChange | {usage: import("../types/contract").Usage} | {finish_reason: string}
 *           | {error: import("../types/contract").ErrorInfo}} Change
 */
/**
 * A reply folded from its events.
 * @typedef {{parts: StreamedPart[], usage?: import("../types/contract").Usage, finish_reason?: string,
 *            error?: import("../types/contract").ErrorInfo}} Replayed
 */

export class ReplyReducer {
  /** @type {Map<number, StreamedPart>} index -> part under construction */
  #slots = new Map();
  /** @type {Map<number, string>} index -> tool-call argument text so far */
  #rawArgs = new Map();
  /** @type {Omit<Replayed, "parts">} */
  #out = {};

  /**
   * @param {CoreEvent | null | undefined} ev
   * @returns {Change | null}
   */
  apply(ev) {
    switch (ev?.type) {
      case "text_delta": {
        const { part, index, added } = this.#slot(ev.index, () => ({ type: "text", text: "" }));
        if (part.type !== "text") return null; // another part's index: the core never sends it
        part.text += ev.text ?? "";
        if (ev.refusal) part.refusal = true;
        return { part, index, added, delta: ev.text ?? "" };
      }
      case "reasoning_delta": {
        const { part, index, added } = this.#slot(ev.index, () => ({ type: "reasoning", text: "" }));
        if (part.type !== "reasoning") return null;
        part.text = (part.text ?? "") + (ev.text ?? "");
        return { part, index, added, delta: ev.text ?? "" };
      }
      case "tool_call_start": {
        const change = this.#slot(ev.index, () => ({ type: "tool_call", id: ev.id, name: ev.name, arguments: {} }));
        this.#rawArgs.set(change.index, "");
        return change;
      }
      case "tool_call_args_delta": {
        const part = this.#slots.get(ev.index);
        if (part?.type !== "tool_call") return null; // arguments of a call that never started
        this.#rawArgs.set(ev.index, (this.#rawArgs.get(ev.index) ?? "") + (ev.delta ?? ""));
        return { part, index: ev.index, added: false, delta: ev.delta ?? "" };
      }
      case "tool_call_end": {
        const change = this.#slot(ev.index, () => ({ type: "tool_call", id: ev.id, name: ev.name, arguments: {} }));
        if (change.part.type !== "tool_call") return null;
        change.part.id = ev.id ?? change.part.id;
        change.part.arguments = ev.arguments ?? {};
        this.#rawArgs.delete(change.index);
        return { ...change, done: true };
      }
      case "usage":
        this.#out.usage = ev.usage;
        return { usage: ev.usage };
      case "finish":
        this.#out.finish_reason = ev.reason;
        return { finish_reason: ev.reason };
      case "error":
        this.#out.error = ev.error;
        return { error: ev.error };
      default:
        return null;
    }
  }

  /** @returns {Replayed} */
  result() {
    const parts = [...this.#slots.entries()].sort((a, b) => a[0] - b[0]).map(([index, part]) => {
      const raw = this.#rawArgs.get(index);
      if (part.type !== "tool_call" || !raw) return { ...part };
      try {
        return { ...part, arguments: JSON.parse(raw) };
      } catch {
        return { ...part, provider_details: { ...part.provider_details, partial_arguments: raw } };
      }
    });
    return { ...this.#out, parts };
  }

  /**
   * @param {number} index
   * @param {() => StreamedPart} make
   * @returns {{part: StreamedPart, index: number, added: boolean}}
   */
  #slot(index, make) {
    const key = Number.isInteger(index) ? index : this.#slots.size;
    const added = !this.#slots.has(key);
    if (added) this.#slots.set(key, make());
    return { part: /** @type {StreamedPart} */ (this.#slots.get(key)), index: key, added };
  }
}

/**
 * @param {Iterable<CoreEvent>} events
 * @returns {Replayed}
 */
export function replayEvents(events) {
  const reply = new ReplyReducer();
  for (const ev of events) reply.apply(ev);
  return reply.result();
}

/** The readable text of a message's parts (text, reasoning, tool names/arguments, tool results, file names). */
/** @param {readonly Part[] | null | undefined} parts */
export function textOfParts(parts) {
  const out = [];
  for (const part of parts ?? []) {
    if (part.type === "text" || part.type === "reasoning") out.push(part.text ?? "");
    else if (part.type === "tool_call") out.push(`${part.name} ${JSON.stringify(part.arguments ?? {})}`);
    else if (part.type === "document") out.push(part.name); // found by its name; its text is the file's
    else if (part.type === "tool_result") {
      for (const item of part.content ?? []) if (item && "text" in item && typeof item.text === "string") out.push(item.text);
    }
  }
  return out.join("\n");
}

/** pycore result parts ({type: image, data, mime_type}) as the MCP content items a card draws ({mimeType}). */
/**
 * @param {import("../types/contract").ToolResultPart["content"] | null} items
 * @returns {Record<string, unknown>[]}
 */
export function toMcpContent(items) {
  return (items ?? []).map((item) => (item.type === "image" ? { type: "image", data: item.data, mimeType: item.mime_type }
    : { ...item })); // a text part is an MCP text item as it is
}
