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
 */

export class ChangeChannel {
  constructor(dbName) {
    this.listeners = new Set();
    this.channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(`orizuru-store:${dbName}`) : null;
    this.channel?.addEventListener("message", (ev) => this.emit({ ...ev.data, remote: true }));
  }

  post(change) {
    try {
      this.channel?.postMessage(change);
    } catch {
      // a closed channel (the tab is going away) has no one left to tell
    }
  }

  /** Deliver a change to this tab's own subscribers. */
  emit(change) {
    for (const cb of this.listeners) {
      try {
        cb(change);
      } catch (err) {
        console.error("store subscriber failed", err);
      }
    }
  }

  subscribe(cb) {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  close() {
    this.channel?.close();
    this.listeners.clear();
  }
}
