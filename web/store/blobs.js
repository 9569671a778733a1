/**
 * Attachment bytes in the Origin Private File System (OPFS); IndexedDB keeps the part without them.
 *
 * A part that carries bytes (image, document: {data: base64}, and the files a tool result keeps in its
 * display.files) is stored as the same part with
 * `blob: "sha256-<hex>"` and `size` in place of `data`; the file `attachments/<database>/<hex>` holds the
 * bytes (one folder per IndexedDB database, so each database's sweep sees all the references to its files).
 * Files are named by their hash, so a file attached twice, or carried into an edited branch, is kept once.
 *
 *   const blobs = new Blobs(databaseName)
 *   await blobs.offload(parts) -> parts     before a write: bytes to OPFS, references in the parts
 *   await blobs.restore(parts) -> parts     after a read: the bytes back as `data` (what the core and the
 *                                          page's renderers take); a file that is gone becomes a text part
 *                                          saying so, never a broken part
 *   await blobs.sweep(referenced: Set, {minAgeMs?}) removes the files no stored part refers to (but not
 *                                          ones written in the last minutes: another tab may be saving them)
 *   await blobs.usage() -> {files, bytes}
 *   await blobs.read(ref) -> Uint8Array | null      one file's bytes by its reference (sync sends it once)
 *   await blobs.write(ref, bytes)                   a file that came from sync: kept only if its hash is its name
 *
 * Where OPFS is missing (some private windows) or a write fails (quota), the bytes stay inline in
 * IndexedDB, as before: nothing is lost, only not moved.
 */

import { fromBase64, toBase64 } from "../files/base64.js";
import { withoutToolMeta } from "./repair.js";

const DIRECTORY = "attachments";
const PREFIX = "sha256-";
const HAS_BYTES = new Set(["image", "document"]);

/**
 * A part as given or as stored: a contract Part, or an image or document whose bytes are in OPFS (`blob`, `size`).
 * @typedef {{type: string, data?: string | null, blob?: string, size?: number, name?: string | null, text?: string | null,
 *            display?: {files?: LoosePart[]} | null}} LoosePart
 */
/** @typedef {LoosePart & {data: string}} WithBytes */

export class Blobs {
  /** @type {Promise<FileSystemDirectoryHandle | undefined> | null} */
  #dir = null;

  /** @param {string} databaseName */
  constructor(databaseName) {
    this.folder = String(databaseName);
  }

  /** The OPFS directory, or null where this browser has none (then bytes stay in IndexedDB). */
  async #directory() {
    if (this.#dir === null) {
      this.#dir = (async () => {
        try {
          const root = await navigator.storage.getDirectory();
          const all = await root.getDirectoryHandle(DIRECTORY, { create: true });
          return await all.getDirectoryHandle(this.folder, { create: true });
        } catch {
          return undefined;
        }
      })();
    }
    return this.#dir;
  }

  /**
   * @template {LoosePart} P
   * @param {P[]} parts
   * @returns {Promise<P[]>}
   */
  async offload(parts) {
    if (!parts.some((part) => carriesBytes(part) || filesOf(part).some(carriesBytes))) return parts;
    const dir = await this.#directory();
    if (!dir) return parts;
    return withFiles(parts, (part) => this.#offloadPart(dir, part));
  }

  /**
   * @param {FileSystemDirectoryHandle} dir
   * @param {LoosePart} part
   * @returns {Promise<LoosePart>}
   */
  async #offloadPart(dir, part) {
    if (!carriesBytes(part)) return part;
    try {
      const bytes = fromBase64(part.data);
      const name = await hashName(bytes);
      await writeOnce(dir, name, bytes);
      const { data: _inline, ...rest } = part;
      return { ...rest, blob: PREFIX + name, size: bytes.length };
    } catch {
      return part; // kept inline: a full quota or a broken handle loses nothing
    }
  }

  /**
   * @template {LoosePart} P
   * @param {P[]} parts
   * @returns {Promise<P[]>}
   */
  async restore(parts) {
    if (!Array.isArray(parts) || !parts.some((p) => isStored(p) || filesOf(p).some(isStored))) return parts;
    const dir = await this.#directory();
    return withFiles(parts, (part) => this.#restorePart(dir, part));
  }

  /**
   * @param {FileSystemDirectoryHandle | undefined} dir
   * @param {LoosePart} part
   * @returns {Promise<LoosePart>}
   */
  async #restorePart(dir, part) {
    if (!isStored(part)) return part;
    const { blob, size: _size, ...rest } = part;
    try {
      if (!dir) throw new Error("no OPFS in this browser");
      const file = await (await dir.getFileHandle(blob.slice(PREFIX.length))).getFile();
      return { ...rest, data: toBase64(new Uint8Array(await file.arrayBuffer())) };
    } catch {
      const what = part.name ?? (part.type === "image" ? "an image" : "a file");
      return { type: "text", text: `[${what} attached here is no longer in this browser's storage]` };
    }
  }

  /**
   * @param {Set<string>} referenced
   * @param {{minAgeMs?: number}} [options]
   */
  async sweep(referenced, { minAgeMs = 10 * 60_000 } = {}) {
    const dir = await this.#directory();
    if (!dir) return 0;
    const unreferenced = [];
    for await (const [name, handle] of dir.entries()) {
      if (referenced.has(PREFIX + name) || !(handle instanceof FileSystemFileHandle)) continue;
      // A file written in the last minutes may belong to a message another tab is saving right now.
      if (Date.now() - (await handle.getFile()).lastModified < minAgeMs) continue;
      unreferenced.push(name);
    }
    for (const name of unreferenced) await dir.removeEntry(name).catch(() => {});
    return unreferenced.length;
  }

  /**
   * @param {string} ref
   * @returns {Promise<Uint8Array | null>}
   */
  async read(ref) {
    const dir = await this.#directory();
    if (!dir) return null; // no OPFS here: no file of ours either
    try {
      const file = await (await dir.getFileHandle(String(ref).slice(PREFIX.length))).getFile();
      return new Uint8Array(await file.arrayBuffer());
    } catch {
      return null;
    }
  }

  /**
   * @param {string} ref
   * @param {Uint8Array<ArrayBuffer>} bytes
   */
  async write(ref, bytes) {
    const name = await hashName(bytes);
    if (PREFIX + name !== ref) throw new Error(`the bytes for ${ref} do not have that hash`);
    const dir = await this.#directory();
    if (dir) await writeOnce(dir, name, bytes);
  }

  async usage() {
    const dir = await this.#directory();
    let files = 0;
    let bytes = 0;
    for await (const handle of dir?.values() ?? []) {
      if (!(handle instanceof FileSystemFileHandle)) continue; // only files are ours
      files += 1;
      bytes += (await handle.getFile()).size;
    }
    return { files, bytes };
  }
}

