/**
 * Artifacts: documents a reply made (an HTML page with its CSS and JS, an SVG, a mermaid diagram, a markdown
 * document, a picture or file the code interpreter wrote) that the user opens in the artifact panel
 * (web/artifacts/panel.js) and sees live, in the MCP App views' sandbox (web/mcp_app/frame.html).
 *
 *   ARTIFACT_TOOL                       the page tool the model calls to make or revise one on purpose: {id, type,
 *                                       title, content}; the same id again is a new version of it
 *   artifactOf(args) -> {artifact} | {error}   the tool's arguments checked: an ArtifactRef to keep, or why not
 *   artifactOfCode(language, source) -> Artifact | null   a reply's code block that opens as one (html, svg,
 *                                       mermaid, markdown), by its fence's language
 *   artifactOfFile({name, mime_type, data}) -> Artifact | null   a file or picture the code wrote
 *   documentOf(artifact, {mermaidSVG}) -> Promise<string>   the HTML document the frame draws it from
 *   fileOf(artifact) -> {name, type, body}   what Download saves
 *
 * Nothing here puts an artifact's text into the page: it goes into the sandboxed frame's document only (an
 * HTML artifact is that document), or, for markdown and mermaid, through the page's own sanitizing renderers
 * first, as it would in the chat.
 */

import { artifactType } from "../render/code_blocks.js";
import { renderMarkdown } from "../render/markdown.js";
import { fromBase64 } from "../files/base64.js";

/**
 * @typedef {import("../types/contract").ArtifactRef} ArtifactRef
 * @typedef {ArtifactRef["type"]} StoredType
 * @typedef {StoredType | "image" | "text"} ArtifactType
 * @typedef {{id: string, type: ArtifactType, title: string, content: string, mime?: string}} Artifact
 *   content: the source (an image's: a data: URL)
 */

export const ARTIFACT_TYPES = /** @type {const} */ (["html", "svg", "mermaid", "markdown"]);
export const MAX_CONTENT = 2 * 2 ** 20; // characters of one version: a bigger one is refused, and the model told

