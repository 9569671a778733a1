/**
 * Where sync keeps its files: the one small interface every place implements (WebDAV today, webdav.js; a local
 * folder or S3-compatible storage would be one more file of the same shape).
 *
 * @typedef {{name: string, etag: string}} RemoteEntry   a file and the version the place gives it
 * @typedef {object} SyncTarget
 * @property {string} label                                what Settings shows (never a password)
 * @property {() => Promise<RemoteEntry[]>} list           the folder's files sync may read (hostile names dropped)
 * @property {(name: string) => Promise<{bytes: Uint8Array, etag: string} | null>} read   null: not there
 * @property {(name: string, bytes: Uint8Array, ifMatch: string | null) => Promise<string>} write
 *     compare-and-swap: `ifMatch` null writes only where no file is, an etag only over that version;
 *     otherwise SyncConflictError, and nothing is written. Resolves to the new version's etag ("" if unknown)
 */

/** The names sync writes: the header, and a kind letter with 64 hex digits. Anything else on the server is ignored. */
export const SYNC_NAME = /^(?:header\.json|[cmbsk]-[0-9a-f]{64})$/;

/** A write lost a race: the file changed (or appeared) since it was read. Read it again, merge, retry. */
export class SyncConflictError extends Error {
  /** @param {string} name */
  constructor(name) {
    super(`${name} changed on the server while this device wrote it`);
    this.name = "SyncConflictError";
  }
}

/** The place refused or could not be reached: `message` says what, and what to do. */
export class SyncTargetError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "SyncTargetError";
  }
}
