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

/**
 * What sync tells the user, in their language: `key` names the sentence in web/i18n/*.json (sync.err.*), `vars`
 * fills it (the page translates: app/sync_settings.js). The message is the key, for logs.
 */
export class SyncError extends Error {
  /** @param {string} key @param {Record<string, string | number>} [vars] */
  constructor(key, vars = {}) {
    super(key);
    this.name = "SyncError";
    this.key = key;
    this.vars = vars;
  }
}

/** The place refused or could not be reached: the sentence says what, and what to do. `code` "unreachable": no
 *  answer that this page may read (down, a wrong address, or no CORS: the doctor tells which, doctor.js). */
export class SyncTargetError extends SyncError {
  /**
   * @param {string} key @param {Record<string, string | number>} [vars]
   * @param {string} [kind] what the page may act on ("unreachable": the doctor looks); not one of the core's codes
   */
  constructor(key, vars = {}, kind = "") {
    super(key, vars);
    this.name = "SyncTargetError";
    this.kind = kind;
  }
}
