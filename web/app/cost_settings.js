/**
 * Settings → "Costs": the currency amounts are shown in (USD, or another at a rate the user enters), the spending
 * caps per conversation and per day (in that currency; empty: none), and the user's own prices per model (USD per
 * million tokens) for models the bundled price list lacks or that the user pays otherwise for. Kept by
 * web/app/prices.js (prefs: orizuru.costs); each button saves at once and says so.
 *
 *   new CostSettingsForm({element, model})   model(): the model in use, offered for a new price
 */

import { h } from "./dom.js";
import { onLanguageChange, t } from "./i18n.js";
import { costSettings, onPricesChange, setCostSettings } from "./prices.js";

export class CostSettingsForm {
  /** @param {{element: HTMLElement, model?: () => string}} parts */
  constructor({ element, model = () => "" }) {
    this.element = element;
    this.model = model;
    onLanguageChange(() => this.render());
    onPricesChange(() => this.render()); // another device's, brought by sync, or the price list loaded
    this.render();
  }

  render(said = "") {
    const s = costSettings();
    const field = (/** @type {string} */ id, /** @type {string} */ label, /** @type {Record<string, unknown>} */ attrs) => {
      const input = h("input", { id, autocomplete: "off", ...attrs });
      return [h("label", { for: id }, label), input];
    };
    const [currencyLabel, currency] = field("cost-currency", t("cost.currency"), { value: s.currency, maxLength: 3, size: 4 });
    const [rateLabel, rate] = field("cost-rate", t("cost.rate"), { type: "number", min: "0", step: "any", value: String(s.rate) });
    const [capChatLabel, capChat] = field("cost-cap-conversation", t("cost.capConversation.label"),
                                          { type: "number", min: "0", step: "any", value: s.caps.conversation ?? "" });
    const [capDayLabel, capDay] = field("cost-cap-day", t("cost.capDay.label"),
                                        { type: "number", min: "0", step: "any", value: s.caps.day ?? "" });
    const [modelLabel, model] = field("cost-model", t("cost.model"), { value: this.model(), spellcheck: "false" });
    const [inLabel, input] = field("cost-input", t("cost.input"), { type: "number", min: "0", step: "any" });
    const [outLabel, output] = field("cost-output", t("cost.output"), { type: "number", min: "0", step: "any" });
    const status = h("p", { className: "status-line", "aria-live": "polite" }, said);
    const value = (/** @type {HTMLElement} */ el) => /** @type {HTMLInputElement} */ (el).value.trim();
    const saveCosts = () => {
      const code = value(currency).toUpperCase();
      const numbers = [value(rate), value(capChat), value(capDay)].map((v) => (v === "" ? null : Number(v)));
      if (!/^[A-Z]{3}$/.test(code)) return void (status.textContent = t("cost.badCurrency"));
      if (numbers.some((n) => n !== null && !(n >= 0))) return void (status.textContent = t("cost.bad"));
      const [r, conversation, day] = numbers;
      setCostSettings({ ...s, currency: code, rate: code === "USD" ? 1 : r || 1, caps: { conversation, day } });
      this.render(t("cost.saved"));
    };
    const addPrice = () => {
      const [name, i, o] = [value(model), Number(value(input)), Number(value(output))];
      if (!name || value(input) === "" || value(output) === "" || !(i >= 0) || !(o >= 0)) {
        return void (status.textContent = t("cost.badPrice"));
      }
      setCostSettings({ ...s, prices: { ...s.prices, [name]: { input: i, output: o } } });
      this.render(t("cost.saved"));
    };
    const remove = (/** @type {string} */ name) => {
      const { [name]: _gone, ...rest } = s.prices;
      setCostSettings({ ...s, prices: rest });
      this.render(t("cost.saved"));
    };
    const own = Object.entries(s.prices).map(([name, p]) => h("li", {},
      h("span", {}, t("cost.priceItem", { model: name, input: p.input, output: p.output })),
      h("button", { type: "button", onclick: () => remove(name), "aria-label": t("cost.removePrice", { model: name }) },
        t("cost.remove"))));
    this.element.replaceChildren(
      h("legend", {}, t("cost.title")),
      h("small", { className: "hint" }, t("cost.hint")),
      h("div", { className: "cost-grid" }, currencyLabel, currency, rateLabel, rate, capChatLabel, capChat,
        capDayLabel, capDay),
      h("button", { type: "button", id: "cost-save", onclick: saveCosts }, t("cost.save")),
      h("ul", { className: "host-list", id: "cost-prices", "aria-label": t("cost.prices") }, own),
      h("div", { className: "cost-grid" }, modelLabel, model, inLabel, input, outLabel, output),
      h("button", { type: "button", id: "cost-add-price", onclick: addPrice }, t("cost.addPrice")),
      status);
  }
}
