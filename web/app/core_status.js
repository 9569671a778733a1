/**
 * The core's start-up as the top bar shows it: the stage and its progress while Python boots, then
 * "Ready · Python x.y", or the stage that failed and why. `<html data-core>` says "booting", "ready" or
 * "error" (tests and bench/boot wait on it); `<html data-core-boot>` how it started: "fresh", or "snapshot" (from
 * the memory snapshot of an earlier visit, web/snapshot.js).
 *
 *   const status = new CoreStatus({text, progress, root})
 *   status.stage(stage, detail)   a boot stage (web/protocol.js STAGES), detail {count, done} for the wheels
 *   status.ready(info) / status.failed(err)
 *   status.render()               again, in the language now chosen
 */

import { onLanguageChange, t } from "./i18n.js";
import { STAGES } from "../protocol.js";

export class CoreStatus {
  /** @param {{text: HTMLElement, progress: HTMLProgressElement, root: HTMLElement}} parts */
  constructor({ text, progress, root }) {
    onLanguageChange(() => this.render()); // each part of the page redraws itself in a new language
    this.text = text;
    this.progress = progress;
    this.root = root;
    this.current = "runtime";
    /** @type {{python?: string} | null} */
    this.info = null;
    /** @type {{stage?: string, message: string} | null} */
    this.error = null;
  }

  /**
   * @param {string} stage
   * @param {{done?: number, count?: number} | null | undefined} detail
   */
  stage(stage, detail) {
    this.current = stage;
    this.progress.value = STAGES.indexOf(stage) + 1;
    if (stage === "ready") return;
    const counted = detail?.count ? ` (${detail.done ?? 0}/${detail.count})` : "";
    this.text.textContent = `${t(`boot.${stage}`)}${counted}…`;
  }

  /** @param {{python?: string, boot?: string}} info */
  ready(info) {
    this.info = info;
    this.root.dataset.core = "ready";
    this.root.dataset.coreBoot = info.boot ?? "";
    performance.mark("core-ready"); // read by bench/boot
    this.render();
  }

  /** @param {{stage?: string, message: string}} err */
  failed(err) {
    this.error = err;
    this.root.dataset.core = "error";
    this.render();
  }

  render() {
    if (this.error) {
      this.text.textContent = t("boot.failed", { stage: t(`boot.${this.error.stage ?? this.current}`),
                                                 message: this.error.message });
    } else if (this.info) {
      this.text.textContent = t("boot.ready", { python: this.info.python });
    }
  }
}
