// The example of README "Embedding the agent in your page": the library, two page tools, one question.
import { createAgent, VENDORS } from "../orizuru.js";

const $ = (id) => document.getElementById(id);
$("vendors").append(...VENDORS.map((v) => Object.assign(document.createElement("option"), { value: v.id, label: v.label })));
const log = (line) => $("log").append(`${line}\n`);
const agent = createAgent({ onStage: (stage) => log(`core: ${stage}`) });

agent.registerTool({
  name: "roll_dice",
  description: "Roll dice; returns each die's value.",
  inputSchema: { type: "object", properties: { count: { type: "integer", minimum: 1, maximum: 10 },
                                               sides: { type: "integer", minimum: 2 } } },
}, ({ count = 1, sides = 6 }) => Array.from({ length: count }, () => 1 + Math.floor(Math.random() * sides)));

agent.registerTool({
  name: "local_time",
  description: "The user's local date and time, and time zone.",
  inputSchema: { type: "object", properties: {} },
}, () => ({ now: new Date().toString(), zone: Intl.DateTimeFormat().resolvedOptions().timeZone }));

$("ask").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const profile = Object.fromEntries(new FormData($("profile")));
  agent.profile = { ...profile, baseUrl: profile.baseUrl || undefined };
  $("answer").textContent = "";
  try {
    const result = await agent.run(new FormData($("ask")).get("question"), {
      onEvent: (event) => {
        if (event.type === "text_delta") $("answer").append(event.text);
        else log(JSON.stringify(event).slice(0, 300));
      },
    });
    log(`done: ${result.stop_reason}${result.error ? ` (${result.error.code}: ${result.error.message})` : ""}`);
  } catch (err) {
    log(`failed: ${err.code ?? "error"}: ${err.message}`);
  }
});
$("stop").addEventListener("click", () => agent.stop());
