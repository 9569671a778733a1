/**
 * What an MCP server asks during a tool call, put to the user in the card of that server's running tool (or after
 * the reply): a question (elicitation: app/elicitation.js) or a request for the model (sampling: app/sampling.js).
 * The answer goes to the core (mcp.elicitation_result, mcp.sampling_answer) and is kept with the tool's result
 * (tool_meta[call id].asked: what was asked, by whom, and what the user answered), which the card shows again.
 *
 *   askUser(event, {core, run, view, toolMeta, transcript})
 *        run.running: call id -> the tool_start event of the tools running; run.questions and run.samplings
 *        collect what is open (closed when the run ends; a sampling's second stage finds its card by id);
 *        run.refusals keeps the notes of sampling requests refused without asking
 */

import { h } from "./dom.js";
import { Question } from "./elicitation.js";
import { SamplingRequest, refusalNote } from "./sampling.js";
import { sourceLabel } from "./tool_card.js";

export function askUser(ev, { core, run, view, toolMeta, transcript }) {
  const source = `mcp:${ev.server_id}`;
  const callId = [...(run.running ?? [])].findLast(([, started]) => started.source === source)?.[0];
  const asker = sourceLabel(source);
  const place = (el) => {
    const card = callId ? view?.card(callId) : null;
    if (card) card.details.open = true;
    if (card || view) (card?.el ?? view.el).append(el);
    else transcript.append(h("li", { className: "msg" }, el));
  };
  const keep = (fields, id = ev.id) => {
    if (!callId) return;
    const asked = ((toolMeta[callId] ??= {}).asked ??= []);
    let entry = asked.find((e) => e.id === id);
    if (!entry) {
      entry = { id, kind: ev.type === "sampling" ? "sampling" : ev.mode, asker,
                message: ev.message ?? ev.messages?.at(-1)?.text ?? "", ...(ev.url ? { url: ev.url } : {}) };
      asked.push(entry);
    }
    Object.assign(entry, fields);
  };
  if (ev.stage === "refused") { // refused without asking: a note (one per server for "too many", counting)
    const notes = (run.refusals ??= new Map());
    const key = ev.refused === "too_many" ? `many:${ev.server_id}` : ev.id;
    const note = refusalNote(ev, asker, notes.get(key));
    if (!notes.has(key)) place(note);
    notes.set(key, note);
    keep({ kind: "refused", message: note.textContent, action: "refused" }, key); // the card keeps saying it
    return;
  }
  const answer = async (method, reply) => {
    await core.call(method, { id: ev.id, ...reply });
    keep({ action: reply.action, ...(reply.content ? { content: reply.content } : {}),
           ...(question.resultText !== undefined ? { answer: question.resultText } : {}) });
  };
  const question = ev.type === "sampling"
    ? new SamplingRequest(ev, { asker, answer: (reply) => answer("mcp.sampling_answer", reply) })
    : new Question(ev, { asker, answer: (reply) => answer("mcp.elicitation_result", reply) });
  if (ev.type === "sampling") (run.samplings ??= new Map()).set(ev.id, question);
  (run.questions ??= []).push(question);
  place(question.el);
  question.focus();
}
