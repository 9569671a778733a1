/**
 * The code interpreter as the model sees it: the `python` tool (one argument, `code`: the convention models
 * know), the files of the conversation it can read, and its result as tool content.
 *
 *   pythonTool({packages, pyodide, api}) / PYTHON_TOOL   the tool's definition, as chat.run's `tools.page` takes it; `api`:
 *        code mode's tools, as Python (web/sandbox/code_mode.js apiText), at the end of its description
 *   filesOf(messages) -> [{name, data: ArrayBuffer}]   the documents and images the user attached, by name
 *   keptFiles(result) -> [document part]               the files it wrote that are not pictures (those stay in
 *        the tool's result), as parts the store keeps with the transcript (bytes in OPFS): the card's downloads
 *   fileResource(part) -> content item                 such a part as the card shows it again (a download)
 *   toolContent(result) -> [content item]              text the model reads (stdout, stderr, the value, the
 *        traceback, the files written), then each raster image written (and a PNG drawn from each SVG), as an
 *        image (shown, and seen by a vision model); the other files go beside the result (keptFiles)
 */

import { fromBase64 } from "../files/base64.js";

/** @typedef {import("./messages.js").ContentItem} ContentItem */
/** @typedef {import("./interpreter.js").RunResult} RunResult */
/**
 * @typedef {object} StoredPart   what this module reads of a stored message's part (pycore's document, image)
 * @property {string} type
 * @property {string | null} [name]
 * @property {string | null} [data]   base64 (a contract DocumentPart's may be null: text only)
 * @property {string | null} [text]
 * @property {string} [mime_type]
 */
/** @typedef {{role: string, parts?: StoredPart[]}} StoredMessage */
/** @typedef {{type: "document", name: string, mime_type: string, data: string}} KeptFile */

export const DATA_DIR = "/mnt/data";
export const OUTPUT_DIR = "/mnt/outputs";

/**
 * The tool's definition; `packages`: the user turned package hosts on, so micropip can install; `pyodide`: one of
 * them is a Pyodide package repository, so Pyodide's own packages load when imported; `api`: the tools its code may
 * call (code mode).
 * @param {{packages?: boolean, pyodide?: boolean, api?: string}} [options]
 */
export function pythonTool({ packages = false, pyodide = false, api = "" } = {}) {
  return {
    name: "python",
    description: "Run Python code in a sandboxed notebook in the user's browser (Pyodide, CPython compiled to " +
      "WebAssembly). Variables, imports and functions persist between calls in this conversation. The files the " +
      `user attached are in ${DATA_DIR} (read-only). Save files for the user (CSV, PNG, SVG, ...) in ${OUTPUT_DIR}. ` +
      (packages
        ? "The standard library is available, and packages the user allowed: install one with " +
          "`import micropip; await micropip.install('name')`; there is no other network. "
        : "Only the standard library is available; there is no network and no package install. ") +
      (pyodide
        ? "Pyodide's own packages (numpy, pandas, matplotlib, scipy, ...) load when the code imports them. A " +
          `matplotlib figure left open or shown is saved to ${OUTPUT_DIR} as a PNG, which the user sees. `
        : "") +
      "The value of the last expression and whatever is printed come back." + api,
    inputSchema: {
      type: "object",
      properties: { code: { type: "string", description: "The Python source to run." } },
      required: ["code"],
    },
    annotations: { openWorldHint: false },
  };
}

export const PYTHON_TOOL = Object.freeze(pythonTool());

/** @type {Record<string, string>} */
const EXTENSIONS = { "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp" };
const VISION_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/**
 * @param {StoredMessage[] | null | undefined} messages
 * @returns {import("./messages.js").DataFile[]}
 */
export function filesOf(messages) {
  /** @type {Map<string, ArrayBuffer>} */
  const files = new Map();
  let images = 0;
  for (const message of messages ?? []) {
    if (message.role !== "user") continue;
    for (const part of message.parts ?? []) {
      if (part.type === "document" && safeName(part.name)) {
        const bytes = part.data ? fromBase64(part.data) : new TextEncoder().encode(part.text ?? "");
        files.set(safeName(part.name), bytes.buffer);
      } else if (part.type === "image" && part.data) {
        images += 1;
        files.set(`image-${images}.${EXTENSIONS[part.mime_type ?? ""] ?? "bin"}`, fromBase64(part.data).buffer);
      }
    }
  }
  return [...files].map(([name, data]) => ({ name, data }));
}

/**
 * A file name to write under /mnt/data: its last path segment, without what a file system would refuse.
 * @param {unknown} name
 */
function safeName(name) {
  const base = [...(String(name ?? "").split(/[\\/]/).pop() ?? "")].filter((c) => c.charCodeAt(0) >= 32).join("").trim();
  return base && base !== "." && base !== ".." ? base.slice(0, 200) : "";
}

/**
 * @param {{outputs?: import("./interpreter.js").OutputFile[]}} result
 * @returns {KeptFile[]}
 */
export function keptFiles(result) {
  return (result.outputs ?? []).filter((o) => !VISION_TYPES.has(o.mime_type))
    .map((o) => ({ type: /** @type {const} */ ("document"), name: o.name, mime_type: o.mime_type,
                   data: o.data }));
}

/**
 * @param {StoredPart} part
 * @returns {ContentItem}
 */
export function fileResource(part) {
  return { type: "resource", resource: { uri: `file://${OUTPUT_DIR}/${part.name}`, mimeType: part.mime_type,
                                         ...(part.data ? { blob: part.data } : { text: part.text ?? "" }) } };
}

/**
 * @param {RunResult} result
 * @returns {ContentItem[]}
 */
export function toolContent(result) {
  /** @type {string[]} */
  const sections = [];
  /** @type {(label: string, text: unknown) => number} */
  const section = (label, text) => sections.push(`${label}:\n${String(text).replace(/\s+$/, "")}`);
  if (result.notice) section("note", result.notice); // the notebook was restarted before this run
  if (result.stdout) section("stdout", result.stdout);
  if (result.stderr) section("stderr", result.stderr);
  if (result.value !== null && result.value !== undefined) section("value", result.value);
  if (result.error) section("error", result.error);
  const outputs = result.outputs ?? [];
  const written = outputs.filter((o) => !o.drawn_from); // not the PNGs drawn here from an SVG it wrote
  if (written.length) sections.push(`files written:\n${written.map((o) => `${OUTPUT_DIR}/${o.name}`).join("\n")}`);
  if (!sections.length) sections.push("(no output)");
  sections.push(`(ran in ${result.duration_ms ?? 0} ms)`);
  /** @type {ContentItem[]} */
  const content = [{ type: "text", text: sections.join("\n\n") }];
  // A picture goes inline (and to a vision model); any other file is kept beside the result (keptFiles),
  // where the card offers it: the model, told its name above, could not read its bytes anyway.
  for (const o of outputs) if (VISION_TYPES.has(o.mime_type)) content.push({ type: "image", data: o.data, mimeType: o.mime_type });
  return content;
}