export const ARTIFACT_TOOL = Object.freeze({
  name: "artifact",
  description: "Show the user a document you made as an artifact: a panel beside the chat that renders it live " +
    "(an HTML page with its CSS and JavaScript inline, an SVG image, a mermaid diagram, or a markdown document). " +
    "To revise it, call this tool again with the same id and the whole new content: the user keeps every version. " +
    "The artifact runs sandboxed: it has no network and cannot reach the chat, so inline everything it needs.",
  inputSchema: {
    type: "object",
    properties: {
      id: { type: "string", description: "A short stable identifier, e.g. \"todo-app\"; reuse it to revise." },
      type: { type: "string", enum: [...ARTIFACT_TYPES] },
      title: { type: "string", description: "What the user sees as its name." },
      content: { type: "string", description: "The whole document." },
    },
    required: ["id", "type", "content"],
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
});

/**
 * @param {Record<string, unknown> | null | undefined} args
 * @returns {{artifact: ArtifactRef, error?: undefined} | {error: string, artifact?: undefined}}
 */
export function artifactOf(args) {
  const { id, type, title, content } = args ?? {};
  if (typeof id !== "string" || !id.trim() || id.length > 200) return { error: "id must be a non-empty string (at most 200 characters)" };
  if (!ARTIFACT_TYPES.includes(/** @type {StoredType} */ (type))) return { error: `type must be one of ${ARTIFACT_TYPES.join(", ")}` };
  if (typeof content !== "string") return { error: "content must be a string: the whole document" };
  if (content.length > MAX_CONTENT) return { error: `content is longer than ${MAX_CONTENT} characters` };
  const name = typeof title === "string" && title.trim() ? title.trim().slice(0, 500) : id.trim();
  return { artifact: { id: id.trim(), type: /** @type {StoredType} */ (type), title: name, content } };
}

/**
 * @param {string} language   the fence's
 * @param {string} source
 * @returns {Artifact | null}
 */
export function artifactOfCode(language, source) {
  const type = artifactType(language, source);
  if (!type) return null;
  return { id: "", type, title: `${language} (${source.split("\n").length} lines)`, content: source };
}

/** @type {Record<string, ArtifactType>} */
const FILE_TYPES = { "text/html": "html", "image/svg+xml": "svg", "text/markdown": "markdown" };
const RASTER = /^image\/(png|jpeg|gif|webp)$/;

/**
 * @param {{name?: string | null, mime_type?: string, mimeType?: string, data?: string | null, text?: string | null}} file
 *   data: base64
 * @returns {Artifact | null}
 */
export function artifactOfFile(file) {
  const mime = String(file.mime_type ?? file.mimeType ?? "").toLowerCase();
  const title = file.name ?? mime;
  if (RASTER.test(mime) && file.data) return { id: "", type: "image", title, content: `data:${mime};base64,${file.data}`, mime };
  const type = FILE_TYPES[mime] ?? (mime.startsWith("text/") || mime === "application/json" ? "text" : null);
  if (!type) return null;
  const content = file.text ?? (file.data ? new TextDecoder().decode(fromBase64(file.data)) : "");
  return { id: "", type, title, content, mime };
}

/** @param {boolean} dark   the page's scheme, which a document made here follows (an HTML artifact chooses its own) */
const baseStyle = (dark) => `<style>:root{color-scheme:${dark ? "dark" : "light"}}` +
  "body{margin:0;padding:1rem;font:16px/1.5 system-ui,sans-serif}" +
  "img,svg{max-width:100%;height:auto}pre{white-space:pre-wrap;overflow-wrap:anywhere}" +
  "table{border-collapse:collapse}th,td{border:1px solid #8888;padding:.25rem .5rem}" +
  "code{font-family:ui-monospace,Menlo,Consolas,monospace}</style>";

/**
 * The document the sandboxed frame draws. An HTML artifact is its own document; the others are put in one.
 * @param {Artifact} artifact
 * @param {{mermaidSVG?: (source: string) => Promise<string>, dark?: boolean}} [draw]   the page's mermaid renderer
 *   (sanitized SVG, drawn in the page's scheme) and that scheme
 * @returns {Promise<string>}
 */
export async function documentOf(artifact, { mermaidSVG, dark = false } = {}) {
  const head = `<!doctype html><meta charset="utf-8">${baseStyle(dark)}`;
  switch (artifact.type) {
    case "html":
      return artifact.content;
    case "svg":
      return `${head}${artifact.content}`;
    case "image":
      return `${head}<img alt="" src="${escapeAttribute(artifact.content)}">`;
    case "markdown":
      return `${head}${markdownHTML(artifact.content)}`;
    case "mermaid":
      if (!mermaidSVG) throw new Error("no mermaid renderer");
      return `${head}${await mermaidSVG(artifact.content)}`;
    case "text":
      return `${head}<pre>${escapeText(artifact.content)}</pre>`;
    default:
      throw new Error(`not an artifact type: ${String(/** @type {{type: unknown}} */ (artifact).type)}`);
  }
}

/**
 * Markdown as the chat renders it (sanitized, remote images behind their buttons), as HTML text.
 * @param {string} text
 */
function markdownHTML(text) {
  const box = document.createElement("div");
  renderMarkdown(box, text);
  for (const button of box.querySelectorAll("button")) button.remove(); // Copy and image buttons do nothing there
  return box.innerHTML;
}

/** @type {Record<ArtifactType, [string, string]>} */
const FILES = { html: ["html", "text/html"], svg: ["svg", "image/svg+xml"], mermaid: ["mmd", "text/plain"],
                markdown: ["md", "text/markdown"], image: ["png", "image/png"], text: ["txt", "text/plain"] };

/**
 * What Download saves: the artifact's own source (an image's bytes), under a name made from its title.
 * @param {Artifact} artifact
 * @returns {{name: string, type: string, body: BlobPart}}
 */
export function fileOf(artifact) {
  const [extension, type] = FILES[artifact.type];
  const base = artifact.title.replace(/\.[a-z0-9]{1,5}$/i, "").replace(/[^\p{L}\p{N}._-]+/gu, "-").replace(/^-+|-+$/g, "").slice(0, 80);
  const name = `${base || "artifact"}.${extension}`;
  if (artifact.type === "image") {
    const mime = artifact.mime ?? "image/png";
    return { name: name.replace(/\.png$/, `.${mime.split("/")[1].replace("jpeg", "jpg")}`), type: mime,
             body: fromBase64(artifact.content.split(",")[1] ?? "") };
  }
  return { name, type: artifact.mime ?? type, body: artifact.content };
}

/** @param {string} text */
const escapeText = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;");
/** @param {string} text */
const escapeAttribute = (text) => escapeText(text).replace(/"/g, "&quot;");
