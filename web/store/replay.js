/**
 * Rebuild a reply from the stream events stored for it, so a reply cut off by a reload or a killed
 * tab comes back with every event that arrived (pure functions, no storage).
 *
 *   replayEvents(events) -> {parts, usage?, finish_reason?, error?}
 *
 * `events` are pycore's unified stream events as JSON (pycore/messages.py): text_delta,
 * reasoning_delta, tool_call_start, tool_call_args_delta, tool_call_end, usage, finish, error.
 * Parts come back in the order of their `index`, in the unified Message part JSON. Other event
 * types (step, tool_start, ...) are ignored here. A tool call whose arguments never finished keeps
 * the arguments that parse, else `{}`, and its raw text in provider_details.partial_arguments.
 */

export function replayEvents(events) {
  const slots = new Map(); // index -> part under construction
  const rawArgs = new Map(); // index -> tool-call argument text so far
  const out = {};
  for (const ev of events) {
    switch (ev?.type) {
      case "text_delta": {
        const part = slot(slots, ev.index, () => ({ type: "text", text: "" }));
        part.text += ev.text ?? "";
        if (ev.refusal) part.refusal = true;
        break;
      }
      case "reasoning_delta":
        slot(slots, ev.index, () => ({ type: "reasoning", text: "" })).text += ev.text ?? "";
        break;
      case "tool_call_start":
        slot(slots, ev.index, () => ({ type: "tool_call", id: ev.id, name: ev.name, arguments: {} }));
        rawArgs.set(ev.index, "");
        break;
      case "tool_call_args_delta":
        rawArgs.set(ev.index, (rawArgs.get(ev.index) ?? "") + (ev.delta ?? ""));
        break;
      case "tool_call_end": {
        const part = slot(slots, ev.index, () => ({ type: "tool_call", id: ev.id, name: ev.name, arguments: {} }));
        part.arguments = ev.arguments ?? {};
        rawArgs.delete(ev.index);
        break;
      }
      case "usage":
        out.usage = ev.usage;
        break;
      case "finish":
        out.finish_reason = ev.reason;
        break;
      case "error":
        out.error = ev.error;
        break;
      default:
        break;
    }
  }
  for (const [index, text] of rawArgs) {
    const part = slots.get(index);
    if (part?.type !== "tool_call" || !text) continue;
    try {
      part.arguments = JSON.parse(text);
    } catch {
      part.provider_details = { ...part.provider_details, partial_arguments: text };
    }
  }
  out.parts = [...slots.entries()].sort((a, b) => a[0] - b[0]).map(([, part]) => part);
  return out;
}

function slot(slots, index, make) {
  const key = Number.isInteger(index) ? index : slots.size;
  if (!slots.has(key)) slots.set(key, make());
  return slots.get(key);
}

/** The readable text of a message's parts (text, reasoning, tool names/arguments, tool results). */
export function textOfParts(parts) {
  const out = [];
  for (const part of parts ?? []) {
    if (part.type === "text" || part.type === "reasoning") out.push(part.text ?? "");
    else if (part.type === "tool_call") out.push(`${part.name} ${JSON.stringify(part.arguments ?? {})}`);
    else if (part.type === "tool_result") {
      for (const item of part.content ?? []) if (typeof item?.text === "string") out.push(item.text);
    }
  }
  return out.join("\n");
}
