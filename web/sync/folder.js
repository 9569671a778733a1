/**
 * A folder on this computer as a sync target (target.js), chosen with the File System Access API: put it inside a
 * Dropbox, Google Drive, iCloud Drive or OneDrive folder and their desktop apps carry it to other devices, with no
 * API key. Chromium-based desktop browsers have the picker; elsewhere Settings offers WebDAV only.
 *
 *   new FolderTarget(directoryHandle)
 *
 * A file's version (its "etag") is its size and modification time; write() checks it just before writing, so two
 * tabs of this browser never overwrite each other unseen. Files a cloud app adds beside ours ("conflicted copy"
 * and the like) do not match the names sync writes and are ignored; the merge rules make either copy safe.
 */

import { SYNC_NAME, SyncConflictError, SyncTargetError } from "./target.js";

/** @typedef {import("./target.js").SyncTarget} SyncTarget */

/** @param {File} file */
const versionOf = (file) => `${file.size}-${file.lastModified}`;

/** @implements {SyncTarget} */
export class FolderTarget {
  /** @param {FileSystemDirectoryHandle} handle */
  constructor(handle) {
    this.handle = handle;
    this.label = handle.name;
  }

  /** Whether this page may still write there; asks (needs a click) when `ask`. @param {boolean} ask */
  async allowed(ask) {
    const handle = /** @type {FileSystemDirectoryHandle & {queryPermission?: Function, requestPermission?: Function}} */ (this.handle);
    const options = { mode: "readwrite" };
    if (!handle.queryPermission) return true; // the origin's own storage (OPFS) needs no permission
    if (await handle.queryPermission(options) === "granted") return true;
    return ask && handle.requestPermission ? await handle.requestPermission(options) === "granted" : false;
  }

  async list() {
    /** @type {import("./target.js").RemoteEntry[]} */
    const entries = [];
    try {
      for await (const [name, entry] of /** @type {any} */ (this.handle).entries()) {
        if (entry.kind === "file" && SYNC_NAME.test(name)) entries.push({ name, etag: versionOf(await entry.getFile()) });
      }
    } catch (err) {
      throw this.#failed(err);
    }
    return entries;
  }

  /** @param {string} name */
  async #file(name) {
    try {
      return await (await this.handle.getFileHandle(name)).getFile();
    } catch (err) {
      if (err instanceof DOMException && err.name === "NotFoundError") return null;
      throw this.#failed(err);
    }
  }

  /** @param {string} name */
  async read(name) {
    const file = await this.#file(name);
    return file ? { bytes: new Uint8Array(await file.arrayBuffer()), etag: versionOf(file) } : null;
  }

  /** @param {string} name @param {Uint8Array} bytes @param {string | null} ifMatch */
  async write(name, bytes, ifMatch) {
    const current = await this.#file(name);
    if (ifMatch === null ? current : !current || versionOf(current) !== ifMatch) throw new SyncConflictError(name);
    try {
      const writable = await (await this.handle.getFileHandle(name, { create: true })).createWritable();
      await writable.write(/** @type {BufferSource} */ (bytes));
      await writable.close();
      const written = await this.#file(name);
      return written ? versionOf(written) : "";
    } catch (err) {
      throw this.#failed(err);
    }
  }

  /** @param {unknown} err */
  #failed(err) {
    const name = err instanceof DOMException ? err.name : "";
    const folder = this.label;
    if (name === "NotAllowedError") return new SyncTargetError("sync.err.folderNotAllowed", { folder });
    if (name === "QuotaExceededError") return new SyncTargetError("sync.err.folderFull", { folder });
    return new SyncTargetError("sync.err.folderFailed", { folder, reason: name || String(err) });
  }
}
