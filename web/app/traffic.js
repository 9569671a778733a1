/**
 * The traffic inspector: every JSON-RPC message between the client and one MCP server, in and out, with its time
 * (pycore/mcp/traffic.py keeps them, secrets already replaced by [redacted]), filterable, and exported as the
 * file `python -m pycore mcp replay FILE` runs the client against again, for a bug report.
 *
 *   const inspector = new TrafficInspector({core, notify})
 *   inspector.open(serverId, label)     shows the dialog; it follows new messages while open
 *
 * Every message is shown as text (JSON), never as markup.
 */

import { byId, download, h } from "./dom.js";
import { messageOf } from "./error_notice.js";
import { t } from "./i18n.js";

const FOLLOW_MS = 1000;

/**
 * @typedef {import("../types/contract").TrafficRecord} TrafficRecord
 * @typedef {{dir: "in" | "out", t: number, message: {method?: string, id?: string | number, error?: unknown}}} TrafficEntry
 *   one message of a record (pycore.mcp.traffic)
 */

/** @param {TrafficRecord | null} record */
const entriesOf = (record) => /** @type {TrafficEntry[]} */ (record?.messages ?? []);

export class TrafficInspector {
  /** @param {{core: import("../client/orizuru.js").Agent, notify: import("./notify.js").Notify}} parts */
  constructor({ core, notify }) {
    this.core = core;
    this.notify = notify;
    this.dialog = byId("traffic-dialog", HTMLDialogElement);
    this.list = byId("traffic-list");
    this.filter = byId("traffic-filter", HTMLInputElement);
    this.summary = byId("traffic-summary");
    /** @type {TrafficRecord | null} */
    this.record = null;
    /** @type {string | undefined} */
    this.serverId = undefined;
    this.label = "";
    /** @type {ReturnType<typeof setInterval> | undefined} */
    this.following = undefined;
    this.filter.addEventListener("input", () => this.render());
    byId("traffic-export").addEventListener("click", () => this.#export());
    byId("traffic-close").addEventListener("click", () => this.dialog.close());
    this.dialog.addEventListener("close", () => clearInterval(this.following));
  }

  /**
   * @param {string} serverId
   * @param {string} label
   */
  async open(serverId, label) {
    this.serverId = serverId;
    this.label = label;
    this.record = null;
    this.filter.value = "";
    byId("traffic-title").textContent = t("traffic.title", { server: label });
    await this.#load();
    if (!this.dialog.open) this.dialog.showModal();
    clearInterval(this.following);
    this.following = setInterval(() => this.#load(), FOLLOW_MS);
  }

  async #load() {
    try {
      const record = /** @type {TrafficRecord} */ (await this.core.call("mcp.traffic", { id: this.serverId }));
      /** @param {TrafficRecord | null} r */
      const last = (r) => `${r?.messages.length}:${entriesOf(r).at(-1)?.t}`;
      const changed = last(record) !== last(this.record);
      this.record = record;
      if (changed) this.render();
    } catch (err) {
      clearInterval(this.following);
      this.summary.textContent = messageOf(err);
    }
  }

  render() {
    if (!this.record) return;
    const words = this.filter.value.trim().toLowerCase();
    const rows = entriesOf(this.record).map((entry) => ({ entry, text: JSON.stringify(entry.message) }))
      .filter(({ text }) => !words || text.toLowerCase().includes(words));
    this.summary.textContent = t("traffic.summary", { shown: rows.length, total: this.record.messages.length,
                                                      dropped: this.record.dropped });
    this.list.replaceChildren(...rows.map(({ entry, text }) => row(entry, text)));
  }

  #export() {
    if (!this.record) return;
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const name = String(this.label).replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 60);
    download(new Blob([JSON.stringify(this.record, null, 2)], { type: "application/json" }),
             `mcp-traffic-${name}-${stamp}.json`);
  }
}

/**
 * @param {TrafficEntry} entry
 * @param {string} text
 */
function row(entry, text) {
  const m = entry.message;
  // A method's name is the protocol's (code, shown as it is); a reply is said in the reader's language.
  const what = m.method ? [h("code", {}, m.method), m.id !== undefined ? ` #${m.id}` : ""]
    : `${m.error ? t("traffic.error") : t("traffic.result")} #${m.id}`;
  return h("li", { className: "traffic-row", dataset: { dir: entry.dir } },
    h("details", {},
      h("summary", {},
        h("span", { className: "traffic-time" }, `+${(entry.t / 1000).toFixed(3)} s`),
        h("span", { className: "traffic-dir", "aria-label": t(`traffic.${entry.dir}`) }, entry.dir === "out" ? "→" : "←"),
        h("span", { className: "traffic-what" }, what),
        h("span", { className: "traffic-size" }, `${text.length} B`)),
      h("pre", { className: "json-args" }, JSON.stringify(m, null, 2))));
}
