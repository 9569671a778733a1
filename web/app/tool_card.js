/**
 * A tool call as a collapsible card: name, status and duration in the summary; arguments and the
 * result inside; a progress bar while the tool reports progress; and, while the policy asks, the
 * approval: which server asks, for which tool, with which arguments, and Allow once / Always allow
 * this tool / Deny.
 *
 *   const card = new ToolCard({name, callId, images, onDecision: (decision, ask) => ...})
 *   card.argsDelta(text); card.setArguments(obj, rawText?)   rawText: the call's raw_arguments (text that was
 *                                 not a JSON object: the call was not run), shown as written; by default the
 *                                 streamed deltas when they were not one
 *   card.setStatus("preparing"|"waiting"|"running"|"done"|"error"|"denied"|"stopped")
 *   card.askApproval({source, original_name, arguments, reason?}, {asker?})   the approval event (docs/PROTOCOL.md);
 *                                 reason {kind: "cross_server", from} says why an allowed tool asks
 *                                 onDecision("allow" | "always" | "deny", that event) once a button is pressed
 *   await card.askForCode(approvalEvent) -> "allow" | "always" | "deny"   code mode: the code of this `python` call
 *                                 asks to run a tool (web/app/code_calls.js); the question says so, names the server,
 *                                 the tool and the arguments, and leaves the card's own status alone. One at a
 *                                 time: the code's next question waits for the answer to this one
 *   card.setProgress({progress, total?, message?, task?})   a tool_progress event (task: an MCP task's status)
 *   card.setNote(text)            a sentence in the progress's place (a task a reload left that could not be followed)
 *   card.setResult(contentItems, {isError, durationMs, structured, schemaProblem, openResource})
 *                                 structured: the tool's structuredContent, shown as data; schemaProblem: how it
 *                                 breaks the tool's outputSchema, flagged; openResource(uri): reads a resource
 *                                 link through the client (its "Open" button)
 *   card.showAsked(entries)       what the tool's server asked during the call (display.asked: a form, a link,
 *                                 a request for the model) and what the user answered, drawn again from the transcript
 *   card.showView(view)           an MCP App view of the result (web/mcp_app/view.js) under the summary, once:
 *                                 drawn again (end of turn, reload) the card gets a new one
 *   card.showOpeners([{label, open}])   buttons that open what the call made as artifacts (web/artifacts/)
 *   card.destroy()                its view's frames go (the card is drawn again or the chat changes)
 *   card.el                       the element
 *
 * Everything on the card that a server or the model chose (the tool's name, the arguments, the progress
 * message, the server's URL) is set as text. Tool results are untrusted too: they go through
 * renderToolContent (web/render/tool_result.js), which sanitizes them and loads nothing remote.
 */

import { highlightCode } from "../render/highlight.js";
import { sanitizeToFragment } from "../render/sanitize.js";
import { renderToolContent } from "../render/tool_result.js";
import { PYTHON_TOOL } from "../sandbox/tool.js";
import { approvalQuestion } from "./approval.js";
import { h } from "./dom.js";
import { language, t } from "./i18n.js";


/** @typedef {"allow" | "always" | "deny"} Decision */
/** @typedef {"preparing" | "waiting" | "running" | "done" | "error" | "denied" | "stopped"} ToolStatus */
/** @typedef {import("../render/tool_result.js").McpItem} McpItem */
/** @typedef {import("../types/contract").AskedEntry} AskedEntry */
/** @typedef {{el: HTMLElement, close: () => void}} CardView   an MCP App view (web/mcp_app/view.js AppView) */
/**
 * How a call ended, beside its content (a tool_end event, or a result part's display: ToolDisplay).
 * @typedef {{isError?: boolean, durationMs?: number, structured?: Record<string, unknown> | null,
 *            schemaProblem?: string | null, openResource?: import("../render/tool_result.js").OpenResource | null}}
 *   ResultOptions
 */

