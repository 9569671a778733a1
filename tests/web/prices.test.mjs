// Prices, costs, caps and the context estimate (web/app/prices.js) with the real bundled price data, in Node.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as lib from "../../web/app/price_data.js";
import { addSpend, capBreach, checkSettings, contextLevel, contextTokens, dayKey, DEFAULT_SETTINGS, money, Prices,
         spendOf } from "../../web/app/prices.js";

const USAGE = { input_tokens: 1000, output_tokens: 500 };
const withSettings = (changes) => ({ ...DEFAULT_SETTINGS, ...changes });

test("a listed model costs what the price data says, per million input and output tokens", () => {
  const p = new Prices(lib);
  const listed = lib.calcPrice(USAGE, "gpt-4o-mini", { providerId: "openai" });
  const perMillion = listed.model_price;
  assert.ok(perMillion.input_mtok > 0 && perMillion.output_mtok > 0);
  const expected = (1000 * perMillion.input_mtok + 500 * perMillion.output_mtok) / 1e6;
  assert.ok(Math.abs(p.cost(USAGE, "openai", "gpt-4o-mini") - expected) < 1e-12);
  assert.equal(p.cost(USAGE, "openai-responses", "gpt-4o-mini"), p.cost(USAGE, "openai", "gpt-4o-mini"));
  assert.ok(p.cost(USAGE, "anthropic", "claude-3-5-haiku-latest") > 0);
  assert.ok(p.cost(USAGE, "gemini", "gemini-2.0-flash") > 0, "the Gemini vendor is genai-prices' google");
});

test("the model's context window comes from the same data", () => {
  const p = new Prices(lib);
  assert.equal(p.window("openai", "gpt-4o-mini"), 128000);
  assert.equal(p.window("openai", "no-such-model-xyz"), null);
});

test("an unknown model, or a server of the user's own, has no price until the user enters one, which then wins", () => {
  const p = new Prices(lib);
  assert.equal(p.cost(USAGE, "openai", "no-such-model-xyz"), null);
  assert.equal(p.cost(USAGE, "ollama", "gpt-4o-mini"), null, "a local model is not billed at OpenAI's price");
  assert.equal(p.cost(USAGE, "openai-compatible", "gpt-4o-mini"), null);
  const own = new Prices(lib, withSettings({ prices: { "no-such-model-xyz": { input: 2, output: 8 },
                                                      "gpt-4o-mini": { input: 1, output: 1 } } }));
  assert.equal(own.cost(USAGE, "openai", "no-such-model-xyz"), (1000 * 2 + 500 * 8) / 1e6);
  assert.equal(own.cost(USAGE, "openai", "gpt-4o-mini"), 1500 / 1e6);
});

test("before the price data has loaded a cost is pending (undefined), not unknown (null)", () => {
  const p = new Prices(null);
  assert.equal(p.cost(USAGE, "openai", "gpt-4o-mini"), undefined);
  assert.equal(p.window("openai", "gpt-4o-mini"), null);
  const own = new Prices(null, withSettings({ prices: { mine: { input: 1, output: 2 } } }));
  assert.equal(own.cost(USAGE, "ollama", "mine"), 2000 / 1e6, "the user's own price needs no data");
});

test("a conversation's spend adds every priced reply on every branch and counts the unpriced ones", () => {
  const p = new Prices(null, withSettings({ prices: { m: { input: 1e6, output: 0 } } }));
  const messages = [{ role: "user", usage: { input_tokens: 99 } },
                    { role: "assistant", model: "m", usage: { input_tokens: 2 } },
                    { role: "assistant", model: "m", usage: { input_tokens: 3 } }, // a regenerated branch
                    { role: "assistant", model: "other", usage: { input_tokens: 5 } },
                    { role: "assistant", model: "m" }]; // no usage: an interrupted reply
  assert.deepEqual(spendOf(messages, p), { usd: 5, unpriced: 1 });
});

