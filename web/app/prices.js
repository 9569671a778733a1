/**
 * What replies cost and how full the model's context is: the one place for prices, spending and context windows.
 *
 * Prices and context windows come from pydantic's genai-prices data (web/app/price_data.js: pinned by the lock,
 * updated by the build, its own chunk fetched on first use, never updated from the network). A price the user
 * entered for a model in Settings → Costs (USD per million tokens) wins over the data, and is the only price of a
 * model the data does not know or of a vendor it cannot know (Ollama, LM Studio, vLLM, any OpenAI-compatible
 * server). Amounts are USD inside; the user's currency is only how they are shown (a rate the user entered).
 *
 *   const p = new Prices(lib, settings)          lib: price_data.js's module, or null while it loads
 *   p.cost(usage, vendor, model) -> USD | null (price unknown) | undefined (the data is still loading)
 *   p.window(vendor, model) -> tokens | null     the model's context window, when known
 *   money(usd, settings, locale) -> "$0.0012"    in the user's currency
 *   spendOf(messages, p) -> {usd, unpriced}      what stored replies cost (every branch: each was paid for)
 *   capBreach(spent, settings, nextUsd) -> {scope, cap, spent} | null   the cap the next request would pass
 *   contextTokens(items, draftChars) -> tokens   the next request's size; contextLevel(tokens, window)
 *   dayKey(date) · addSpend(ledger, day, usd)    the per-day ledger (kept in prefs: orizuru.spend)
 *
 * The page's own state (this tab): prices() now, loadPrices() fetches the data once, costSettings() /
 * setCostSettings(s), todaySpend() / recordSpend(usd), onPricesChange(cb) when any of it changes.
 */

import { PREFS, prefs } from "../store/prefs.js";

/**
 * @typedef {import("../types/contract").Usage} Usage
 * @typedef {{calcPrice: typeof import("@pydantic/genai-prices").calcPrice}} PriceLib
 * @typedef {{input: number, output: number}} UserPrice   USD per million input and output tokens
 * @typedef {{currency: string, rate: number, caps: {conversation: number | null, day: number | null},
 *            prices: Record<string, UserPrice>}} CostSettings
 *   caps in the user's currency; rate: how many of it one USD is (1 for USD)
 * @typedef {{usage?: Usage, vendor?: string, model?: string, role?: string}} Priced
 * @typedef {{scope: "conversation" | "day", cap: number, spent: number}} Breach   cap and spent in USD
 */

/** The page's vendors (web/contract.js) as genai-prices names their providers; the others have no list price. */
export const PROVIDERS = Object.freeze(/** @type {Record<string, string | undefined>} */ ({
  openai: "openai", "openai-responses": "openai", anthropic: "anthropic", gemini: "google", groq: "groq",
  together: "together", deepseek: "deepseek", mistral: "mistral", openrouter: "openrouter",
}));

export const NEAR_WINDOW = 0.8; // the meter warns from this share of the window on
const CHARS_PER_TOKEN = 4; // a message not yet counted by a vendor: the usual estimate
const LEDGER_DAYS = 31;

/** @type {CostSettings} */
export const DEFAULT_SETTINGS = Object.freeze({ currency: "USD", rate: 1, caps: { conversation: null, day: null },
                                                 prices: {} });

export class Prices {
  /**
   * @param {PriceLib | null} lib
   * @param {CostSettings} [settings]
   */
  constructor(lib, settings = DEFAULT_SETTINGS) {
    this.lib = lib;
    this.settings = settings;
  }

  /**
   * What `usage` cost in USD.
   * @param {Usage | null | undefined} usage
   * @param {string | undefined} vendor
   * @param {string | undefined} model
   * @returns {number | null | undefined}   null: no price for this model; undefined: the data is not here yet
   */
  cost(usage, vendor, model) {
    const input = usage?.input_tokens ?? 0;
    const output = usage?.output_tokens ?? 0;
    const own = model ? this.settings.prices[model.trim()] : undefined;
    if (own) return (input * own.input + output * own.output) / 1e6;
    const found = this.#lookup({ input_tokens: input, output_tokens: output }, vendor, model);
    return found === undefined ? undefined : found?.total_price ?? null;
  }

