/**
 * The message box and its keys: Enter sends, Shift+Enter is a new line, Esc stops the reply,
 * Ctrl/Cmd+K starts a new chat; Send / Stop buttons; images attached as base64 (ImagePart).
 *
 *   const composer = new Composer({chat, notify, onNewChat})
 *   composer.setRunning(bool)     Stop shown while a reply runs
 */

import { fileToBase64, h } from "./dom.js";
import { t } from "./i18n.js";

const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

export class Composer {
  constructor({ chat, notify, onNewChat }) {
    Object.assign(this, { chat, notify, onNewChat });
    this.form = document.getElementById("composer");
    this.box = document.getElementById("message");
    this.send = document.getElementById("send");
    this.stopButton = document.getElementById("stop");
    this.attachments = document.getElementById("attachments");
    this.fileInput = document.getElementById("attach-file");
    this.images = []; // {name, data (base64), mime_type}
    this.form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.submit();
    });
    this.box.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        this.submit();
      }
    });
    this.stopButton.addEventListener("click", () => this.chat.stop());
    document.getElementById("attach").addEventListener("click", () => this.fileInput.click());
    this.fileInput.addEventListener("change", () => this.#addFiles(this.fileInput));
    document.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape" && this.chat.running && !document.querySelector("dialog[open]")) {
        ev.preventDefault();
        this.chat.stop();
      } else if ((ev.ctrlKey || ev.metaKey) && !ev.altKey && ev.key.toLowerCase() === "k") {
        ev.preventDefault();
        this.onNewChat();
      }
    });
  }

  submit() {
    const text = this.box.value.trim();
    if ((!text && !this.images.length) || this.chat.running) return;
    try {
      this.chat.provider(); // no provider or no key: say so, and keep what was typed
    } catch (err) {
      this.notify(err.message, { settings: true });
      return;
    }
    const images = this.images;
    this.box.value = "";
    this.images = [];
    this.#drawAttachments();
    this.chat.send(text, images);
  }

  /** Put text in the box (a prompt picked from an MCP server). */
  insert(text) {
    this.box.value = this.box.value ? `${this.box.value}\n${text}` : text;
    this.box.focus();
  }

  setRunning(running) {
    this.stopButton.hidden = !running;
    this.send.disabled = running;
  }

  async #addFiles(input) {
    for (const file of [...(input.files ?? [])]) {
      if (!file.type.startsWith("image/")) continue;
      if (file.size > MAX_IMAGE_BYTES) {
        this.notify(`${file.name}: larger than 20 MB`, { error: true });
        continue;
      }
      this.images.push({ name: file.name, mime_type: file.type, data: await fileToBase64(file) });
    }
    input.value = "";
    this.#drawAttachments();
  }

  #drawAttachments() {
    this.attachments.replaceChildren(...this.images.map((img, i) => h("span", { className: "attachment" },
      h("img", { src: `data:${img.mime_type};base64,${img.data}`, alt: img.name }),
      h("button", { type: "button", className: "icon", "aria-label": t("chat.removeAttachment", { name: img.name }),
                    onclick: () => {
                      this.images.splice(i, 1);
                      this.#drawAttachments();
                    } }, "×"))));
  }
}
