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

function rowsOf(list) {
  return [...list.querySelectorAll("li")].filter((li) => li.querySelector(":scope > .open"));
}

export function keyboardRows(list, onRow = () => {}) {
  list.addEventListener("focusin", (ev) => {
    if (!ev.target.matches(CONTROLS)) return;
    for (const el of list.querySelectorAll(CONTROLS)) el.tabIndex = el === ev.target ? 0 : -1;
    onRow(ev.target.closest("li"));
  });
  list.addEventListener("keydown", (ev) => {
    if (!ev.target.matches(CONTROLS) || ev.altKey || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    const row = ev.target.closest("li");
    const rows = rowsOf(list);
    const i = rows.indexOf(row);
    const controls = [...row.querySelectorAll(CONTROLS)];
    const j = controls.indexOf(ev.target);
    const title = (li) => li?.querySelector(":scope > .open");
    const next = {
      ArrowDown: () => title(rows[i + 1]), ArrowUp: () => title(rows[i - 1]),
      Home: () => title(rows[0]), End: () => title(rows.at(-1)),
      ArrowRight: () => controls[j + 1], ArrowLeft: () => controls[j - 1],
    }[ev.key];
    if (!next) return;
    ev.preventDefault(); // the list does not scroll: the focused row is scrolled into view
    next()?.focus();
  });
}

export function tabStop(list, row) {
  const controls = [...list.querySelectorAll(CONTROLS)];
  if (controls.includes(document.activeElement)) return; // focusin has made it the stop
  const stop = row?.querySelector(":scope > .open") ?? rowsOf(list)[0]?.querySelector(":scope > .open");
  for (const el of controls) el.tabIndex = el === stop ? 0 : -1;
}