test("a cap stops the request that would pass it, the conversation's before the day's", () => {
  const caps = (conversation, day) => withSettings({ caps: { conversation, day } });
  assert.equal(capBreach({ conversation: 1, day: 1 }, caps(null, null), 100), null, "no cap, no stop");
  assert.equal(capBreach({ conversation: 0.5, day: 0.5 }, caps(1, 2), 0.4), null);
  assert.deepEqual(capBreach({ conversation: 0.5, day: 0.5 }, caps(1, 2), 0.6), { scope: "conversation", cap: 1, spent: 0.5 });
  assert.deepEqual(capBreach({ conversation: 1, day: 1 }, caps(1, 2), 0), { scope: "conversation", cap: 1, spent: 1 },
                   "reaching the cap exactly stops the next request");
  assert.deepEqual(capBreach({ conversation: 0.1, day: 1.9 }, caps(1, 2), 0.2), { scope: "day", cap: 2, spent: 1.9 });
  const yen = withSettings({ currency: "JPY", rate: 150, caps: { conversation: 300, day: null } });
  assert.equal(capBreach({ conversation: 1.9, day: 0 }, yen, 0), null, "¥300 at 150 a dollar is $2");
  assert.deepEqual(capBreach({ conversation: 2, day: 0 }, yen, 0), { scope: "conversation", cap: 2, spent: 2 });
});

test("the next request's size is the last counted request and reply, plus what follows estimated from its length", () => {
  assert.equal(contextTokens([{ chars: 40 }], 8), 12, "nothing counted yet: four characters a token");
  const items = [{ chars: 4000 }, { chars: 400, usage: { input_tokens: 1000, output_tokens: 100 } },
                 { chars: 400 }, { chars: 80, usage: { output_tokens: 3 } }];
  assert.equal(contextTokens(items, 20), 1000 + 100 + (400 + 80 + 20) / 4, "a usage without input counts as text");
  assert.equal(contextLevel(100, null), "unknown");
  assert.equal(contextLevel(799, 1000), "ok");
  assert.equal(contextLevel(800, 1000), "near");
  assert.equal(contextLevel(1000, 1000), "over");
});

test("the day ledger adds to the local day and keeps a month", () => {
  assert.equal(dayKey(new Date(2026, 0, 5, 23, 59)), "2026-01-05");
  let ledger = {};
  for (let d = 1; d <= 40; d += 1) ledger = addSpend(ledger, `2026-03-${String(d).padStart(2, "0")}`, 0.5);
  ledger = addSpend(ledger, "2026-03-40", 0.25);
  assert.equal(Object.keys(ledger).length, 31);
  assert.equal(ledger["2026-03-40"], 0.75);
  assert.equal(ledger["2026-03-01"], undefined);
});

test("amounts show in the user's currency at their rate, fractions of a cent to three digits", () => {
  assert.equal(money(0.00045, DEFAULT_SETTINGS), "$0.00045");
  assert.equal(money(12.3456, DEFAULT_SETTINGS), "$12.35");
  assert.equal(money(0, DEFAULT_SETTINGS), "$0.00");
  assert.equal(money(2, withSettings({ currency: "JPY", rate: 150 }), "ja"), "￥300");
});

test("saved settings are checked: what cannot be read is the default, a bad price or cap is dropped", () => {
  assert.deepEqual(checkSettings(null), DEFAULT_SETTINGS);
  assert.deepEqual(checkSettings({ currency: "usd", rate: -3, caps: { conversation: "5", day: 2 },
                                   prices: { a: { input: 1, output: 2 }, b: { input: -1, output: 2 }, c: null } }),
                   { currency: "USD", rate: 1, caps: { conversation: null, day: 2 }, prices: { a: { input: 1, output: 2 } } });
  assert.equal(checkSettings({ currency: "EUR", rate: 0 }).rate, 1);
});

test("the price chunk offers no remote update: nothing in it can fetch prices from GitHub", () => {
  assert.deepEqual(Object.keys(lib), ["calcPrice"]);
});
