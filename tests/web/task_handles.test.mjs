// A task's handle (web/app/task_resume.js) stays in the browser that started the task: the store's records for sync
// leave it out, so no other device goes on with the same turn a second time. The store over a stand-in database.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Store } from "../../web/store/transcripts.js";

const HANDLE = { server_id: "url:http://127.0.0.1:1/mcp", task_id: "t1", call_id: "call_render", name: "render",
                 tool: "render", created: 1 };

function storeWith(records) {
  const db = { close() {},
               transaction: () => ({ objectStore: (name) => ({ getAll: async () => records[name] }), done: Promise.resolve() }) };
  return new Store(db, { name: `task-handles-${Math.random()}` });
}

test("sync gets a step's message without the handles of its tasks; the store keeps them", async () => {
  const step = { id: "m2", conversation_id: "c1", parent_id: "m1", role: "assistant", status: "complete", created: 2,
                 parts: [{ type: "tool_call", id: "call_render", name: "render", arguments: {} }],
                 tasks: { call_render: HANDLE } };
  const store = storeWith({ conversations: [{ id: "c1" }], messages: [step] });
  try {
    const { messages } = await store.syncRecords();
    const { tasks: _kept, ...synced } = step;
    assert.deepEqual(messages, [synced]);
    assert.deepEqual(step.tasks, { call_render: HANDLE });
  } finally {
    store.close();
  }
});
