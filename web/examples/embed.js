// The example of README "Embedding the agent in your page": the library, two page tools, one question.
import { createAgent, VENDORS } from "../orizuru.js";

/**
 * This page's element `id`, of the kind it must be.
 * @template {HTMLElement} T
 * @param {string} id
 * @param {{ new (): T, prototype: T }} kind
 * @returns {T}
 */
function $(id, kind) {
  const el = document.getElementById(id);
  if (!(el instanceof kind)) throw new Error(`embed.html has no #${id}`);
  return el;
}
$("vendors", HTMLDataListElement).append(...VENDORS.map((v) => Object.assign(document.createElement("option"), { value: v.id, label: v.label })));
/** @param {string} line */
const log = (line) => $("log", HTMLElement).append(`${line}\n`);
const agent = createAgent({ onStage: (stage) => log(`core: ${stage}`) });

agent.registerTool({
  name: "roll_dice",
  description: "Roll dice; returns each die's value.",
  inputSchema: { type: "object", properties: { count: { type: "integer", minimum: 1, maximum: 10 },
                                               sides: { type: "integer", minimum: 2 } } },
}, ({ count = 1, sides = 6 }) => Array.from({ length: Number(count) }, () => 1 + Math.floor(Math.random() * Number(sides))));

agent.registerTool({
  name: "local_time",
  description: "The user's local date and time, and time zone.",
  inputSchema: { type: "object", properties: {} },
}, () => ({ now: new Date().toString(), zone: Intl.DateTimeFormat().resolvedOptions().timeZone }));

$("ask", HTMLFormElement).addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const profile = new FormData($("profile", HTMLFormElement));
  /** @param {string} name */
  const field = (name) => String(profile.get(name) ?? "");
  agent.profile = { vendor: field("vendor"), model: field("model"), apiKey: field("apiKey"),
                    baseUrl: field("baseUrl") || undefined };
  $("answer", HTMLElement).textContent = "";
  try {
    const result = await agent.run(String(new FormData($("ask", HTMLFormElement)).get("question") ?? ""), {
      onEvent: (event) => {
        if (event.type === "text_delta") $("answer", HTMLElement).append(event.text);
        else log(JSON.stringify(event).slice(0, 300));
      },
    });
    log(`done: ${result.stop_reason}${result.error ? ` (${result.error.code}: ${result.error.message})` : ""}`);
  } catch (err) {
    const { code, message } = /** @type {{ code?: string, message?: string }} */ (err ?? {});
    log(`failed: ${code ?? "error"}: ${message}`);
  }
});
$("stop", HTMLButtonElement).addEventListener("click", () => agent.stop());
