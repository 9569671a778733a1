/**
 * The message box and its keys: Enter sends, Shift+Enter is a new line, Esc stops the reply,
 * Ctrl/Cmd+K starts a new chat; Send / Stop buttons; "Attach" takes images (image parts) and files: text,
 * code, CSV, JSON, Markdown and PDF become document parts labelled with their name (files/read.js). Files
 * pasted into the box or dropped on the chat (a drop zone shows while they are dragged over it) are attached
 * the same way; images show as thumbnails, documents as chips with their name and size, before sending.
 *
 *   const composer = new Composer({chat, notify, onNewChat, prompts, getPrompt, compare})
 *   composer.setRunning(bool)     Stop shown while a reply runs
 *   composer.attachResource(resource, parts)   an MCP resource (its message parts) goes with the next message
 *
 * What is typed (and attached) leaves the box only once chat.send says the message is stored; a send that
 * cannot go (a reply still running, no vendor set up, storage refusing) keeps it and says why. With Compare on
 * (`compare()` gives the models chosen, web/app/compare.js) the message goes to all of them at once (chat.compare).
 *
 * Slash commands: typing "/" at the start of the box lists the saved prompts (the prompt library, whose
 * {{variables}} are asked for and filled in) and the connected MCP servers' prompts (`prompts()` ->
 * [{name, description?, arguments?, serverId} | {name, text, saved: true, ...}]); choosing an MCP one asks
 * for its arguments, then `getPrompt(serverId, name, args)` (mcp.get_prompt) and its messages' text
 * replaces the box, to read and send. The first match is highlighted: ArrowUp/Down move the highlight, Enter
 * takes it (it never sends "/tr"), Esc closes. The list is an ARIA listbox whose highlighted option the box names
 * (aria-activedescendant), so the cursor stays in the box and a screen reader reads the highlight.
 */

import { readAttachment } from "../files/read.js";
import { formatBytes } from "../render/media_bytes.js";
import { fillPrompt } from "../store/prompts.js";
import { byId, h } from "./dom.js";
import { fileIcon } from "./message_view.js";
import { messageOf } from "./error_notice.js";
import { t } from "./i18n.js";

/**
 * @typedef {import("../types/contract").Part} Part
 * @typedef {import("../types/contract").DocumentPart} DocumentPart
 * @typedef {{name: string, description?: string | null, required?: boolean | null}} PromptArgument
 * @typedef {{name: string, description?: string | null, arguments?: PromptArgument[] | null, serverId?: string,
 *   text?: string, saved?: boolean}} SlashPrompt   a "/" entry: an MCP server's prompt, or a saved one (`saved`)
 * @typedef {(serverId: string, name: string, args: Record<string, string>)
 *   => Promise<import("../types/contract").PromptResult>} GetPrompt
 * @typedef {{name: string, data: string, mime_type: string}} AttachedImage   its bytes in base64
 */

