/**
 * Each conversation's own address: `#/c/<id>`; a new chat is `#/`. Only the fragment changes, so the
 * address is relative and works under any path on any static host. Reload, Back/Forward, an address typed
 * or edited, and a bookmark open the conversation it names; one that is not there (deleted, another
 * browser's) is said so, and a new chat shows.
 *
 *   const router = new Router({store, chat, notify})
 *   await router.start()      opens the address's conversation, then follows Back/Forward and edits
 *   router.shown(conv|null)   the chat says what it shows: the address follows (pushState; a new chat that
 *                             just got its id replaces its own `#/` entry, so Back skips the empty chat)
 *
 * A shared link (`#/shared/<address>&k=<key>`, share_link.js) is not a conversation: it is handed to `onShared`
 * and the address is left as it is.
 *
 * The relay's token (`#token=…`, web/app/relay.js) may sit beside the route: it is taken out of the address
 * before the route is read, so it never appears in an address the user copies or bookmarks.
 */

import { messageOf } from "./error_notice.js";
import { t } from "./i18n.js";
import { readRelayToken } from "./relay.js";

const NEW_CHAT = "#/";
const CONVERSATION = /^#\/c\/([^/?&#]+)$/;

/**
 * The conversation id the fragment names; null for a new chat; undefined for an address that is not a route.
 * @param {string} hash
 * @returns {string | null | undefined}
 */
export function routeOf(hash) {
  if (hash === "" || hash === "#" || hash === NEW_CHAT) return null;
  const match = CONVERSATION.exec(hash);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return undefined;
  }
}

/** @param {string | null | undefined} id */
export function addressOf(id) {
  return id ? `#/c/${encodeURIComponent(id)}` : NEW_CHAT;
}

export class Router {
  /**
   * @param {{store: import("../store/transcripts.js").Store, chat: import("./chat.js").Chat,
   *   notify: import("./notify.js").Notify, onShared?: (hash: string) => void}} parts
   */
  constructor({ store, chat, notify, onShared = () => {} }) {
    this.store = store;
    this.onShared = onShared;
    this.chat = chat;
    this.notify = notify;
    /** @type {string | null} */
    this.current = null; // the conversation on screen, or being opened
  }

  async start() {
    const go = () => this.#go().catch((err) => this.notify(messageOf(err), { error: true }));
    window.addEventListener("popstate", go);
    window.addEventListener("hashchange", go); // an address edited by hand (popstate covers Back/Forward too)
    await go();
  }

  /** @param {{id: string} | null | undefined} conversation */
  shown(conversation) {
    const id = conversation?.id ?? null;
    this.current = id;
    const address = addressOf(id);
    if (location.hash === address) return;
    if (id && routeOf(location.hash) === null) history.replaceState(null, "", address);
    else history.pushState(null, "", address);
  }

  async #go() {
    readRelayToken(); // a token pasted into this tab's address leaves it at once
    if (location.hash.startsWith("#/shared/")) return this.onShared(location.hash);
    const id = routeOf(location.hash);
    if (id !== undefined && id === this.current) return; // already on screen (popstate and hashchange both fire)
    this.current = id ?? null;
    if (id === null) {
      if (this.chat.conversation) this.chat.newChat();
      return;
    }
    const known = id !== undefined && (await this.store.listConversations()).some((c) => c.id === id);
    if (this.current !== (id ?? null)) return; // moved on meanwhile
    if (!known) {
      this.notify(t("route.unknown"));
      this.current = null;
      history.replaceState(null, "", NEW_CHAT);
      if (this.chat.conversation) this.chat.newChat();
      return;
    }
    await this.chat.open(id);
  }
}
