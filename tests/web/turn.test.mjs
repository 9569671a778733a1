// The turn state machine (web/app/turn.js), every transition, in Node: no browser, no DOM.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Turn, TURN_ENDS } from "../../web/app/turn.js";

function recorded() {
  const seen = [];
  const turn = new Turn({ onChange: (state, previous) => seen.push(`${previous}>${state}`) });
  return { turn, seen };
}

test("a turn goes idle, sending, streaming, awaiting, streaming, done, idle and announces each step", () => {
  const { turn, seen } = recorded();
  assert.equal(turn.busy, false);
  const begun = turn.begin();
  assert.equal(begun.ok, true);
  assert.equal(turn.run, begun.run);
  turn.stored();
  turn.awaiting();
  turn.streaming();
  turn.end("done");
  assert.equal(turn.busy, true, "a finished turn is busy until the transcript is in order");
  turn.settle();
  assert.deepEqual(seen, ["idle>sending", "sending>streaming", "streaming>awaiting", "awaiting>streaming",
                          "streaming>done", "done>idle"]);
  assert.equal(turn.run, null);
});

test("a second turn is refused with a reason in every state but idle, never silently", () => {
  const { turn } = recorded();
  turn.begin();
  for (const step of [() => {}, () => turn.stored(), () => turn.awaiting(), () => turn.end("done")]) {
    step();
    assert.deepEqual(turn.begin(), { ok: false, reason: "busy" }, `in ${turn.state}`);
  }
  turn.settle();
  assert.equal(turn.begin().ok, true);
});

test("a message that could not be stored returns the turn to idle with the reason kept", () => {
  const { turn, seen } = recorded();
  turn.begin();
  turn.refuse("storage is closed");
  assert.equal(turn.state, "idle");
  assert.equal(turn.reason, "storage is closed");
  assert.equal(turn.run, null);
  assert.deepEqual(seen, ["idle>sending", "sending>idle"]);
  assert.equal(turn.begin().ok, true, "the person can send again at once");
  assert.equal(turn.reason, null);
});

test("Stop and failure end a turn from streaming or from a question", () => {
  for (const [before, status] of [["streaming", "stopped"], ["awaiting", "stopped"], ["streaming", "failed"],
                                  ["awaiting", "failed"], ["awaiting", "done"]]) {
    const { turn, seen } = recorded();
    turn.begin();
    turn.stored();
    if (before === "awaiting") turn.awaiting();
    turn.end(status);
    assert.equal(seen.at(-1), `${before}>${status}`);
    turn.settle();
    assert.equal(turn.state, "idle");
  }
});

test("settled() waits for the transcript to be in order, and is immediate while idle or running", async () => {
  const { turn } = recorded();
  let resolved = false;
  await turn.settled(); // idle: at once
  turn.begin();
  turn.stored();
  await turn.settled(); // running: nothing to wait for (the caller is refused instead)
  turn.end("done");
  const waiting = turn.settled().then(() => (resolved = true));
  await Promise.resolve();
  assert.equal(resolved, false);
  turn.settle();
  await waiting;
  assert.equal(resolved, true);
});

test("a refused turn also releases whoever waits to settle", async () => {
  const { turn } = recorded();
  turn.begin();
  turn.refuse(null);
  await turn.settled();
  assert.equal(turn.state, "idle");
});

test("impossible moves throw at once instead of leaving the page in a state it cannot leave", () => {
  const { turn } = recorded();
  assert.throws(() => turn.stored(), /idle cannot become streaming/);
  assert.throws(() => turn.end("done"), /idle cannot become done/);
  assert.throws(() => turn.settle(), /idle cannot become idle/);
  turn.begin();
  assert.throws(() => turn.end("done"), /sending cannot become done/);
  assert.throws(() => turn.end("exploded"), /unknown end/);
  turn.stored();
  assert.throws(() => turn.stored(), /streaming cannot become streaming/);
  assert.deepEqual(TURN_ENDS, ["done", "stopped", "failed"]);
});

test("awaiting and streaming are no-ops outside a running turn (a late event after Stop)", () => {
  const { turn, seen } = recorded();
  turn.awaiting();
  turn.streaming();
  turn.begin();
  turn.stored();
  turn.end("stopped");
  turn.awaiting();
  turn.streaming();
  assert.deepEqual(seen, ["idle>sending", "sending>streaming", "streaming>stopped"]);
});
