/**
 * What an MCP tool returned, shown safely. Tool results are as untrusted as model output.
 *
 *   renderToolContent(container, items, {images, labels, textAs = "text", openResource}) -> {destroy()}
 *
 *   items: MCP content items (MCP 2025-11-25 "Tool Result"), as the worker's tool_end event carries
 *   them; `mimeType` and pycore's `mime_type` are both accepted.
 *     {type: "text", text}                       shown as text (textAs: "markdown" renders it with
 *                                                renderMarkdown, through the same sanitizer)
 *     {type: "image", data, mimeType}            shown from its own bytes via a blob: URL, only if the
 *                                                bytes are a raster image of the declared type (no SVG;
 *                                                SECURITY.md T-X10); never fetched from anywhere
 *     {type: "audio", data, mimeType}            an <audio controls> player from its own bytes, only if
 *                                                the bytes are audio of the declared type
 *     {type: "resource_link", uri, name, title?, description?}
 *                                                a link if the uri is http(s) (target=_blank,
 *                                                rel="noopener noreferrer"), else the uri as text; never
 *                                                fetched by the page. With openResource(uri) -> Promise of
 *                                                [resource contents] (the server reads it: mcp.read_resource),
 *                                                an "Open" button shows what the server gives, as resources
 *     {type: "resource", resource: {uri, mimeType?, text | blob}}
 *                                                text shown as text under its uri; a blob that is a raster
 *                                                image is shown like an image item, any other blob is
 *                                                described (type and size), not shown
 *     anything else                              "Unsupported content" with its type, as text
 *   labels (optional): {unsupported(type), notShown(reason), binary(mime, size), ...markdown labels}
 *
 * Everything is built with textContent or createElement, and markdown goes through DOMPurify, so no
 * text can become markup; nothing remote is loaded. destroy() releases the blob: URLs.
 * Note: the site's CSP must allow `media-src blob:` for audio to play (images need `img-src blob:`,
 * which it has).
 */
import { ImagePolicy, renderMarkdown } from "./markdown.js";
import { safeLinkHref } from "./sanitize.js";
import { decodeBase64, formatBytes, MediaError, sameFormat, sniffAudio, sniffImage } from "./media_bytes.js";

/**
 * An MCP content item (or a resource's contents) as a server sent it: untrusted, each field checked where it is read.
 * @typedef {Record<string, unknown>} McpItem
 * @typedef {{unsupported: (type: string) => string, notShown: (what: string, reason: string) => string,
 *            binary: (mime: string, size: string) => string, download: (name: string, size: string) => string,
 *            open: (name: string) => string, openFailed: (message: string) => string}} ToolLabels
 * @typedef {(uri: string) => Promise<McpItem[]>} OpenResource   reads a resource through the client (mcp.read_resource)
 * @typedef {{images?: ImagePolicy, labels?: Partial<ToolLabels & import("./markdown.js").MarkdownLabels>,
 *            textAs?: "text" | "markdown", openResource?: OpenResource | null}} ToolContentOptions
 * @typedef {Required<ToolContentOptions>} Options
 * @typedef {{url: string, error?: undefined} | {error: string, url?: undefined}} MediaUrl
 */

/** @type {ToolLabels} */
export const DEFAULT_TOOL_LABELS = {
  unsupported: (type) => `Unsupported content (${type})`,
  notShown: (what, reason) => `${what} not shown: ${reason}`,
  binary: (mime, size) => `Binary resource (${mime || "unknown type"}, ${size})`,
  download: (name, size) => `Download ${name} (${size})`,
  open: (name) => `Open ${name}`,
  openFailed: (message) => `Could not open it: ${message}`,
};

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [className]
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * A value as an item whose fields can be read (anything else has none).
 * @param {unknown} value
 * @returns {McpItem}
 */
const fields = (value) => (typeof value === "object" && value !== null ? /** @type {McpItem} */ (value) : {});

/** @param {McpItem} item */
const mimeOf = (item) => String(item.mimeType ?? item.mime_type ?? "");

/**
 * Decode and check media bytes; returns {url} or {error} (a sentence naming the problem).
 * @param {unknown} data   base64
 * @param {string} declared
 * @param {(bytes: Uint8Array) => string | null} sniff
 * @param {string} kind
 * @param {string[]} urls
 * @returns {MediaUrl}
 */
function mediaUrl(data, declared, sniff, kind, urls) {
  let bytes;
  try {
    bytes = decodeBase64(data);
  } catch (error) {
    if (error instanceof MediaError) return { error: error.message };
    throw error;
  }
  const actual = sniff(bytes);
  if (actual === null) return { error: `the bytes are not a supported ${kind} format (declared ${declared || "nothing"})` };
  if (!sameFormat(declared, actual)) return { error: `declared ${declared || "nothing"} but the bytes are ${actual}` };
  const url = URL.createObjectURL(new Blob([bytes], { type: actual }));
  urls.push(url);
  return { url };
}

/**
 * @param {unknown} data
 * @param {string} mime
 * @param {ToolLabels} labels
 * @param {string[]} urls
 */
function imageItem(data, mime, labels, urls) {
  const result = mediaUrl(data, mime, sniffImage, "image", urls);
  if (result.error !== undefined) return element("p", "tool-note", labels.notShown("Image", result.error));
  const img = element("img", "md-image");
  img.alt = mime;
  img.src = result.url;
  return img;
}

/**
 * @param {McpItem} item
 * @param {ToolLabels} labels
 * @param {string[]} urls
 */
