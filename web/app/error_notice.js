/**
 * A failed reply, said so the reader knows what happened and what to do: the HTTP status in words,
 * the vendor's own sentence, the likely causes, and one action (open Settings, or retry).
 *
 *   explainError(error) -> {headline, said?, causes: [text], technical?, action: "settings" | "retry" | null,
 *                           field?: the Settings field to fix ("api-key", "model")}
 *   errorNotice(error, {openSettings?({field}), retry?}) -> DocumentFragment   (an action shows when its callback is given)
 *
 * `error` is pycore's ErrorInfo as the run's result or a stored reply carries it: {status?, type?, message,
 * vendor?, host?} (pycore/messages.py). What it means is read from those fields, never from the message
 * text; a reply stored before they existed ({message} only) is shown as it was.
 */

import { h } from "./dom.js";
import { t } from "./i18n.js";
import { vendorLabel } from "./vendors.js";

/**
 * What a caught error says (`err.message`), for a value a catch gives as unknown.
 * @param {unknown} err
 * @returns {string}
 */
export function messageOf(err) {
  if (typeof err === "object" && err !== null && "message" in err) return String(err.message);
  return String(err);
}

/** HTTP statuses whose fix is in Settings (the key, the model name, the Base URL), and the field it is typed in. */
/** @type {Record<number, string | undefined>} */
const SETTINGS_STATUSES = { 401: "error.auth", 403: "error.forbidden", 404: "error.notFound" };
/** @type {Record<number, string | undefined>} */
const SETTINGS_FIELDS = { 401: "api-key", 403: "api-key", 404: "model" };

/**
 * @typedef {import("../types/contract").ErrorInfo} ErrorInfo
 * @typedef {{headline: string, said?: string, causes: string[], technical?: string, action: "retry" | "settings" | null,
 *   field?: string}} Explained
 */

/**
 * @param {ErrorInfo} error
 * @returns {Explained}
 */
export function explainError(error) {
  const vendor = error.vendor ? vendorLabel(error.vendor) : t("error.theVendor");
  const status = error.status ?? 0;
  const said = error.message ? t("error.vendorSaid", { vendor, message: error.message }) : undefined;
  if (error.type === "connection_error" && error.host) {
    // In a browser the message is only "TypeError: Failed to fetch": kept, folded, for a bug report.
    return { headline: t("error.unreachable", { vendor, host: error.host }), causes: [
      t("error.cause.offline"), t("error.cause.cors"), t("error.cause.baseUrl")],
    technical: error.message, action: "retry" };
  }
  if (error.type === "connection_error") {
    return { headline: t("error.connectionLost", { vendor }), causes: [], technical: error.message, action: "retry" };
  }
  const settingsKey = SETTINGS_STATUSES[status];
  if (settingsKey) {
    return { headline: t(settingsKey, { vendor, status }), said, causes: [], action: "settings",
             field: SETTINGS_FIELDS[status] };
  }
  if (status === 429) return { headline: t("error.rateLimit", { vendor, status }), said, causes: [], action: "retry" };
  if (status >= 500) return { headline: t("error.server", { vendor, status }), said, causes: [], action: "retry" };
  if (status === 200) return { headline: t("error.streamed", { vendor }), said, causes: [], action: "retry" };
  if (status) return { headline: t("error.status", { vendor, status }), said, causes: [], action: null };
  return { headline: t("chat.error", { message: error.message ?? String(error) }), causes: [], action: null };
}

/**
 * @param {ErrorInfo} error
 * @param {{openSettings?: ((at: {field?: string}) => void) | null, retry?: (() => void) | null}} [actions]
 */
export function errorNotice(error, { openSettings = null, retry = null } = {}) {
  const { headline, said, causes, technical, action, field } = explainError(error);
  const out = document.createDocumentFragment();
  out.append(h("p", { className: "error-headline" }, headline));
  if (said) out.append(h("p", { className: "error-said" }, said));
  if (causes.length) {
    out.append(h("p", { className: "error-causes-title" }, t("error.causes")),
      h("ul", { className: "error-causes" }, causes.map((cause) => h("li", {}, cause))));
  }
  if (technical) out.append(h("details", { className: "error-technical" }, h("summary", {}, t("error.details")),
    h("code", {}, technical)));
  const run = action === "settings" ? openSettings && (() => openSettings({ field })) : action === "retry" ? retry : null;
  if (run) {
    const label = action === "settings" ? t("top.openSettings") : t("error.retry");
    out.append(h("div", { className: "error-actions" }, h("button", { type: "button", onclick: run }, label)));
  }
  return out;
}