export class Composer {
  /**
   * @param {{chat: import("./chat.js").Chat, notify: import("./notify.js").Notify, onNewChat: () => void,
   *   prompts?: () => SlashPrompt[], getPrompt: GetPrompt,
   *   compare?: () => import("./compare.js").CompareChoice[] | null}} parts
   */
  constructor({ chat, notify, onNewChat, prompts = () => [], getPrompt, compare = () => null }) {
    this.chat = chat;
    this.compare = compare;
    this.notify = notify;
    this.onNewChat = onNewChat;
    this.prompts = prompts;
    this.getPrompt = getPrompt;
    this.form = byId("composer", HTMLFormElement);
    this.box = byId("message", HTMLTextAreaElement);
    this.send = byId("send", HTMLButtonElement);
    this.stopButton = byId("stop", HTMLButtonElement);
    this.attachments = byId("attachments");
    this.fileInput = byId("attach-file", HTMLInputElement);
    /** @type {AttachedImage[]} */
    this.images = []; // {name, data (base64), mime_type}
    /** @type {DocumentPart[]} */
    this.documents = []; // document parts (files/read.js): text files and PDFs
    /** @type {{name: string, uri: string, parts: Part[]}[]} */
    this.resources = []; // {name, uri, parts}
    this.menu = byId("slash-menu");
    this.box.addEventListener("input", () => this.#slashMenu());
    this.form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.submit();
    });
    this.box.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape" && !this.menu.hidden) {
        ev.preventDefault();
        ev.stopPropagation();
        this.#closeMenu();
        return;
      }
      if (this.#options.length && this.#menuKey(ev)) return;
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        this.submit();
      }
    });
    this.stopButton.addEventListener("click", () => this.chat.stop());
    byId("attach").addEventListener("click", () => this.fileInput.click());
    this.fileInput.addEventListener("change", () => {
      const files = [...(this.fileInput.files ?? [])];
      this.fileInput.value = "";
      this.#addFiles(files);
    });
    this.box.addEventListener("paste", (ev) => this.#paste(ev));
    this.#dropZone(this.form.closest(".chat") ?? this.form);
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

  /**
   * Send what is in the box. The words and files stay in the box until the chat says the message is stored
   * (the box is read-only meanwhile, so what is cleared is what was sent); a refusal keeps them and says why.
   */
  async submit() {
    if (this.#sending || this.#empty()) return;
    this.#sending = true;
    this.box.readOnly = true;
    this.send.disabled = true; // until the message is stored (then the turn's Stop shows) or refused
    this.form.setAttribute("aria-busy", "true");
    let outcome;
    try {
      const extra = [...this.documents, ...this.resources.flatMap((r) => r.parts)];
      const choices = this.compare(); // throws, saying what to choose, when Compare is on with too few models
      outcome = await (choices ? this.chat.compare(this.box.value.trim(), this.images, extra, choices)
        : this.chat.send(this.box.value.trim(), this.images, extra));
    } catch (err) {
      outcome = { ok: false, reason: messageOf(err) };
    } finally {
      this.#sending = false;
      this.box.readOnly = false;
      this.send.disabled = Boolean(this.chat.running);
      this.form.removeAttribute("aria-busy");
    }
    if (!outcome.ok) {
      const reason = "reason" in outcome ? outcome.reason : null;
      if (reason) this.notify(reason, { error: reason !== t("chat.busy") });
      return;
    }
    this.box.value = "";
    this.images = [];
    this.documents = [];
    this.resources = [];
    this.#closeMenu();
    this.#drawAttachments();
  }

  #sending = false;
  /** @type {WeakMap<DocumentPart, number>} */
  #sizes = new WeakMap(); // document part -> its file's size in bytes, shown on its chip

  #empty() {
    return !this.box.value.trim() && !this.images.length && !this.documents.length && !this.resources.length;
  }

  /**
   * @param {{uri: string, name?: string | null}} resource
   * @param {Part[]} parts
   */
  attachResource(resource, parts) {
    if (!parts.length) return;
    this.resources.push({ name: resource.name ?? resource.uri, uri: resource.uri, parts });
    this.#drawAttachments();
  }

  // ------------------------------------------------------------------ slash commands (MCP prompts)

  /** @type {SlashPrompt[]} */
  #options = []; // the prompts the open "/" list shows, in order
  #active = 0; // the highlighted one: Enter takes it

  #slashMenu() {
    const match = /^\/(\S*)$/.exec(this.box.value);
    const prompts = match ? this.prompts().filter((p) => p.name.toLowerCase().startsWith(match[1].toLowerCase())) : [];
    if (!prompts.length) return this.#closeMenu();
    this.#options = prompts;
    this.menu.replaceChildren(h("ul", { role: "listbox", id: "slash-list", "aria-label": t("chat.prompts") },
      prompts.map((p, i) => h("li", { role: "option", id: `slash-option-${i}`, className: "slash-item",
                                      "aria-label": `/${p.name}${p.description ? ` — ${p.description}` : ""}`,
                                      onmousedown: (/** @type {Event} */ ev) => ev.preventDefault(), // the cursor stays
                                      onclick: () => this.#choose(p) },
        h("code", {}, `/${p.name}`), " ", h("span", { className: "hint" }, p.description ?? "")))));
    this.menu.hidden = false;
    this.#highlight(0);
  }

  /**
   * ArrowUp/Down move the highlight (round the ends), Enter takes it; true when the key was the menu's.
   * @param {KeyboardEvent} ev
   */
  #menuKey(ev) {
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") this.#highlight(this.#active + (ev.key === "ArrowDown" ? 1 : -1));
    else if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) this.#choose(this.#options[this.#active]);
    else return false;
    ev.preventDefault();
    return true;
  }

  /**
   * Highlight one option; the box names it (aria-activedescendant), so a screen reader reads it out.
   * @param {number} index
   */
  #highlight(index) {
    const items = [...this.menu.querySelectorAll("[role=option]")];
    this.#active = (index + items.length) % items.length;
    items.forEach((item, i) => item.setAttribute("aria-selected", String(i === this.#active)));
    this.box.setAttribute("aria-activedescendant", items[this.#active].id);
    items[this.#active].scrollIntoView({ block: "nearest" });
  }

  #closeMenu() {
    this.#forgetOptions();
    this.menu.hidden = true;
    this.menu.replaceChildren();
  }

  #forgetOptions() {
    this.#options = [];
    this.box.removeAttribute("aria-activedescendant");
  }

  /** @param {SlashPrompt} prompt */
  #choose(prompt) {
    this.#forgetOptions(); // the menu now holds the prompt's arguments, or closes
    const args = prompt.arguments ?? [];
    if (!args.length) return void this.#runPrompt(prompt, {});
    const fields = args.map((a) => {
      const input = h("input", { name: a.name, "aria-label": a.name, required: a.required || undefined,
                                 placeholder: a.description || a.name, autocomplete: "off" });
      return h("label", { className: "slash-arg" }, h("span", {}, a.name), input);
    });
    const form = h("form", { className: "slash-form", "aria-label": t("chat.promptArgs", { name: prompt.name }) },
      h("p", {}, h("code", {}, `/${prompt.name}`), " ", h("span", { className: "hint" }, prompt.description ?? "")),
      fields,
      h("div", { className: "actions" },
        h("button", { type: "submit", className: "primary" }, t("chat.usePrompt")),
        h("button", { type: "button", onclick: () => this.#closeMenu() }, t("chat.cancel"))));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const inputs = fields.flatMap((f) => [...f.querySelectorAll("input")]);
      const values = Object.fromEntries(inputs.filter((i) => i.value.trim()).map((i) => [i.name, i.value.trim()]));
      this.#runPrompt(prompt, values);
    });
    this.menu.replaceChildren(form);
    this.menu.hidden = false;
    form.querySelector("input")?.focus();
  }

  /**
   * @param {SlashPrompt} prompt
   * @param {Record<string, string>} args
   */
  async #runPrompt(prompt, args) {
    if (prompt.saved) { // the prompt library's: its variables filled in, no server involved
      this.#closeMenu();
      this.box.value = fillPrompt(prompt.text, args);
      this.box.focus();
      return;
    }
    try {
      const { messages } = await this.getPrompt(prompt.serverId ?? "", prompt.name, args);
      const text = messages.map((m) => (m.parts ?? []).map((p) => (p.type === "text" ? p.text : "")).join(""))
        .filter(Boolean).join("\n\n");
      this.#closeMenu();
      this.box.value = text;
      this.box.focus();
    } catch (err) {
      this.notify(messageOf(err), { error: true });
    }
  }

  /**
   * Put text in the box (a prompt picked from an MCP server).
   * @param {string} text
   */
  insert(text) {
    this.box.value = this.box.value ? `${this.box.value}\n${text}` : text;
    this.box.focus();
  }

  /**
   * A part made in the page (a recorded clip) goes with the next message, like an attached file.
   * @param {DocumentPart} part
   * @param {number} size   its bytes
   */
  attachPart(part, size) {
    this.documents.push(part);
    this.#sizes.set(part, size);
    this.#drawAttachments();
  }

  /** @param {boolean} running */
  setRunning(running) {
    this.stopButton.hidden = !running;
    this.send.disabled = running;
  }

  // ------------------------------------------------------------------ attaching: +, paste, drop

  /** Files pasted into the box are attached; text pasted with them (a file's name, a cell's value) still pastes. */
  /** @param {ClipboardEvent} ev */
  #paste(ev) {
    const files = [...(ev.clipboardData?.files ?? [])];
    if (!files.length) return;
    if (!ev.clipboardData?.types.includes("text/plain")) ev.preventDefault();
    this.#addFiles(files);
  }

  /**
   * Files dragged over the chat show a drop zone over it until they are dropped (and attached) or leave; a
   * drag of anything else (text) is left to the browser. Files dropped elsewhere in the page are refused,
   * so a missed drop never opens the file in place of the app.
   */
  /** @param {Element} chat */
  #dropZone(chat) {
    const zone = byId("drop-zone");
    /** @param {DragEvent} ev */
    const hasFiles = (ev) => ev.dataTransfer?.types.includes("Files");
    let depth = 0; // dragenter/dragleave pairs: the drag goes over the chat's children too
    const hide = () => {
      depth = 0;
      zone.hidden = true;
    };
    const over = /** @type {HTMLElement} */ (chat);
    over.addEventListener("dragenter", (ev) => {
      if (!hasFiles(ev)) return;
      depth += 1;
      zone.hidden = false;
    });
    over.addEventListener("dragleave", (ev) => {
      if (hasFiles(ev) && --depth <= 0) hide();
    });
    over.addEventListener("dragover", (ev) => {
      if (!ev.dataTransfer || !hasFiles(ev)) return;
      ev.preventDefault();
      ev.dataTransfer.dropEffect = "copy";
    });
    over.addEventListener("drop", (ev) => {
      if (!ev.dataTransfer || !hasFiles(ev)) return;
      ev.preventDefault();
      hide();
      this.#addFiles([...ev.dataTransfer.files]);
    });
    for (const type of /** @type {const} */ (["dragover", "drop"])) {
      document.addEventListener(type, (ev) => {
        if (ev.dataTransfer && hasFiles(ev) && !chat.contains(/** @type {Node | null} */ (ev.target))) {
          ev.preventDefault();
          ev.dataTransfer.dropEffect = "none";
        }
      });
    }
  }

  /** Each file read through files/read.js (its limits and refusals); a refused one says why, the others stay. */
  /** @param {File[]} files */
  async #addFiles(files) {
    for (const file of files) {
      try {
        const part = /** @type {import("../types/contract").ImagePart | DocumentPart} */ (await readAttachment(file));
        if (part.type === "image") this.images.push({ name: file.name, mime_type: part.mime_type, data: part.data });
        else {
          this.documents.push(part);
          this.#sizes.set(part, file.size);
        }
      } catch (err) {
        this.notify(messageOf(err), { error: true, timeout: 0 }); // the others are still attached
      }
      this.#drawAttachments();
    }
  }

  #drawAttachments() {
    const resources = this.resources.map((r, i) => h("span", { className: "attachment resource", title: r.uri },
      h("span", {}, r.name),
      h("button", { type: "button", className: "icon", "aria-label": t("chat.removeAttachment", { name: r.name }),
                    onclick: () => {
                      this.resources.splice(i, 1);
                      this.#drawAttachments();
                    } }, "×")));
    const documents = this.documents.map((doc, i) => h("span", { className: "attachment document",
                                                               title: doc.text === undefined && !doc.mime_type.startsWith("audio/")
                                                                 ? t("chat.pdfTextOnly") : doc.mime_type },
      h("span", {}, `${fileIcon(doc)} ${doc.name}`),
      this.#sizes.has(doc) ? [" ", h("span", { className: "hint" }, formatBytes(this.#sizes.get(doc) ?? 0))] : null,
      h("button", { type: "button", className: "icon", "aria-label": t("chat.removeAttachment", { name: doc.name }),
                    onclick: () => {
                      this.documents.splice(i, 1);
                      this.#drawAttachments();
                    } }, "×")));
    this.attachments.replaceChildren(...resources, ...documents, ...this.images.map((img, i) => h("span", { className: "attachment" },
      h("img", { src: `data:${img.mime_type};base64,${img.data}`, alt: img.name }),
      h("button", { type: "button", className: "icon", "aria-label": t("chat.removeAttachment", { name: img.name }),
                    onclick: () => {
                      this.images.splice(i, 1);
                      this.#drawAttachments();
                    } }, "×"))));
  }
}
