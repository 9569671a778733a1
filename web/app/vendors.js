/**
 * The vendors, as the core's adapters declare them (web/contract.js, generated from
 * pycore.adapters.catalogue()): no vendor list is written out in the page.
 *
 *   vendorInfo(id)  -> {id, adapter, label, needs_key, needs_base_url, default_base_url} | undefined
 *   vendorLabel(id) -> its name for the reader: a translation where the language has one, else the adapter's
 */

import { VENDORS } from "../contract.js";
import { hasText, t } from "./i18n.js";

/** @param {string} id */
export function vendorInfo(id) {
  return VENDORS.find((v) => v.id === id);
}

/** @param {string} id */
export function vendorLabel(id) {
  const key = `vendor.${id}`;
  return hasText(key) ? t(key) : vendorInfo(id)?.label ?? id;
}