export class ToolCard {
  /**
   * @param {{name: string, callId?: string, images: import("../render/images.js").ImagePolicy,
   *          onDecision?: (decision: Decision, ask: unknown) => void}} options
   */
  constructor({ name, callId, images, onDecision = () => {} }) {
    this.name = name;
    this.callId = callId;
    this.images = images;
    this.onDecision = onDecision;
    this.rawArgs = "";
    /** @type {Promise<unknown>} the code's last question (code mode): the next waits for its answer */
    this.codeAsks = Promise.resolve();
    this.statusEl = h("span", { className: "tool-status" });
    this.durationEl = h("span", { className: "tool-duration" });
    this.argsEl = h("pre", { className: "tool-args" });
    this.resultEl = h("div", { className: "tool-result" });
    this.bar = h("progress", { "aria-label": t("tool.progress", { name }) });
    this.progressText = h("span", { className: "tool-progress-text" });
    this.progressEl = h("div", { className: "tool-progress", hidden: true }, this.bar, this.progressText);
    this.approvalEl = h("section", { className: "tool-approval", "aria-label": t("tool.approval", { name }),
                                     hidden: true });
    this.details = h("details", { className: "tool-details" },
      h("summary", {}, h("span", { className: "tool-name" }, name), " · ", this.statusEl, this.durationEl),
      h("div", { className: "tool-section" }, h("h4", {}, t("tool.arguments")), this.argsEl),
      h("div", { className: "tool-section" }, h("h4", {}, t("tool.result")), this.resultEl));
    this.el = h("div", { className: "tool-card", role: "group", "aria-label": t("tool.card", { name }),
                         dataset: { callId: callId ?? "" } }, this.details, this.progressEl, this.approvalEl);
    this.setStatus("preparing");
  }

  /** @param {CardView} view */
  showView(view) {
    this.view?.close();
    this.view = view;
    this.el.insertBefore(view.el, this.progressEl);
  }

  destroy() {
    this.view?.close();
  }

  /**
   * Buttons under the summary that open what the call made in the artifact panel (web/artifacts/): a document the
   * `artifact` tool kept, the pictures and files the code wrote.
   * @param {{label: string, open: () => void}[]} items
   */
  showOpeners(items) {
    this.openersEl?.remove();
    if (!items.length) return;
    this.openersEl = h("div", { className: "tool-openers" },
      items.map(({ label, open }) => h("button", { type: "button", className: "artifact-open", onclick: open }, label)));
    this.el.insertBefore(this.openersEl, this.progressEl);
  }

  /** @param {AskedEntry[]} [entries] */
  showAsked(entries = []) {
    this.askedEl?.remove();
    if (!entries.length) return;
    this.askedEl = h("section", { className: "tool-asked", "aria-label": t("asked.title") },
      h("h4", {}, t("asked.title")), h("ul", {}, entries.map(askedItem)));
    this.details.append(this.askedEl);
  }

  /** @param {string} text */
  argsDelta(text) {
    this.rawArgs += text;
    this.argsEl.textContent = this.rawArgs;
  }

  /**
   * @param {Record<string, unknown> | undefined} args
   * @param {unknown} [raw]   the call's text when it was not a JSON object
   */
  setArguments(args, raw = unparsed(args, this.rawArgs)) {
    if (typeof raw === "string") {
      // Not a JSON object as the model wrote it (cut off, broken): the call was not run (pycore.agent.loop), and the
      // card shows the text itself, not the {} kept in its place (pycore.messages.ToolCallPart.raw_arguments).
      this.argsEl.textContent = raw;
      return;
    }
    const source = args?.code;
    if (this.name === PYTHON_TOOL.name && typeof source === "string") {
      // The code interpreter's call: its code, highlighted (escaped by highlight.js, then sanitized).
      const code = h("code", { className: "hljs language-python" });
      code.append(sanitizeToFragment(highlightCode(source, "python").html));
      this.argsEl.replaceChildren(code);
      this.argsEl.classList.add("tool-code");
      return;
    }
    this.argsEl.textContent = JSON.stringify(args ?? {}, null, 2);
  }

