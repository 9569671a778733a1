/**
 * The page's few app-wide happenings, for the parts that react to them without knowing who causes them (so the
 * composition root in web/main.js never hands a part a callback into one made after it):
 *
 *   "conversation"  the conversation on screen changed (a Conversation, or null for a new chat)   chat.js
 *   "running"       a reply started or ended streaming (boolean)                                  chat.js
 *   "profiles"      Settings changed the profiles (the one saved, or null)                         settings.js
 *   "profile"       the profile in use, as the top bar shows it (a Profile, or null when none)    top_bar.js
 *   "attach"        {resource, parts}: an MCP resource to send with the next message               tools panel
 *   "suggest"       text an MCP App view suggests for the message box                             MCP App views
 *   "reply_text"    a piece of the reply's words as it streams (string)                          chat.js
 *
 * A language change has its own channel (i18n.js onLanguageChange): each part redraws itself.
 *
 *   const bus = new Bus();  const off = bus.on(type, (detail) => …);  bus.emit(type, detail)
 *
 * @typedef {import("../store/transcripts.js").Conversation} Conversation
 * @typedef {import("./settings.js").Profile} Profile
 * @typedef {{conversation: Conversation | null, running: boolean, profiles: Profile | null, profile: Profile | null,
 *   attach: {resource: {uri: string, name?: string | null}, parts: import("../types/contract").Part[]},
 *   suggest: string, reply_text: string}} BusEvents   each event's detail
 * @typedef {keyof BusEvents} BusEvent
 */

/** @type {readonly BusEvent[]} */
export const BUS_EVENTS = Object.freeze(["conversation", "running", "profiles", "profile", "attach", "suggest",
                                                           "reply_text"]);

export class Bus {
  /** @type {Map<string, Set<(detail: unknown) => void>>} */
  #listeners = new Map(BUS_EVENTS.map((type) => [type, new Set()]));

  /**
   * @template {BusEvent} E
   * @param {E} type
   * @param {(detail: BusEvents[E]) => void} listener
   * @returns {() => boolean} stops listening
   */
  on(type, listener) {
    const listeners = this.#known(type);
    const held = /** @type {(detail: unknown) => void} */ (listener);
    listeners.add(held);
    return () => listeners.delete(held);
  }

  /**
   * @template {BusEvent} E
   * @param {E} type
   * @param {BusEvents[E]} detail
   */
  emit(type, detail) {
    for (const listener of [...this.#known(type)]) {
      try {
        listener(detail);
      } catch (err) {
        console.error(`bus: a "${type}" listener failed:`, err); // one part's failure does not stop the others
      }
    }
  }

  /**
   * @param {string} type
   * @returns {Set<(detail: unknown) => void>}
   */
  #known(type) {
    const listeners = this.#listeners.get(type);
    if (!listeners) throw new Error(`bus: no event named ${JSON.stringify(type)} (known: ${BUS_EVENTS.join(", ")})`);
    return listeners;
  }
}
