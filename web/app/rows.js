/**
 * A list whose rows are one Tab stop each (a roving tabindex, as the WAI-ARIA grid and listbox patterns
 * do): Tab enters the list on one row and leaves it at the next; ↑/↓ (Home/End) move between the rows,
 * onto each row's main button (`.open`), and ←/→ along the row's controls (its checkbox, title and
 * actions). A field being edited in a row (rename, folder) keeps its arrows.
 *
 *   keyboardRows(list, onRow)   listens on `list`; onRow(li) is told the row the user moved to
 *   tabStop(list, li | null)    after a redraw: that row (else the first) is the list's one stop
 */

const CONTROLS = "button, input:not([type='text'])";

/** @param {ParentNode} root */
function controlsOf(root) {
  return /** @type {HTMLElement[]} */ ([...root.querySelectorAll(CONTROLS)]);
}

/** @param {HTMLElement} list */
function rowsOf(list) {
  return [...list.querySelectorAll("li")].filter((li) => li.querySelector(":scope > .open"));
}

/** @param {Element | undefined} li */
function title(li) {
  return /** @type {HTMLElement | null | undefined} */ (li?.querySelector(":scope > .open"));
}

/**
 * @param {HTMLElement} list
 * @param {(li: HTMLLIElement | null) => void} [onRow]
 */
export function keyboardRows(list, onRow = () => {}) {
  list.addEventListener("focusin", (ev) => {
    const target = ev.target;
    if (!(target instanceof HTMLElement) || !target.matches(CONTROLS)) return;
    for (const el of controlsOf(list)) el.tabIndex = el === target ? 0 : -1;
    onRow(target.closest("li"));
  });
  list.addEventListener("keydown", (ev) => {
    const target = ev.target;
    if (!(target instanceof HTMLElement) || !target.matches(CONTROLS)) return;
    if (ev.altKey || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    const row = target.closest("li");
    if (!row) return;
    const rows = rowsOf(list);
    const i = rows.indexOf(row);
    const controls = controlsOf(row);
    const j = controls.indexOf(target);
    /** @type {Record<string, (() => HTMLElement | null | undefined) | undefined>} */
    const moves = {
      ArrowDown: () => title(rows[i + 1]), ArrowUp: () => title(rows[i - 1]),
      Home: () => title(rows[0]), End: () => title(rows.at(-1)),
      ArrowRight: () => controls[j + 1], ArrowLeft: () => controls[j - 1],
    };
    const next = moves[ev.key];
    if (!next) return;
    ev.preventDefault(); // the list does not scroll: the focused row is scrolled into view
    next()?.focus();
  });
}

/**
 * @param {HTMLElement} list
 * @param {Element | null | undefined} row
 */
export function tabStop(list, row) {
  const controls = controlsOf(list);
  if (controls.some((el) => el === document.activeElement)) return; // focusin has made it the stop
  const stop = row?.querySelector(":scope > .open") ?? rowsOf(list)[0]?.querySelector(":scope > .open");
  for (const el of controls) el.tabIndex = el === stop ? 0 : -1;
}
