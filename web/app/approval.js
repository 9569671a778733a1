/**
 * The one question the page asks before a tool runs, wherever it is asked: on a tool card for the model's call
 * (tool_card.js), on an MCP App view for the view's own call (mcp_app/view.js). Both answer the core's one
 * approval event (pycore.agent.approval.ask_user, the contract's ApprovalEvent): who asks and why, which tool,
 * with which arguments, then Allow once / Always allow / Deny.
 *
 *   approvalQuestion(ask, {title, decide, who, asker?}) -> the question's elements, for a section of the caller's
 *       who: name the server and the tool (a card); a view's own call names them in its title already
 *       asker: the model that wants the call, where several ask at once (a Compare's columns)
 *   sourceLabel(source) -> how a tool's source is named to the user
 *   argumentsView(args) -> the arguments, one top-level entry a line, long values folded
 */

import { h } from "./dom.js";
import { language, t } from "./i18n.js";

const FOLD_CHARS = 120; // a value longer than this (as pretty JSON), or of more lines than FOLD_LINES, is folded
const FOLD_LINES = 4;
const PREVIEW_CHARS = 60;

/** @typedef {"allow" | "always" | "deny"} Decision */

/**
 * @param {Partial<import("../types/contract").ApprovalEvent>} ask
 * @param {{title: string, decide: (decision: Decision) => void, who: boolean, asker?: string | null}} options
 * @returns {HTMLElement[]}
 */
export function approvalQuestion(ask, { title, decide, who, asker = null }) {
  const reason = ask.reason?.kind === "cross_server"
    // Why it asks although allowed: data from another server's tools in this reply (pycore.agent.loop).
    ? h("p", { className: "approval-reason", role: "note" },
        t("tool.askCrossServer", { servers: (ask.reason.from ?? []).map((s) => sourceLabel(s)).join(", ") }))
    : null;
  const model = asker ? [h("dt", {}, t("tool.askModel")), h("dd", { className: "approval-model" }, asker)] : [];
  const facts = who
    ? [...model, h("dt", {}, t("tool.askServer")), h("dd", { className: "approval-server" }, sourceLabel(ask.source)),
       h("dt", {}, t("tool.askTool")), h("dd", { className: "approval-tool" }, ask.original_name ?? ask.name ?? "")]
    : [];
  const button = (/** @type {Decision} */ decision, /** @type {string} */ className, /** @type {string} */ label) =>
    h("button", { type: "button", className, onclick: () => decide(decision) }, t(label));
  return [h("h4", {}, title), ...(reason ? [reason] : []),
    h("dl", { className: "approval-facts" }, ...facts,
      h("dt", { className: "approval-args-label" }, t("tool.arguments")),
      h("dd", { className: "approval-args" }, argumentsView(ask.arguments))),
    h("div", { className: "approval-actions" }, button("allow", "approve primary", "tool.allowOnce"),
      button("always", "always", "tool.alwaysAllow"), button("deny", "deny", "tool.deny"))];
}

/** @param {string} [source] */
export function sourceLabel(source = "") {
  if (source.startsWith("mcp:url:")) return source.slice("mcp:url:".length);
  if (source.startsWith("mcp:relay:")) return t("tool.sourceRelay", { name: source.slice("mcp:relay:".length) });
  if (source.startsWith("mcp:")) return source.slice("mcp:".length);
  if (source.startsWith("python:")) return t("tool.sourcePython");
  if (source === "page") return t("tool.sourcePage");
  return source;
}

/**
 * The arguments as pretty JSON, one top-level entry a line; a long value is folded into a <details>
 * whose summary starts the value and says how long it is (a long string opens as its text, lines kept).
 * @param {unknown} args
 */
export function argumentsView(args) {
  if (!args || typeof args !== "object" || Array.isArray(args)) {
    return h("pre", { className: "json-args" }, JSON.stringify(args ?? {}, null, 2));
  }
  const entries = Object.entries(args);
  if (!entries.length) return h("pre", { className: "json-args" }, "{}");
  const rows = entries.map(([key, value], i) => {
    const pretty = JSON.stringify(value, null, 2) ?? String(value);
    const comma = i < entries.length - 1 ? "," : "";
    const head = h("span", { className: "json-key" }, `  ${JSON.stringify(key)}: `);
    if (pretty.length <= FOLD_CHARS && pretty.split("\n").length <= FOLD_LINES) {
      return h("div", { className: "json-row" }, head, h("span", { className: "json-value" }, pretty + comma));
    }
    const full = typeof value === "string" ? value : pretty;
    const firstLine = pretty.split("\n", 1)[0];
    const preview = firstLine.length > PREVIEW_CHARS ? `${firstLine.slice(0, PREVIEW_CHARS)}…` : `${firstLine} …`;
    return h("div", { className: "json-row" }, head,
      h("details", { className: "json-fold" },
        h("summary", {}, h("span", { className: "json-value" }, preview),
          h("span", { className: "json-size" }, ` (${t("tool.characters", { count: number(full.length) })})${comma}`)),
        h("pre", { className: "json-full" }, full)));
  });
  return h("div", { className: "json-args" }, h("div", {}, "{"), ...rows, h("div", {}, "}"));
}

/** @param {number} n */
function number(n) {
  return new Intl.NumberFormat(language()).format(n);
}
