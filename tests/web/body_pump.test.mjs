// web/body_pump.js: the core's streamed body reaches Python gathered, never changed, and a failure keeps what
// arrived before it.
import assert from "node:assert/strict";
import { test } from "node:test";

import { coalesce } from "../../web/body_pump.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A body whose chunks the test pushes by hand. */
function pushedBody() {
  /** @type {ReadableStreamDefaultController<Uint8Array>} */
  let controller;
  const body = new ReadableStream({ start: (c) => { controller = c; } });
  return {
    body,
    push: (/** @type {string} */ text) => controller.enqueue(encoder.encode(text)),
    end: () => controller.close(),
    fail: (/** @type {Error} */ err) => controller.error(err),
  };
}

/** @param {{ next(): Promise<{ done: boolean, value?: Uint8Array }> }} reader */
async function readAll(reader) {
  const reads = [];
  for (;;) {
    const { done, value } = await reader.next();
    if (done) return reads;
    reads.push(decoder.decode(value));
  }
}

test("what arrived while Python was busy comes in one read, in order", async () => {
  const { body, push, end } = pushedBody();
  const reader = coalesce(body, 0);
  push("data: {\"a\":");
  push("1}\n\n");
  push("data: [DONE]\n\n");
  await tick(); // the pump has read all three
  assert.deepEqual(await readAll((end(), reader)), ["data: {\"a\":1}\n\ndata: [DONE]\n\n"]);
});

test("the first chunk after a quiet spell goes at once; what follows within a frame's time is gathered", async () => {
  const { body, push, end } = pushedBody();
  const reader = coalesce(body, 200);
  const first = reader.next();
  push("a");
  const quick = await Promise.race([first, new Promise((resolve) => setTimeout(() => resolve("held back"), 150))]);
  assert.notEqual(quick, "held back");
  assert.equal(decoder.decode(/** @type {{ value: Uint8Array }} */ (quick).value), "a");
  const next = reader.next(); // Python waits again, within the frame's time of its last wake
  push("b");
  await tick();
  push("c");
  await tick();
  assert.equal(decoder.decode((await next).value), "bc");
  end();
  assert.deepEqual(await reader.next(), { done: true });
});

test("the pump never changes the bytes, however they are cut and whenever Python asks", async () => {
  const text = "data: {\"choices\":[{\"delta\":{\"content\":\"Ünïcødé ✓ 日本語\"}}]}\n\n".repeat(40);
  const all = encoder.encode(text);
  for (const size of [1, 2, 3, 7, 64, all.length]) {
    const body = new ReadableStream({
      start(controller) {
        for (let at = 0; at < all.length; at += size) controller.enqueue(all.slice(at, at + size));
        controller.close();
      },
    });
    const reader = coalesce(body, 1);
    const got = [];
    for (;;) {
      const { done, value } = await reader.next();
      if (done) break;
      got.push(value);
      if (got.length % 3 === 0) await tick(); // Python busy now and then
    }
    assert.equal(Buffer.concat(got).toString("utf8"), text, `chunks of ${size}`);
  }
});

test("a body that fails hands over what arrived first, then the failure", async () => {
  const { body, push, fail } = pushedBody();
  const reader = coalesce(body, 0);
  push("kept ");
  push("so far");
  await tick();
  fail(new Error("connection reset"));
  await tick();
  assert.equal(decoder.decode((await reader.next()).value), "kept so far");
  await assert.rejects(reader.next(), /connection reset/);
});

test("a failure while Python waits reaches it", async () => {
  const { body, fail } = pushedBody();
  const reader = coalesce(body, 0);
  const waiting = reader.next();
  fail(new Error("aborted"));
  await assert.rejects(waiting, /aborted/);
});

test("an empty body ends at once", async () => {
  const { body, end } = pushedBody();
  const reader = coalesce(body);
  end();
  assert.deepEqual(await reader.next(), { done: true });
});
