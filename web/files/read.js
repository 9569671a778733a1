/**
 * A file the user attaches, read into the message part that carries it (pycore/messages.py): an image
 * part, or a document part labelled with the file's name.
 *
 *   await readAttachment(file) -> {type: "image", data, mime_type}
 *                               | {type: "document", name, mime_type, text?, data?}
 *   throws AttachmentError: names the file, what is wrong and what to do (too large, not readable)
 *
 * Text, code, CSV, JSON and Markdown (UTF-8) become a document with `text`. A PDF keeps its bytes (`data`,
 * base64: the vendors that read PDF get the file) and the text pdf.js extracts from it (`text`: what the
 * others get); a PDF with no text layer keeps its bytes only, and goes to vendors that read PDF. A WAV or MP3 file
 * keeps its bytes, like a clip recorded in the page (app/voice.js): it goes to the vendors that take audio.
 */

import { toBase64 } from "./base64.js";

/**
 * @typedef {import("../types/contract").ImagePart} ImagePart
 * @typedef {import("../types/contract").DocumentPart} DocumentPart
 */

export const LIMITS = Object.freeze({
  image: 20 * 1024 * 1024, // the vendors' own limits are around 20 MB per image
  pdf: 32 * 1024 * 1024, // Anthropic's and OpenAI's limit for a PDF in a request
  text: 2 * 1024 * 1024, // ~500k tokens: beyond any context window, so more is an accident
  audio: 25 * 1024 * 1024, // OpenAI's limit for an audio file
});

/** @type {Readonly<Record<string, string>>} extension -> the MIME type a browser may not know */
const TEXT_TYPES = {
  txt: "text/plain", text: "text/plain", log: "text/plain", md: "text/markdown", markdown: "text/markdown",
  csv: "text/csv", tsv: "text/tab-separated-values", json: "application/json", jsonl: "application/jsonl",
  ndjson: "application/jsonl", xml: "application/xml", yaml: "application/yaml", yml: "application/yaml",
  toml: "application/toml", ini: "text/plain", html: "text/html", htm: "text/html", css: "text/css", svg: "image/svg+xml",
  js: "text/javascript", mjs: "text/javascript", ts: "text/x-typescript", tsx: "text/x-typescript", jsx: "text/javascript",
  py: "text/x-python", rb: "text/x-ruby", go: "text/x-go", rs: "text/x-rust", java: "text/x-java", kt: "text/x-kotlin",
  c: "text/x-c", h: "text/x-c", cpp: "text/x-c++", hpp: "text/x-c++", cs: "text/x-csharp", swift: "text/x-swift",
  php: "text/x-php", sh: "text/x-shellscript", bash: "text/x-shellscript", sql: "application/sql", r: "text/x-r",
  tex: "text/x-tex", rst: "text/x-rst", ipynb: "application/x-ipynb+json",
};

export class AttachmentError extends Error {}

/**
 * @param {File} file
 * @returns {Promise<ImagePart | DocumentPart>}
 */
export async function readAttachment(file) {
  const extension = /\.([\w]+)$/.exec(file.name)?.[1]?.toLowerCase() ?? "";
  const type = file.type || TEXT_TYPES[extension] || "";
  if (type === "application/pdf" || extension === "pdf") return readPdf(file);
  if (type.startsWith("image/") && type !== "image/svg+xml") {
    within(file, LIMITS.image);
    return { type: "image", data: toBase64(new Uint8Array(await file.arrayBuffer())), mime_type: type };
  }
  if (type === "audio/wav" || type === "audio/x-wav" || type === "audio/mpeg") { // what the audio vendors all take
    within(file, LIMITS.audio);
    const data = toBase64(new Uint8Array(await file.arrayBuffer()));
    return { type: "document", name: file.name, mime_type: type === "audio/x-wav" ? "audio/wav" : type, data };
  }
  if (TEXT_TYPES[extension] || type.startsWith("text/") || /json|xml|yaml|toml|javascript|sql/.test(type)) {
    within(file, LIMITS.text);
    return { type: "document", name: file.name, mime_type: type || "text/plain", text: await utf8(file) };
  }
  throw new AttachmentError(`${file.name}: ${type || "this type of file"} cannot be attached. Attach an image, a PDF, ` +
    "a WAV or MP3 recording, or a text file (text, code, CSV, JSON, Markdown).");
}

/**
 * @param {File} file
 * @returns {Promise<DocumentPart>}
 */
async function readPdf(file) {
  within(file, LIMITS.pdf);
  const bytes = new Uint8Array(await file.arrayBuffer());
  let text;
  try {
    const { pdfText } = await import("./pdf.js"); // pdf.js is fetched the first time a PDF is attached
    text = await pdfText(bytes.slice()); // pdf.js takes the buffer over: it gets a copy
  } catch (err) {
    throw new AttachmentError(`${file.name}: not a readable PDF (${err instanceof Error ? err.message : String(err)}). If it opens elsewhere, save it again ` +
      "as PDF, or attach its text.", { cause: err });
  }
  /** @type {DocumentPart} */
  const part = { type: "document", name: file.name, mime_type: "application/pdf", data: toBase64(bytes) };
  if (text.trim()) part.text = text;
  return part;
}

/**
 * @param {File} file
 * @param {number} limit   bytes
 */
function within(file, limit) {
  if (file.size > limit) {
    throw new AttachmentError(`${file.name} is ${mb(file.size)}; the most that can be attached is ${mb(limit)}. ` +
      "Attach a smaller file or a part of it.");
  }
}

/**
 * @param {File} file
 * @returns {Promise<string>}
 */
async function utf8(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    if (text.includes("\u0000")) throw new Error("binary");
    return text.replace(/^\uFEFF/, "");
  } catch {
    throw new AttachmentError(`${file.name} is not UTF-8 text. Save it as UTF-8 (or attach it as a PDF) and try again.`);
  }
}

/** @param {number} bytes */
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
