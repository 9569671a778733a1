/**
 * Tells the other tabs of this origin what changed, so they refresh (BroadcastChannel).
 *
 *   const channel = new ChangeChannel(dbName)
 *   channel.post(change)            to every other tab (never echoed back to this one)
 *   channel.subscribe(cb) -> unsubscribe
 *   channel.close()
 *
 * A change is a small plain object:
 *   {type: "conversation", conversation_id}             created, renamed, deleted, restored, leaf moved
 *   {type: "message", conversation_id, message_id}      added, finished, interrupted
 *   {type: "delta", conversation_id, message_id, event} one streamed event of a reply being written
 *   {type: "import", conversation_ids}
 *   {type: "sync", conversation_ids}                   what sync brought from another device, one notice a burst
 * and, delivered here, `remote: true` when another tab posted it; this tab's store adds `repaired: true` to a
 * message it found interrupted later and `synced: true` to what came from another device (transcripts.js).
 *
 * @typedef {{type: "conversation", conversation_id: string} | {type: "message", conversation_id: string,
 *   message_id?: string} | {type: "delta", conversation_id: string, message_id: string, event: unknown}
 *   | {type: "import", conversation_ids: string[]} | {type: "sync", conversation_ids: string[]}} Change
 * @typedef {Change & {remote?: boolean, repaired?: boolean, synced?: boolean}} ChangeNotice
 * @typedef {(change: ChangeNotice) => void} ChangeListener
 */

export class ChangeChannel {
  /** @param {string} dbName */
  constructor(dbName) {
    /** @type {Set<ChangeListener>} */
    this.listeners = new Set();
    this.channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(`orizuru-store:${dbName}`) : null;
    this.channel?.addEventListener("message", (ev) => this.emit({ ...ev.data, remote: true }));
  }

  /** @param {Change} change */
  post(change) {
    try {
      this.channel?.postMessage(change);
    } catch {
      // a closed channel (the tab is going away) has no one left to tell
    }
  }

  /**
   * Deliver a change to this tab's own subscribers.
   * @param {ChangeNotice} change
   */
  emit(change) {
    for (const cb of this.listeners) {
      try {
        cb(change);
      } catch (err) {
        console.error("store subscriber failed", err);
      }
    }
  }

  /**
   * @param {ChangeListener} cb
   * @returns {() => void}
   */
  subscribe(cb) {
    this.listeners.add(cb);
    return () => {
      this.listeners.delete(cb);
    };
  }

  close() {
    this.channel?.close();
    this.listeners.clear();
  }
}
