/**
 * A tool call as a collapsible card: name, status and duration in the summary; arguments and the
 * result inside; a progress bar while the tool reports progress; Approve / Deny beside the summary
 * while the policy asks.
 *
 *   const card = new ToolCard({name, callId, images, onDecision: (decision) => ...})
 *   card.argsDelta(text); card.setArguments(obj)
 *   card.setStatus("preparing"|"waiting"|"running"|"done"|"error"|"denied"|"stopped")
 *   card.askApproval()            shows the two buttons until one is pressed
 *   card.setProgress({progress, total?, message?})   a tool_progress event (the message is set as text)
 *   card.setResult(contentItems, {isError, durationMs})
 *   card.el                       the element
 *
 * Tool results are untrusted: they go through renderToolContent (web/render/tool_result.js), which
 * sanitizes them and loads nothing remote.
 */

import { renderToolContent } from "../render/tool_result.js";
import { h } from "./dom.js";
import { language, t } from "./i18n.js";

export class ToolCard {
  constructor({ name, callId, images, onDecision = () => {} }) {
    this.name = name;
    this.callId = callId;
    this.images = images;
    this.onDecision = onDecision;
    this.rawArgs = "";
    this.statusEl = h("span", { className: "tool-status" });
    this.durationEl = h("span", { className: "tool-duration" });
    this.argsEl = h("pre", { className: "tool-args" });
    this.resultEl = h("div", { className: "tool-result" });
    this.bar = h("progress", { "aria-label": t("tool.progress", { name }) });
    this.progressText = h("span", { className: "tool-progress-text" });
    this.progressEl = h("div", { className: "tool-progress", hidden: true }, this.bar, this.progressText);
    this.approvalEl = h("div", { className: "tool-approval", hidden: true });
    this.details = h("details", { className: "tool-details" },
      h("summary", {}, h("span", { className: "tool-name" }, name), " · ", this.statusEl, this.durationEl),
      h("div", { className: "tool-section" }, h("h4", {}, t("tool.arguments")), this.argsEl),
      h("div", { className: "tool-section" }, h("h4", {}, t("tool.result")), this.resultEl));
    this.el = h("div", { className: "tool-card", role: "group", "aria-label": t("tool.card", { name }),
                         dataset: { callId: callId ?? "" } }, this.details, this.progressEl, this.approvalEl);
    this.setStatus("preparing");
  }

  argsDelta(text) {
    this.rawArgs += text;
    this.argsEl.textContent = this.rawArgs;
  }

  setArguments(args) {
    this.argsEl.textContent = JSON.stringify(args ?? {}, null, 2);
  }

  setStatus(status) {
    this.status = status;
    this.el.dataset.status = status;
    this.statusEl.textContent = t(`tool.status.${status}`);
  }

  askApproval() {
    this.setStatus("waiting");
    const decide = (decision) => {
      this.approvalEl.hidden = true;
      this.approvalEl.replaceChildren();
      this.setStatus(decision === "allow" ? "running" : "denied");
      this.onDecision(decision);
    };
    this.approvalEl.replaceChildren(
      h("button", { type: "button", className: "approve", onclick: () => decide("allow") }, t("tool.approve")),
      h("button", { type: "button", className: "deny", onclick: () => decide("deny") }, t("tool.deny")));
    this.approvalEl.hidden = false;
  }

  cancelApproval() {
    this.approvalEl.hidden = true;
    this.approvalEl.replaceChildren();
  }

  setProgress({ progress, total, message } = {}) {
    if (typeof progress !== "number") return;
    if (typeof total === "number" && total > 0) {
      this.bar.max = total;
      this.bar.value = Math.min(progress, total);
    } else {
      this.bar.removeAttribute("value"); // no total: an indeterminate bar
      this.bar.removeAttribute("max");
    }
    const count = typeof total === "number" && total > 0
      ? t("tool.progressOf", { progress: number(progress), total: number(total) }) : number(progress);
    this.progressText.textContent = message ? `${message} · ${count}` : count;
    this.progressEl.hidden = false;
  }

  setResult(content, { isError = false, durationMs } = {}) {
    this.cancelApproval();
    this.progressEl.hidden = true; // the result says how it ended
    renderToolContent(this.resultEl, content ?? [], { images: this.images });
    if (this.status !== "denied" && this.status !== "stopped") this.setStatus(isError ? "error" : "done");
    if (typeof durationMs === "number" && durationMs > 0) {
      this.durationEl.textContent = ` · ${t("tool.duration", { ms: Math.round(durationMs) })}`;
    }
  }
}

function number(n) {
  return new Intl.NumberFormat(language()).format(n);
}
