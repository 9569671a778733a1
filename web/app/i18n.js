/**
 * The UI's words, in English and Japanese. Every visible string goes through t().
 *
 *   t("chat.usage", {input: 3, output: 9})   -> "3 in · 9 out tokens"
 *   setLanguage("ja")                        re-labels every element marked in the HTML:
 *       data-i18n="key"              its text
 *       data-i18n-label="key"        its aria-label (the accessible name)
 *       data-i18n-placeholder="key"  its placeholder
 *       data-i18n-title="key"        its title
 *   onLanguageChange(cb)             for parts drawn by code (they redraw themselves)
 *
 * The choice is kept as a preference (web/store/prefs.js); the first visit follows the browser.
 */

import en from "../i18n/en.json";
import ja from "../i18n/ja.json";
import { PREFS, prefs } from "../store/prefs.js";

/** @typedef {(key: string, vars?: Record<string, unknown>) => string} Translate */

export const LANGUAGES = Object.freeze({ en: "English", ja: "日本語" });
/** @type {Record<string, Record<string, string | undefined> | undefined>} */
const TABLES = { en, ja };
/** @type {Record<string, string | undefined>} */
const EN = en;
/** @type {Set<(lang: string) => void>} */
const listeners = new Set();

let current = pickInitial();

/** @returns {string} */
function pickInitial() {
  const saved = prefs.get(PREFS.language);
  if (saved && TABLES[saved]) return saved;
  return (navigator.language || "en").toLowerCase().startsWith("ja") ? "ja" : "en";
}

export function language() {
  return current;
}

/** @type {Translate} */
export function t(key, vars = {}) {
  const template = TABLES[current]?.[key] ?? EN[key];
  if (template === undefined) {
    console.warn(`i18n: no text for ${key}`);
    return key;
  }
  return fill(template, vars);
}

/**
 * @param {string} template
 * @param {Record<string, unknown>} vars
 */
function fill(template, vars) {
  return template.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
}

/**
 * A t() for one language, whatever the page's is (a part shown in another language, tests).
 * @param {string} lang
 * @returns {Translate}
 */
export function translator(lang) {
  const table = TABLES[lang] ?? EN;
  return (key, vars = {}) => fill(table[key] ?? EN[key] ?? key, vars);
}

/** @param {string} key */
export function hasText(key) {
  return key in (TABLES[current] ?? EN) || key in EN;
}

/**
 * @param {ParentNode} root
 * @param {string} selector
 */
function marked(root, selector) {
  return /** @type {NodeListOf<HTMLElement>} */ (root.querySelectorAll(selector));
}

/** @param {ParentNode} [root] */
export function applyTranslations(root = document) {
  document.documentElement.lang = current;
  for (const el of marked(root, "[data-i18n]")) el.textContent = t(el.dataset.i18n ?? "");
  for (const el of marked(root, "[data-i18n-label]")) el.setAttribute("aria-label", t(el.dataset.i18nLabel ?? ""));
  for (const el of marked(root, "[data-i18n-placeholder]")) {
    el.setAttribute("placeholder", t(el.dataset.i18nPlaceholder ?? ""));
  }
  for (const el of marked(root, "[data-i18n-title]")) el.title = t(el.dataset.i18nTitle ?? "");
}

/** @param {string} lang */
export function setLanguage(lang) {
  if (!TABLES[lang] || lang === current) return;
  current = lang;
  prefs.set(PREFS.language, lang);
  applyTranslations();
  for (const cb of listeners) cb(lang);
}

/**
 * @param {(lang: string) => void} cb
 * @returns {() => boolean} stops listening
 */
export function onLanguageChange(cb) {
  listeners.add(cb);
  return () => listeners.delete(cb);
}
