/**
 * What an MCP server asks during a tool call, put to the user in the card of that server's running tool (or after
 * the reply): a question (elicitation: app/elicitation.js) or a request for the model (sampling: app/sampling.js).
 * The answer goes to the core (mcp.elicitation_result, mcp.sampling_answer) and is kept with the tool's result
 * (tool_meta[call id].asked: what was asked, by whom, and what the user answered), which the card shows again.
 *
 *   askUser(event, {core, run, view, toolMeta, transcript})
 *        run.running: call id -> the tool_start event of the tools running; run.questions and run.samplings
 *        collect what is open (closed when the run ends; a sampling's second stage finds its card by id)
 */

import { h } from "./dom.js";
import { Question } from "./elicitation.js";
import { SamplingRequest } from "./sampling.js";
import { sourceLabel } from "./tool_card.js";

export function askUser(ev, { core, run, view, toolMeta, transcript }) {
  const source = `mcp:${ev.server_id}`;
  const callId = [...(run.running ?? [])].findLast(([, started]) => started.source === source)?.[0];
  const asker = sourceLabel(source);
  const keep = (fields) => {
    if (!callId) return;
    const asked = ((toolMeta[callId] ??= {}).asked ??= []);
    let entry = asked.find((e) => e.id === ev.id);
    if (!entry) {
      entry = { id: ev.id, kind: ev.type === "sampling" ? "sampling" : ev.mode, asker,
                message: ev.message ?? ev.messages?.at(-1)?.text ?? "", ...(ev.url ? { url: ev.url } : {}) };
      asked.push(entry);
    }
    Object.assign(entry, fields);
  };
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
  const card = callId ? view?.card(callId) : null;
  if (card) card.details.open = true;
  if (card || view) (card?.el ?? view.el).append(question.el);
  else transcript.append(h("li", { className: "msg" }, question.el));
  question.focus();
}
