/**
 * Tasks a reload left behind (issue 31 item 5). A tool call its MCP server runs as a task keeps its handle on the
 * step's stored message (`tasks`: call id -> TaskHandle, from the run's `tool_task` event: store/transcripts.js
 * keepTask). A reload, a closed tab or a crash ends the run but not the task: when the conversation is opened again
 * and its path ends in that step, without results, each task is followed again on its card (the server connected
 * first, then `mcp.task_result`: its status as it goes, its result in the end) and the step gets the results it
 * would have had. The chat then stores them and goes on with the turn (web/app/chat.js #resumeTasks).
 *
 *   pendingTasks(message) -> TaskHandle[]           the handles of a step that has no results yet
 *   await followTasks({core, message, handles, run, card, connected}) -> {parts} | {problem}
 *        parts: the step's tool results in the order of its calls; a call with no handle (an ordinary call the
 *        reload cut short) gets an error result saying so; Stop cancels the tasks (and their server is told) and
 *        gives each the result a stopped call has. problem: a sentence, when a server could not be reached or
 *        is not connected: nothing is stored and the handles stay, so opening the chat again tries again.
 */

import { t } from "./i18n.js";
import { messageOf } from "./error_notice.js";

/** @typedef {import("../types/contract").TaskHandle} TaskHandle */
/** @typedef {import("../types/contract").ToolResultPart} ToolResultPart */
/** @typedef {import("../store/transcripts.js").StoredMessage} StoredMessage */
/** @typedef {import("./tool_card.js").ToolCard} ToolCard */

// What the model reads for a call that has no result to give (the core's words for the same cases: agent/loop.py).
const STOPPED = "cancelled: stopped by the user";
const LOST = "not run to its end: the page was reloaded while the call ran, and its result was not kept";

/**
 * @param {StoredMessage} message
 * @returns {TaskHandle[]}
 */
export function pendingTasks(message) {
  if (message.role !== "assistant" || !message.tasks) return [];
  const calls = new Set(message.parts.flatMap((part) => (part.type === "tool_call" ? [part.id] : [])));
  return Object.values(message.tasks).filter((handle) => calls.has(handle.call_id));
}

/**
 * @param {{core: import("../client/orizuru.js").Agent, message: StoredMessage, handles: TaskHandle[],
 *          run: import("./turn.js").TurnRun & {interpreting?: Set<() => void>},
 *          card: (callId: string) => ToolCard | null | undefined,
 *          connected: (serverId: string) => Promise<boolean>}} options
 * @returns {Promise<{parts: ToolResultPart[]} | {problem: string}>}
 */
export async function followTasks({ core, message, handles, run, card, connected }) {
  const follows = handles.map(async (handle) => {
    const shown = card(handle.call_id);
    shown?.setStatus("running");
    if (!(await connected(handle.server_id))) throw new Error(t("tool.task.notConnected"));
    const call = core.call("mcp.task_result", { handle }, (ev) => {
      if (ev.type === "tool_progress") shown?.setProgress(ev);
    });
    const stop = () => core.cancel(call.id);
    (run.interpreting ??= new Set()).add(stop); // Stop ends the turn's calls and these
    if (run.cancelled) stop();
    try {
      return /** @type {{part: ToolResultPart}} */ (await call).part;
    } catch (err) {
      if (run.cancelled) return stopped(handle);
      throw err;
    } finally {
      run.interpreting.delete(stop);
    }
  });
  const settled = await Promise.allSettled(follows);
  const failed = settled.find((outcome) => outcome.status === "rejected");
  if (failed) {
    const problem = t("tool.task.unresumed", { message: messageOf(failed.reason) });
    for (const handle of handles) card(handle.call_id)?.setNote(problem);
    return { problem };
  }
  const results = new Map(settled.map((outcome, i) => [handles[i]?.call_id,
    /** @type {PromiseFulfilledResult<ToolResultPart>} */ (outcome).value]));
  const parts = message.parts.flatMap((part) => (part.type === "tool_call"
    ? [results.get(part.id) ?? lost(part.id, part.name)] : []));
  return { parts };
}

/**
 * @param {TaskHandle} handle
 * @returns {ToolResultPart}
 */
function stopped(handle) {
  return { type: "tool_result", call_id: handle.call_id, name: handle.name, is_error: true,
           content: [{ type: "text", text: STOPPED }], display: { stopped: true, source: `mcp:${handle.server_id}` } };
}

/**
 * @param {string} callId
 * @param {string} name
 * @returns {ToolResultPart}
 */
function lost(callId, name) {
  return { type: "tool_result", call_id: callId, name, is_error: true, content: [{ type: "text", text: LOST }] };
}
