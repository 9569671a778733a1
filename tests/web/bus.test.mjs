// The page's event bus (web/app/bus.js), in Node.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Bus, BUS_EVENTS } from "../../web/app/bus.js";

test("every listener of an event hears it, in the order they listened, until it stops", () => {
  const bus = new Bus();
  const heard = [];
  const off = bus.on("running", (value) => heard.push(["a", value]));
  bus.on("running", (value) => heard.push(["b", value]));
  bus.emit("running", true);
  off();
  bus.emit("running", false);
  assert.deepEqual(heard, [["a", true], ["b", true], ["b", false]]);
});

test("a listener that throws does not keep the others from hearing", (t) => {
  const bus = new Bus();
  const heard = [];
  t.mock.method(console, "error", () => {});
  bus.on("profile", () => { throw new Error("broken part"); });
  bus.on("profile", (profile) => heard.push(profile));
  bus.emit("profile", { id: "p1" });
  assert.deepEqual(heard, [{ id: "p1" }]);
  assert.equal(console.error.mock.callCount(), 1);
});

test("an event nobody declared is a mistake, said at once", () => {
  const bus = new Bus();
  assert.throws(() => bus.on("conversaton", () => {}), /no event named "conversaton"/);
  assert.throws(() => bus.emit("nope"), /known: conversation, running/);
  assert.ok(BUS_EVENTS.includes("suggest"));
});
