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

export const LANGUAGES = Object.freeze({ en: "English", ja: "日本語" });
const TABLES = { en, ja };
const listeners = new Set();

let current = pickInitial();

function pickInitial() {
  const saved = prefs.get(PREFS.language);
  if (saved && TABLES[saved]) return saved;
  return (navigator.language || "en").toLowerCase().startsWith("ja") ? "ja" : "en";
}

export function language() {
  return current;
}

export function t(key, vars = {}) {
  const template = TABLES[current][key] ?? en[key];
  if (template === undefined) {
    console.warn(`i18n: no text for ${key}`);
    return key;
  }
  return template.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
}

/** A t() for one language, whatever the page's is (a part shown in another language, tests). */
export function translator(lang) {
  const table = TABLES[lang] ?? en;
  return (key, vars = {}) => (table[key] ?? en[key] ?? key)
    .replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
}

export function hasText(key) {
  return key in TABLES[current] || key in en;
}

export function applyTranslations(root = document) {
  document.documentElement.lang = current;
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-label]")) el.setAttribute("aria-label", t(el.dataset.i18nLabel));
  for (const el of root.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
  for (const el of root.querySelectorAll("[data-i18n-title]")) el.title = t(el.dataset.i18nTitle);
}

export function setLanguage(lang) {
  if (!TABLES[lang] || lang === current) return;
  current = lang;
  prefs.set(PREFS.language, lang);
  applyTranslations();
  for (const cb of listeners) cb(lang);
}

export function onLanguageChange(cb) {
  listeners.add(cb);
  return () => listeners.delete(cb);
}
