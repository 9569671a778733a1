/**
 * What an MCP server asks during a tool call, put to the user in the card of that server's running tool (or after
 * the reply): a question (elicitation: app/elicitation.js) or a request for the model (sampling: app/sampling.js).
 * The answer goes to the core (mcp.elicitation_result, mcp.sampling_answer) and is kept with the tool's result
 * (the result part's display.asked: what was asked, by whom, and what the user answered), which the card shows again.
 *
 *   askUser(event, {core, run, view, shown, transcript})
 *        shown: call id -> what the page adds to that call's result display (chat.js)
 *        run.running: call id -> the tool_start event of the tools running; run.questions and run.samplings
 *        collect what is open (closed when the run ends; a sampling's second stage finds its card by id);
 *        run.refusals keeps the notes of sampling requests refused without asking
 */

import { h } from "./dom.js";
import { Question } from "./elicitation.js";
import { SamplingRequest, refusalNote } from "./sampling.js";
import { sourceLabel } from "./approval.js";

/** @typedef {import("../types/contract").ElicitationEvent} ElicitationEvent */
/** @typedef {import("../types/contract").SamplingEvent} SamplingEvent */
/** @typedef {import("../types/contract").AskedEntry} AskedEntry */
/** @typedef {import("./elicitation.js").ElicitationReply | import("./sampling.js").SamplingReply} Reply   the user's answer, as sent */
/** What the page adds to a call's result display while the turn runs (chat.js), by call id. */
/** @typedef {Record<string, Partial<import("../types/contract").ToolDisplay>>} PageDisplay */
/**
 * The running turn's part askUser reads and fills.
 * @typedef {{running?: Map<string, {source: string}>, questions?: (Question | SamplingRequest)[],
 *            samplings?: Map<string, SamplingRequest>, refusals?: Map<string, HTMLElement>}} AskingRun
 */

/**
 * @param {ElicitationEvent | SamplingEvent} ev
 * @param {{core: {call: import("../client/orizuru.js").Agent["call"]}, run: AskingRun, view: import("./message_view.js").MessageView | null,
 *          shown: PageDisplay, transcript: HTMLElement}} where
 */
export function askUser(ev, { core, run, view, shown, transcript }) {
  const source = `mcp:${ev.server_id}`;
  const callId = [...(run.running ?? [])].findLast(([, started]) => started.source === source)?.[0];
  const asker = sourceLabel(source);
  /** @param {HTMLElement} el */
  const place = (el) => {
    const card = callId ? view?.card(callId) : null;
    if (card) card.details.open = true;
    const where = card?.el ?? view?.el;
    if (where) where.append(el);
    else transcript.append(h("li", { className: "msg" }, el));
  };
  /**
   * @param {Partial<AskedEntry>} fields
   * @param {string} id
   */
  const keep = (fields, id = ev.id) => {
    if (!callId) return;
    const asked = ((shown[callId] ??= {}).asked ??= []);
    let entry = asked.find((e) => e.id === id);
    if (!entry) {
      const text = ev.type === "sampling" ? /** @type {{text?: string} | undefined} */ (ev.messages?.at(-1))?.text : ev.message;
      entry = { id, kind: ev.type === "sampling" ? "sampling" : ev.mode, asker,
                message: text ?? "", ...(ev.type !== "sampling" && ev.url ? { url: ev.url } : {}) };
      asked.push(entry);
    }
    Object.assign(entry, fields);
  };
  if (ev.type === "sampling" && ev.stage === "refused") { // refused without asking: a note (one per server for "too many", counting)
    const notes = (run.refusals ??= new Map());
    const key = ev.refused === "too_many" ? `many:${ev.server_id}` : ev.id;
    const note = refusalNote(ev, asker, notes.get(key));
    if (!notes.has(key)) place(note);
    notes.set(key, note);
    keep({ kind: "refused", message: note.textContent, action: "refused" }, key); // the card keeps saying it
    return;
  }
  /**
   * @param {"mcp.sampling_answer" | "mcp.elicitation_result"} method
   * @param {Reply} reply
   */
  const answer = async (method, reply) => {
    await core.call(method, { id: ev.id, ...reply });
    const said = "resultText" in question ? question.resultText : undefined;
    keep({ action: reply.action, ...("content" in reply && reply.content ? { content: reply.content } : {}),
           ...(said !== undefined ? { answer: said } : {}) });
  };
  const question = ev.type === "sampling"
    ? new SamplingRequest(ev, { asker, answer: (/** @type {Reply} */ reply) => answer("mcp.sampling_answer", reply) })
    : new Question(ev, { asker, answer: (/** @type {Reply} */ reply) => answer("mcp.elicitation_result", reply) });
  if (ev.type === "sampling") (run.samplings ??= new Map()).set(ev.id, question);
  (run.questions ??= []).push(question);
  place(question.el);
  question.focus();
}