  /**
   * @param {string | undefined} vendor
   * @param {string | undefined} model
   * @returns {number | null}   tokens, or null when the data does not know the model (or is not here yet)
   */
  window(vendor, model) {
    return this.#lookup({}, vendor, model)?.model.context_window ?? null;
  }

  /**
   * @param {Record<string, number | undefined>} usage   in genai-prices' names (input_tokens, output_tokens, ...)
   * @param {string | undefined} vendor
   * @param {string | undefined} model
   */
  #lookup(usage, vendor, model) {
    if (!this.lib) return undefined;
    const providerId = vendor ? PROVIDERS[vendor] : undefined;
    if (!providerId || !model) return null;
    try {
      return this.lib.calcPrice(usage, model, { providerId });
    } catch {
      return null; // a model id the data's matchers refuse is a model it has no price for
    }
  }
}

/**
 * @param {number} usd
 * @param {CostSettings} settings
 * @param {string} [locale]
 */
export function money(usd, settings, locale = "en") {
  const amount = usd * (settings.currency === "USD" ? 1 : settings.rate);
  // Replies cost fractions of a cent: three significant digits say what they cost, whole amounts keep their cents.
  const options = amount !== 0 && Math.abs(amount) < 1 ? { maximumSignificantDigits: 3 } : { maximumFractionDigits: 2 };
  try {
    return new Intl.NumberFormat(locale, { style: "currency", currency: settings.currency, ...options }).format(amount);
  } catch {
    return `${new Intl.NumberFormat(locale, options).format(amount)} ${settings.currency}`; // a code Intl lacks
  }
}

/**
 * What the stored replies of a conversation cost: every reply with usage, whichever branch it is on.
 * @param {Iterable<Priced>} messages
 * @param {Prices} p
 */
export function spendOf(messages, p) {
  let usd = 0;
  let unpriced = 0;
  for (const m of messages) {
    if (m.role === "user" || !m.usage) continue;
    const cost = p.cost(m.usage, m.vendor, m.model);
    if (cost == null) unpriced += 1;
    else usd += cost;
  }
  return { usd, unpriced };
}

/**
 * The cap the next request would pass, if any: the conversation's first, then the day's.
 * @param {{conversation: number, day: number}} spent   USD
 * @param {CostSettings} settings
 * @param {number} nextUsd   what the next request's input alone will cost (its reply is not known yet)
 * @returns {Breach | null}
 */
export function capBreach(spent, settings, nextUsd = 0) {
  for (const scope of /** @type {const} */ (["conversation", "day"])) {
    const cap = settings.caps[scope];
    if (cap == null) continue;
    const capUsd = settings.currency === "USD" ? cap : cap / settings.rate;
    if (spent[scope] >= capUsd || spent[scope] + nextUsd > capUsd) return { scope, cap: capUsd, spent: spent[scope] };
  }
  return null;
}

/**
 * How many tokens the next request will carry: the last counted request and its reply (the vendor's own count),
 * plus what came after it and the draft, estimated from their length.
 * @param {{usage?: Usage, chars: number}[]} items   the messages the next request sends, in order
 * @param {number} draftChars
 */
export function contextTokens(items, draftChars = 0) {
  let last = -1;
  items.forEach((item, i) => {
    if (item.usage?.input_tokens != null) last = i;
  });
  const counted = last < 0 ? 0 : (items[last].usage?.input_tokens ?? 0) + (items[last].usage?.output_tokens ?? 0);
  const rest = items.slice(last + 1).reduce((sum, item) => sum + item.chars, 0) + draftChars;
  return counted + Math.ceil(rest / CHARS_PER_TOKEN);
}