function audioItem(item, labels, urls) {
  const result = mediaUrl(item.data, mimeOf(item), sniffAudio, "audio", urls);
  if (result.error !== undefined) return element("p", "tool-note", labels.notShown("Audio", result.error));
  const audio = element("audio");
  audio.controls = true;
  audio.preload = "metadata";
  audio.src = result.url;
  return audio;
}

/**
 * @param {unknown} text
 * @param {Options} options
 */
function textItem(text, options) {
  if (options.textAs === "markdown") {
    const box = element("div", "markdown");
    renderMarkdown(box, text, options);
    return box;
  }
  return element("pre", "tool-text", String(text ?? ""));
}

/**
 * @param {McpItem} item
 * @param {ToolLabels} labels
 * @param {string[]} urls
 * @param {Options} options
 */
function resourceLinkItem(item, labels, urls, options) {
  const box = element("p", "tool-resource-link");
  const label = String(item.title ?? item.name ?? item.uri ?? "");
  const href = safeLinkHref(String(item.uri ?? ""));
  if (href && !href.startsWith("mailto:")) {
    const link = element("a", "", label);
    link.href = href;
    link.target = "_blank";
    link.rel = "noopener noreferrer";
    box.append(link);
  } else {
    box.append(element("span", "", label), " ", element("span", "tool-resource-uri", String(item.uri ?? "")));
  }
  if (item.description) box.append(element("span", "tool-note", ` — ${item.description}`));
  const { openResource } = options;
  if (!openResource || !item.uri) return box;
  // Read through the client from the server that gave the link, only when the user asks.
  const wrap = element("div", "tool-resource-link-box");
  const opened = element("div", "tool-resource-opened");
  const button = element("button", "tool-open", labels.open(label));
  button.type = "button";
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const contents = await openResource(String(item.uri));
      opened.replaceChildren(...contents.map((c) => resourceItem(c, labels, urls, options)));
      button.remove();
    } catch (err) {
      opened.replaceChildren(element("p", "tool-note", labels.openFailed(messageOf(err))));
      button.disabled = false;
    }
  });
  box.append(" ", button);
  wrap.append(box, opened);
  return wrap;
}

/**
 * @param {unknown} value   a resource's contents: {uri, mimeType?, text | blob}
 * @param {ToolLabels} labels
 * @param {string[]} urls
 * @param {Options} options
 */
function resourceItem(value, labels, urls, options) {
  const resource = fields(value);
  const box = element("div", "tool-resource");
  box.append(element("div", "tool-resource-uri", String(resource.uri ?? "")));
  const mime = mimeOf(resource);
  if (typeof resource.text === "string") {
    box.append(textItem(resource.text, options));
  } else if (typeof resource.blob === "string") {
    if (mime.startsWith("image/") && mime !== "image/svg+xml") box.append(imageItem(resource.blob, mime, labels, urls));
    else box.append(downloadItem(resource, mime, labels, urls));
  } else {
    box.append(element("p", "tool-note", labels.unsupported("resource without text or blob")));
  }
  return box;
}

/**
 * A file's bytes as a download link, never shown: served as application/octet-stream under a blob: URL, so
 * even an HTML or SVG file is saved, not opened in the page's origin.
 * @param {McpItem} resource
 * @param {string} mime
 * @param {ToolLabels} labels
 * @param {string[]} urls
 */
function downloadItem(resource, mime, labels, urls) {
  let bytes;
  try {
    bytes = decodeBase64(resource.blob);
  } catch (err) {
    return element("p", "tool-note", labels.notShown(labels.binary(mime, "?"), messageOf(err)));
  }
  const name = String(resource.uri ?? "").split(/[/\\]/).pop() || "download";
  const url = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
  urls.push(url);
  const link = element("a", "tool-download", labels.download(name, formatBytes(bytes.length)));
  link.href = url;
  link.download = name;
  link.title = mime || "application/octet-stream";
  return link;
}

/**
 * @param {unknown} value   one content item
 * @param {ToolLabels} labels
 * @param {string[]} urls
 * @param {Options} options
 */
function renderItem(value, labels, urls, options) {
  const item = fields(value);
  switch (item.type) {
    case "text":
      return textItem(item.text, options);
    case "image":
      return imageItem(item.data, mimeOf(item), labels, urls);
    case "audio":
      return audioItem(item, labels, urls);
    case "resource_link":
      return resourceLinkItem(item, labels, urls, options);
    case "resource":
      return resourceItem(item.resource, labels, urls, options);
    default:
      return element("p", "tool-note", labels.unsupported(String(item.type ?? typeof value)));
  }
}

/** @param {unknown} err */
function messageOf(err) {
  return err instanceof Error ? err.message : String(err);
}

/**
 * @param {HTMLElement} container
 * @param {unknown} items   MCP content items (McpItem[]; one alone is taken as a list of one)
 * @param {ToolContentOptions} [options]
 * @returns {{destroy: () => void}}
 */
export function renderToolContent(container, items, { images = new ImagePolicy(), labels = {}, textAs = "text",
                                                     openResource = null } = {}) {
  const allLabels = { ...DEFAULT_TOOL_LABELS, ...labels };
  const options = { images, labels, textAs, openResource };
  /** @type {string[]} */
  const urls = [];
  container.classList.add("tool-content");
  container.replaceChildren();
  for (const item of Array.isArray(items) ? items : [items]) {
    container.append(renderItem(item, allLabels, urls, options));
  }
  return {
    destroy() {
      for (const url of urls.splice(0)) URL.revokeObjectURL(url);
    },
  };
}