/** The blob references a stored message holds: in its parts, and in the files its tool calls wrote (display.files). */
/**
 * @param {{parts?: LoosePart[]} | null | undefined} message
 * @returns {string[]}
 */
export function blobRefs(message) {
  /** @type {LoosePart[]} */
  const parts = withoutToolMeta(message)?.parts ?? [];
  return [...parts, ...parts.flatMap(filesOf)].map((p) => p?.blob).filter((ref) => typeof ref === "string");
}

/**
 * The files a tool result's card offers (what the code interpreter wrote: document parts), else none.
 * @param {LoosePart | null | undefined} part
 * @returns {LoosePart[]}
 */
function filesOf(part) {
  const files = part?.type === "tool_result" ? part.display?.files : undefined;
  return Array.isArray(files) ? files : [];
}

/**
 * Each part through `fn`, and each file a tool result keeps (display.files) too.
 * @template {LoosePart} P
 * @param {P[]} parts
 * @param {(part: LoosePart) => Promise<LoosePart>} fn
 * @returns {Promise<P[]>}
 */
function withFiles(parts, fn) {
  return /** @type {Promise<P[]>} */ (Promise.all(parts.map(async (part) => {
    const files = filesOf(part);
    if (!files.length) return fn(part);
    // A file that is gone stays a file (the note as its text): display.files holds documents only.
    const kept = await Promise.all(files.map(async (file) => {
      const out = await fn(file);
      return out.type === file.type ? out : { type: "document", name: file.name, mime_type: "text/plain", text: out.text };
    }));
    return { ...part, display: { ...part.display, files: kept } };
  })));
}

/**
 * @param {LoosePart | null | undefined} part
 * @returns {part is LoosePart & {blob: string}}
 */
const isStored = (part) => typeof part?.blob === "string";

/**
 * @param {LoosePart | null | undefined} part
 * @returns {part is WithBytes}
 */
function carriesBytes(part) {
  return HAS_BYTES.has(part?.type ?? "") && typeof part?.data === "string" && part.data.length > 0;
}

/** @param {Uint8Array<ArrayBuffer>} bytes */
async function hashName(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * @param {FileSystemDirectoryHandle} dir
 * @param {string} name
 * @param {Uint8Array<ArrayBuffer>} bytes
 */
async function writeOnce(dir, name, bytes) {
  try {
    const existing = await (await dir.getFileHandle(name)).getFile();
    if (existing.size === bytes.length) return; // the same bytes (same hash) are already there
  } catch {
    // not there yet
  }
  const handle = await dir.getFileHandle(name, { create: true });
  const writable = await handle.createWritable();
  try {
    await writable.write(bytes);
    await writable.close();
  } catch (err) {
    await writable.abort().catch(() => {});
    await dir.removeEntry(name).catch(() => {});
    throw err;
  }
}