  /** @param {ToolStatus} status */
  setStatus(status) {
    this.status = status;
    this.el.dataset.status = status;
    this.statusEl.textContent = t(`tool.status.${status}`);
    if (status !== "waiting") this.cancelApproval(); // answered here, or decided elsewhere (Always allow)
  }

  /**
   * @param {Partial<import("../types/contract").ApprovalEvent>} [ask]
   * @param {{asker?: string | null}} [options]   asker: the model that wants the call (a Compare's column)
   */
  askApproval(ask = {}, { asker = null } = {}) {
    this.setStatus("waiting");
    /** @param {Decision} decision */
    const decide = (decision) => {
      this.setStatus(decision === "deny" ? "denied" : "running");
      this.onDecision(decision, ask);
    };
    const tool = ask.original_name ?? this.name; // the tool's own name: the model's may carry a prefix
    this.approvalEl.setAttribute("aria-label", t("tool.approval", { name: tool }));
    this.approvalEl.replaceChildren(...approvalQuestion({ ...ask, original_name: tool }, {
      title: t("tool.askTitle"), decide, who: true, asker }));
    this.approvalEl.hidden = false;
  }

  /**
   * @param {Partial<import("../types/contract").ApprovalEvent>} ask
   * @param {AbortSignal | null} [signal]   the run ended (Stop): the question goes, answered no
   * @returns {Promise<Decision>}
   */
  askForCode(ask, signal = null) {
    const asked = this.codeAsks.then(() => new Promise((resolve) => {
      const tool = ask.original_name ?? ask.name ?? "";
      const section = h("section", { className: "tool-approval code-approval", "aria-label": t("tool.codeApproval", { name: tool }) });
      /** @param {Decision} decision */
      const decide = (decision) => {
        section.remove();
        signal?.removeEventListener("abort", stop);
        resolve(decision);
      };
      const stop = () => decide("deny");
      if (signal?.aborted) return stop();
      signal?.addEventListener("abort", stop);
      section.append(...approvalQuestion({ ...ask, original_name: tool }, {
        title: t("tool.codeAsks", { name: tool }), who: true, decide }));
      this.el.append(section);
      return undefined;
    }));
    this.codeAsks = asked;
    return /** @type {Promise<Decision>} */ (asked);
  }

  cancelApproval() {
    this.approvalEl.hidden = true;
    this.approvalEl.replaceChildren();
  }

  /** @param {Partial<import("../types/contract").ToolProgressEvent>} [event]   a tool_progress event; with `task`, the
   *  status of the task the server runs the call as (its statusMessage as `message`), said in place of a count */
  setProgress({ progress, total, message, task } = {}) {
    if (typeof progress !== "number") return;
    this.el.dataset.task = task ?? "";
    this.bar.hidden = false;
    if (task) {
      this.bar.removeAttribute("value");
      this.bar.removeAttribute("max");
      this.progressText.replaceChildren(message ? `${message} · ` : "",
                                        h("span", { className: "tool-task-status" }, t(`tool.task.${task}`)));
      this.progressEl.hidden = false;
      return;
    }
    if (typeof total === "number" && total > 0) {
      this.bar.max = total;
      this.bar.value = Math.min(progress, total);
    } else {
      this.bar.removeAttribute("value"); // no total: an indeterminate bar
      this.bar.removeAttribute("max");
    }
    const count = typeof total === "number" && total > 0
      ? t("tool.progressOf", { progress: number(progress), total: number(total) }) : number(progress);
    this.progressText.replaceChildren(message ? `${message} · ` : "", h("span", { className: "tool-progress-count" }, count));
    this.progressEl.hidden = false;
  }

  /** @param {string} text   a sentence where the progress goes, no bar: a task that could not be followed again */
  setNote(text) {
    this.el.dataset.task = "unresumed";
    this.bar.hidden = true;
    this.progressText.replaceChildren(text);
    this.progressEl.hidden = false;
  }

