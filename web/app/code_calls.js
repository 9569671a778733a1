/**
 * Code mode's page side (issue #33): a tool call the code of a `python` call makes (`orizuru.tools` in the
 * notebook, sandbox_py/code_tools.py) reaches the page over the sandbox's channel (web/sandbox/interpreter.js) and
 * goes from here to the core's `mcp.code_call_tool`, which approves it exactly as the model's own calls are: the
 * user's choices for that server's tool, its trust, its hints (pycore.agent.approval). When the core asks, the
 * question is shown on the `python` call's card, saying that its code asks (ToolCard.askForCode); the user's answer
 * goes back with `chat.approve`. The code never reaches the core nor a server: only this function, which takes
 * nothing from it but a server id, a tool's own name and arguments, and refuses any tool not in the run's catalog.
 *
 *   codeCaller({core, catalog, choicesFor, ask, decide, callId, readFrom}) -> ToolCaller (interpreter.run's
 *        `onToolCall`); readFrom: the sources (`mcp:<server id>`) whose results this notebook's code has received, which
 *        grows with each result: as in the loop, a call of another server's open-world tool then asks although
 *        allowed, saying why (data read from one server could leave through another)
 *        ask(approvalEvent) -> Promise<Decision>     the question on the python call's card (answered "deny" if
 *                                                    the run ends first, so the core does not wait for ever)
 *        decide(callId, decision, approvalEvent)     sends the answer (and keeps "Always allow", as a card does)
 */

/**
 * @typedef {import("../sandbox/interpreter.js").ToolCaller} ToolCaller
 * @typedef {import("../sandbox/interpreter.js").ToolAnswer} ToolAnswer
 * @typedef {import("../sandbox/code_mode.js").Entry} Entry
 * @typedef {import("../types/contract").ApprovalEvent} ApprovalEvent
 * @typedef {import("../mcp_app/view.js").Decision} Decision
 * @typedef {import("../mcp_app/view.js").ServerChoices} ServerChoices
 */

/**
 * @param {{core: Pick<import("../client/orizuru.js").Agent, "call">, catalog: Entry[],
 *          choicesFor: (serverId: string) => ServerChoices, ask: (ev: ApprovalEvent) => Promise<Decision>,
 *          decide: (callId: string, decision: Decision, ev: ApprovalEvent) => unknown, callId: string,
 *          readFrom: Set<string>}} options
 * @returns {ToolCaller}
 */
export function codeCaller({ core, catalog, choicesFor, ask, decide, callId, readFrom }) {
  let calls = 0;
  return async ({ server, tool, arguments: args }) => {
    const entry = catalog.find((e) => e.ref.server === server && e.ref.tool === tool);
    if (!entry) return { error: `${tool} of ${server} is not one of the tools this code may call` };
    const { policy, trusted } = choicesFor(server);
    calls += 1;
    try {
      const { result } = await core.call("mcp.code_call_tool",
        { id: server, name: tool, arguments: args, policy, trusted, call_id: `${callId}:code-${calls}`,
          read_from: [...readFrom] },
        (ev) => {
          if (ev.type === "approval") ask(ev).then((decision) => decide(ev.call_id, decision, ev));
        });
      readFrom.add(`mcp:${server}`); // what it returned is in the notebook now
      return { result };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const code = typeof err === "object" && err !== null && "code" in err ? String(err.code) : "";
      return code === "tool_refused" ? { denied: message } : { error: message };
    }
  };
}
