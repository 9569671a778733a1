/**
 * The page's preferences: small, not secret, this browser only (localStorage). Conversations, profiles
 * and keys live in IndexedDB (web/store/index.js); only what is listed in PREFS is kept here, and every
 * module reads and writes it through this one place. Storage that is disabled or full is not an error:
 * a preference that cannot be read falls back to its default, one that cannot be written is lost.
 *
 *   prefs.get(PREFS.language)                  -> string | null
 *   prefs.set(PREFS.language, "ja")
 *   prefs.getJSON(PREFS.imageHosts, [])        -> the parsed value, or the fallback
 *   prefs.setJSON(PREFS.imageHosts, ["a.example"])
 *   prefs.remove(PREFS.oldToolChoices)
 */

export const PREFS = Object.freeze({
  language: "orizuru.lang", // "en" | "ja"
  activeProfile: "orizuru.profile", // the id of the profile in use
  pythonTools: "orizuru.pythonTools.", // + profile id: the profile's Python tool source
  pythonToolDefs: "orizuru.pythonToolDefs.", // + profile id: {source, tools}: the definitions that source made
  classifier: "orizuru.classifier", // focus memory's classifier: {profile, model, strategy}
  mcpServers: "orizuru.mcpServers", // the MCP servers added by URL (headers' values are not kept)
  samplingMaxTokens: "orizuru.samplingMaxTokens", // the most tokens an MCP server's sampling request may use (1024)
  samplingMaxInputChars: "orizuru.samplingMaxInputChars", // the most text a sampling request may send (100,000)
  mcpRoots: "orizuru.mcpRoots", // [{uri, name?}]: the folders MCP servers may know about (roots/list)
  registryUrl: "orizuru.registryUrl", // the MCP registry Tools searches (app/registry_search.js; the official one)
  toolChoices: "orizuru.toolChoices", // per server and tool: ask / allow / deny, with the tool's fingerprint
  oldToolChoices: "orizuru.toolPrefs", // choices by bare tool name, from before they were per server: dropped
  trustedServers: "orizuru.trustedServers", // [server id] the user marked trusted
  imageHosts: "orizuru.imageHosts", // ["host[:port]"]: "Always load images from <host>"
  focusPanel: "orizuru.focusPanel", // "open" | "closed"
  focusTemplates: "orizuru.focusTemplates", // {template name: the user's source} (focus/templates.js)
  theme: "orizuru.theme", // "system" | "light" | "dark" (app/theme.js)
  autoTitle: "orizuru.autoTitle", // "off": conversations keep the first line of the first message as title
  assistant: "orizuru.assistant", // the id of the assistant new chats start from (store/assistants.js)
  interpreterTimeout: "orizuru.interpreterTimeout", // seconds a code interpreter run may take (default 60)
  interpreterNotebooks: "orizuru.interpreterNotebooks", // conversations with a code interpreter up at once (default 3)
  interpreterLeftMinutes: "orizuru.interpreterLeftMinutes", // a left conversation's notebook closes after (default 10)
  voiceDictation: "orizuru.voice.dictation", // "auto" | "browser" | "vendor" (app/voice.js)
  voiceReader: "orizuru.voice.reader", // "browser" | "vendor": whose voice reads replies aloud
  voiceName: "orizuru.voice.name", // a browser voice's name or the vendor's voice ("" : the default)
  voiceSpeed: "orizuru.voice.speed", // 0.5 to 2 (1)
  interpreterPackages: "orizuru.interpreterPackages", // {indexes: [url], pyodide: url | null} (app/package_hosts.js)
  costs: "orizuru.costs", // {currency, rate, caps: {conversation, day}, prices: {model: {input, output}}} (app/prices.js)
  spend: "orizuru.spend", // {"YYYY-MM-DD": USD}: what replies cost each day in this browser (app/prices.js)
});

function storage() {
  try {
    return window.localStorage;
  } catch {
    return null; // disabled (some private modes, sandboxed frames)
  }
}

export const prefs = {
  /**
   * @param {string} key
   * @returns {string | null}
   */
  get(key) {
    try {
      return storage()?.getItem(key) ?? null;
    } catch {
      return null;
    }
  },
  /**
   * @param {string} key
   * @param {unknown} value
   */
  set(key, value) {
    try {
      storage()?.setItem(key, String(value));
    } catch {
      // full or disabled: the preference lasts for this page only
    }
  },
  /**
   * @template T
   * @param {string} key
   * @param {T} fallback
   * @returns {T} the stored value as parsed (trusted to have the fallback's shape), or the fallback
   */
  getJSON(key, fallback) {
    try {
      return JSON.parse(this.get(key) ?? "null") ?? fallback;
    } catch {
      return fallback; // unreadable: the default is the safe way to be wrong
    }
  },
  /**
   * @param {string} key
   * @param {unknown} value
   */
  setJSON(key, value) {
    this.set(key, JSON.stringify(value));
  },
  /** @param {string} key */
  remove(key) {
    try {
      storage()?.removeItem(key);
    } catch {
      // nothing to remove
    }
  },
};