  /**
   * @param {McpItem[] | null | undefined} content
   * @param {ResultOptions} [options]
   */
  setResult(content, { isError = false, durationMs, structured, schemaProblem = null, openResource = null } = {}) {
    this.cancelApproval();
    this.progressEl.hidden = true; // the result says how it ended
    // A structured result is shown as data, in place of the text that only restates it as JSON; a primitive the
    // server wrapped as {result} beside the same text (as SDKs do for a plain return value) adds nothing.
    const data = structured !== undefined && structured !== null && !restated(structured.result, content, structured)
      ? structured : null;
    const items = data === null ? content ?? [] : (content ?? []).filter((item) => !sameJSON(item, data));
    renderToolContent(this.resultEl, items, { images: this.images, openResource,
                                              labels: { open: (name) => t("tool.openResource", { name }),
                                                        openFailed: (message) => t("tool.openFailed", { message }) } });
    if (schemaProblem) {
      this.resultEl.append(h("p", { className: "tool-schema-problem", role: "note" },
        t("tool.schemaProblem", { problem: schemaProblem })));
    }
    if (data !== null) {
      this.resultEl.append(h("section", { className: "tool-structured", "aria-label": t("tool.structured") },
        h("h5", {}, t("tool.structured")), h("pre", { className: "json-args" }, JSON.stringify(data, null, 2))));
    }
    if (this.status !== "denied" && this.status !== "stopped") this.setStatus(isError ? "error" : "done");
    if (typeof durationMs === "number" && durationMs > 0) {
      this.durationEl.textContent = ` · ${t("tool.duration", { ms: Math.round(durationMs) })}`;
    }
  }
}

/**
 * Who offers a tool, by the identity the user gave it: the URL they added, the relay's name for a relay
 * server, their own Python tools, this page. Never a name the server chose for itself.
 */
/** @type {Record<AskedEntry["kind"], string>} */
const ASKED_KINDS = { form: "asked.form", url: "asked.url", sampling: "asked.sampling", refused: "asked.refused" };

/**
 * One thing a server asked, and the answer, as text.
 * @param {AskedEntry} entry
 */
function askedItem(entry) {
  const what = t(ASKED_KINDS[entry.kind] ?? "asked.form", { server: entry.asker ?? "", message: entry.message ?? "" });
  const outcome = entry.kind === "refused" ? "" // the note says it all
    : t(`asked.${entry.kind === "sampling" ? "sampling" : "question"}.${entry.action ?? "none"}`);
  return h("li", { dataset: { action: entry.action ?? "none" } },
    h("p", { className: "asked-what" }, what),
    entry.url ? h("p", {}, h("code", { className: "question-url" }, entry.url)) : null,
    outcome ? h("p", { className: "asked-outcome" }, outcome) : null,
    entry.content ? h("pre", { className: "json-args" }, JSON.stringify(entry.content, null, 2)) : null,
    entry.answer ? h("p", { className: "sampling-answer" }, entry.answer) : null);
}

/**
 * The streamed argument text when the call ended with none parsed from it (not a JSON object), else null.
 * @param {Record<string, unknown> | undefined} args
 * @param {string} streamed
 * @returns {string | null}
 */
function unparsed(args, streamed) {
  if (!streamed.trim() || (args && Object.keys(args).length)) return null;
  try {
    const value = JSON.parse(streamed);
    return value && typeof value === "object" && !Array.isArray(value) ? null : streamed;
  } catch {
    return streamed;
  }
}

/**
 * A text item that is the value as JSON.
 * @param {McpItem} item
 * @param {unknown} value
 */
function sameJSON(item, value) {
  if (item?.type !== "text") return false;
  try {
    return JSON.stringify(JSON.parse(String(item.text))) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/**
 * {result: v} beside a text item saying v: an SDK's wrapping of a plain return value.
 * @param {unknown} value
 * @param {McpItem[] | null | undefined} content
 * @param {Record<string, unknown>} structured
 */
function restated(value, content, structured) {
  if (typeof structured !== "object" || Array.isArray(structured) || Object.keys(structured).length !== 1 ||
      !("result" in structured)) return false;
  return (content ?? []).some((item) => item?.type === "text" && (item.text === String(value) || sameJSON(item, value)));
}

/** @param {number} n */
function number(n) {
  return new Intl.NumberFormat(language()).format(n);
}
