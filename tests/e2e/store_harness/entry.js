// Test page for web/store: exposes the module on window so the tests drive it through page.evaluate,
// and records what onError reported.
import * as storeModule from "../../../web/store/index.js";

window.storeModule = storeModule;
window.storeErrors = [];
window.openTestStore = (name) =>
  storeModule.openStore({ name, onError: (e) => window.storeErrors.push(e) });
document.body.dataset.ready = "yes";