/**
 * @param {number} tokens
 * @param {number | null} window
 * @returns {"ok" | "near" | "over" | "unknown"}
 */
export function contextLevel(tokens, window) {
  if (!window) return "unknown";
  if (tokens >= window) return "over";
  return tokens >= window * NEAR_WINDOW ? "near" : "ok";
}

/** @param {Date} date   the local day, as the person lives it */
export function dayKey(date) {
  const pad = (/** @type {number} */ n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/**
 * @param {Record<string, number>} ledger   USD spent per day
 * @param {string} day
 * @param {number} usd
 */
export function addSpend(ledger, day, usd) {
  const next = { ...ledger, [day]: (ledger[day] ?? 0) + usd };
  const keep = Object.keys(next).sort().slice(-LEDGER_DAYS);
  return Object.fromEntries(keep.map((d) => [d, next[d]]));
}

/**
 * Settings as saved, checked: what cannot be read falls back to the default.
 * @param {unknown} raw
 * @returns {CostSettings}
 */
export function checkSettings(raw) {
  const s = /** @type {Partial<CostSettings> | null} */ (raw && typeof raw === "object" ? raw : null);
  const currency = typeof s?.currency === "string" && /^[A-Z]{3}$/.test(s.currency) ? s.currency : "USD";
  return { currency, rate: currency === "USD" ? 1 : positive(s?.rate) || 1,
           caps: { conversation: positive(s?.caps?.conversation), day: positive(s?.caps?.day) },
           prices: checkPrices(s?.prices) };
}

/** @param {unknown} v */
function positive(v) {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null;
}

/**
 * @param {Record<string, Partial<UserPrice> | null> | undefined} prices
 * @returns {Record<string, UserPrice>}
 */
function checkPrices(prices) {
  /** @type {Record<string, UserPrice>} */
  const own = {};
  for (const [model, price] of Object.entries(prices ?? {})) {
    const input = positive(price?.input);
    const output = positive(price?.output);
    if (model && input !== null && output !== null) own[model] = { input, output };
  }
  return own;
}

// ------------------------------------------------------------------ this tab's prices

let current = new Prices(null, savedSettings());
/** @type {Promise<PriceLib> | null} */
let loading = null;
/** @type {Set<() => void>} */
const listeners = new Set();

export function prices() {
  return current;
}

/** The price data, fetched once (a failed fetch is tried again next time); resolves to prices() with it. */
export async function loadPrices() {
  loading ??= import("./price_data.js").then((lib) => {
    current = new Prices(lib, current.settings);
    changed();
    return lib;
  }, (err) => {
    loading = null;
    throw err;
  });
  await loading;
  return current; // with the settings of now, not of when the data came
}

export function costSettings() {
  return current.settings;
}

/** @param {CostSettings} settings */
export function setCostSettings(settings) {
  const checked = checkSettings(settings);
  prefs.setJSON(PREFS.costs, checked);
  current = new Prices(current.lib, checked);
  changed();
}

/** What Settings → Costs holds in this browser (checked). */
function savedSettings() {
  return checkSettings(prefs.getJSON(PREFS.costs, null));
}

/** Settings → Costs read again: sync brought another device's (web/sync/settings.js). */
export function reloadCostSettings() {
  current = new Prices(current.lib, savedSettings());
  changed();
}

/** USD spent today in this browser. */
export function todaySpend() {
  return prefs.getJSON(PREFS.spend, /** @type {Record<string, number>} */ ({}))[dayKey(new Date())] ?? 0;
}

/** @param {number} usd */
export function recordSpend(usd) {
  if (!(usd > 0)) return;
  prefs.setJSON(PREFS.spend, addSpend(prefs.getJSON(PREFS.spend, {}), dayKey(new Date()), usd));
  changed();
}

/** @param {() => void} cb */
export function onPricesChange(cb) {
  listeners.add(cb);
  return () => void listeners.delete(cb);
}

function changed() {
  for (const cb of listeners) cb();
}
