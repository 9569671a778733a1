// Sync's engine (web/sync/engine.js) and sealing (web/sync/crypto.js), in Node: two devices and a folder.
// The folder is a map with compare-and-swap, as the SyncTarget interface asks (the real WebDAV server is
// in tests/e2e/test_journeys_sync.py); each device is a store with the same merge rules as store/transcripts.js.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SyncConflictError } from "../../web/sync/target.js";
import { isNewer, openFolder, SyncPassphraseError, syncOnce } from "../../web/sync/engine.js";
import { SyncTamperedError } from "../../web/sync/crypto.js";
import { eraseRecords, syncRecords } from "../../web/sync/records.js";
import { linkOf, openShared, parseLink, sealShared, SharedLinkError } from "../../web/sync/shared.js";

class Folder {
  files = new Map(); // name -> {bytes, etag}
  version = 0;
  writes = 0;
  race = null; // (name) => void: runs just before a write lands, to stage another device's write

  async list() {
    return [...this.files].map(([name, f]) => ({ name, etag: f.etag }));
  }

  async read(name) {
    return this.files.get(name) ?? null;
  }

  async write(name, bytes, ifMatch) {
    const race = this.race;
    this.race = null;
    race?.(name);
    const current = this.files.get(name);
    if (ifMatch === null ? current : current?.etag !== ifMatch) throw new SyncConflictError(name);
    this.writes += 1;
    const etag = `"${++this.version}"`;
    this.files.set(name, { bytes: new Uint8Array(bytes), etag });
    return etag;
  }
}

class Device {
  conversations = new Map();
  messages = new Map();
  state = { seen: {}, sent: {} };
  blobs = { files: new Map(), read: async (ref) => this.blobs.files.get(ref) ?? null,
            write: async (ref, bytes) => void this.blobs.files.set(ref, bytes) };

  async syncRecords() {
    return { conversations: [...this.conversations.values()], messages: [...this.messages.values()] };
  }

  async applySyncedConversation(c, newer) {
    const ours = this.conversations.get(c.id);
    if (ours && !newer(c, ours)) return false;
    this.conversations.set(c.id, c);
    return true;
  }

  async applySyncedMessages(list) {
    let added = 0;
    for (const m of list) {
      if (!this.conversations.has(m.conversation_id) || this.messages.has(m.id)) continue;
      this.messages.set(m.id, m);
      added += 1;
    }
    return added;
  }

  blobRefsOf(m) {
    return (m.parts ?? []).map((p) => p.blob).filter(Boolean);
  }

  say(conversation, id, text, at, parent = null) {
    this.messages.set(id, { id, conversation_id: conversation, parent_id: parent, role: "user",
      parts: [{ type: "text", text }], status: "complete", created: at });
    const c = this.conversations.get(conversation);
    this.conversations.set(conversation, { ...c, current_leaf: id, updated: at });
  }
}

const PASS = "correct horse battery staple";
const sync = async (device, folder, keys) => syncOnce({ store: device, target: folder, keys, state: device.state });

test("two devices that wrote to one conversation offline both keep what they wrote, as branches", async () => {
  const folder = new Folder();
  const [a, b] = [new Device(), new Device()];
  const keys = await openFolder(folder, PASS);
  a.conversations.set("c1", { id: "c1", title: "Trip", created: 1, updated: 1, current_leaf: null });
  a.say("c1", "m1", "where to?", 2);
  await sync(a, folder, keys);
  await sync(b, folder, await openFolder(folder, PASS));
  assert.deepEqual([...b.messages.keys()], ["m1"]);
  a.say("c1", "ma", "from A, offline", 10, "m1");
  b.say("c1", "mb", "from B, offline", 11, "m1");
  await sync(a, folder, keys);
  await sync(b, folder, keys);
  await sync(a, folder, keys);
  for (const device of [a, b]) {
    assert.deepEqual([...device.messages.keys()].sort(), ["m1", "ma", "mb"]);
    assert.equal(device.messages.get("ma").parent_id, device.messages.get("mb").parent_id, "siblings");
    assert.equal(device.conversations.get("c1").current_leaf, "mb", "the later record names the leaf");
  }
});

test("renames and deletes converge: the later change wins on every device, whatever the order", async () => {
  const folder = new Folder();
  const [a, b] = [new Device(), new Device()];
  const keys = await openFolder(folder, PASS);
  a.conversations.set("c1", { id: "c1", title: "Old", created: 1, updated: 1, current_leaf: null });
  await sync(a, folder, keys);
  await sync(b, folder, keys);
  b.conversations.set("c1", { ...b.conversations.get("c1"), title: "Renamed on B", changed: 20 });
  a.conversations.set("c1", { ...a.conversations.get("c1"), deleted_at: 30, changed: 30 });
  await sync(b, folder, keys);
  await sync(a, folder, keys); // A has B's rename now, and its own newer delete wins
  await sync(b, folder, keys);
  assert.equal(a.conversations.get("c1").deleted_at, 30);
  assert.deepEqual(b.conversations.get("c1"), a.conversations.get("c1"));
});

test("a write that loses a race reads the other device's record and keeps the newer one", async () => {
  const folder = new Folder();
  const a = new Device();
  const keys = await openFolder(folder, PASS);
  a.conversations.set("c1", { id: "c1", title: "A", created: 1, updated: 1, changed: 5 });
  await sync(a, folder, keys);
  a.conversations.set("c1", { ...a.conversations.get("c1"), title: "A again", changed: 6 });
  const name = [...folder.files.keys()].find((n) => n.startsWith("c-"));
  const later = { id: "c1", title: "Other device, later", created: 1, updated: 1, changed: 9 };
  const laterBytes = await keys.sealRecord(name, later);
  folder.race = () => folder.files.set(name, { bytes: laterBytes, etag: '"raced"' });
  await sync(a, folder, keys);
  assert.equal(a.conversations.get("c1").title, "Other device, later");
  assert.deepEqual(await keys.openRecord(name, folder.files.get(name).bytes), later, "theirs was not overwritten");
  a.conversations.set("c1", { ...later, title: "A, latest", changed: 12 });
  folder.race = () => folder.files.set(name, { bytes: laterBytes, etag: '"raced again"' });
  await sync(a, folder, keys);
  assert.equal((await keys.openRecord(name, folder.files.get(name).bytes)).title, "A, latest", "ours, newer, retried");
});

test("a wrong passphrase is refused and writes nothing; the folder holds no plaintext", async () => {
  const folder = new Folder();
  const a = new Device();
  const keys = await openFolder(folder, PASS);
  a.conversations.set("c1", { id: "c1", title: "MARKER-7f3a title", created: 1, updated: 1 });
  a.say("c1", "m1", "MARKER-7f3a secret words", 2);
  await sync(a, folder, keys);
  const writes = folder.writes;
  await assert.rejects(openFolder(folder, "not the passphrase"), SyncPassphraseError);
  assert.equal(folder.writes, writes);
  for (const [name, { bytes }] of folder.files) {
    assert.match(name, /^(?:header\.json|[cmb]-[0-9a-f]{64})$/, "a name says nothing but its kind");
    if (name !== "header.json") assert.ok(!Buffer.from(bytes).toString("latin1").includes("MARKER"), name);
  }
});

test("a changed byte, or a record moved under another's name, does not open", async () => {
  const folder = new Folder();
  const a = new Device();
  const keys = await openFolder(folder, PASS);
  a.conversations.set("c1", { id: "c1", title: "one", created: 1, updated: 1 });
  a.conversations.set("c2", { id: "c2", title: "two", created: 1, updated: 1 });
  await sync(a, folder, keys);
  const [n1, n2] = [...folder.files.keys()].filter((n) => n.startsWith("c-"));
  const moved = folder.files.get(n1);
  folder.files.set(n2, { bytes: moved.bytes, etag: '"moved"' });
  await assert.rejects(sync(new Device(), folder, keys), SyncTamperedError);
  const flipped = new Uint8Array(moved.bytes);
  flipped[20] ^= 1;
  folder.files.set(n2, { bytes: flipped, etag: '"flipped"' });
  await assert.rejects(sync(new Device(), folder, keys), SyncTamperedError);
});

test("an older record replayed by the server does not undo a newer one", async () => {
  const folder = new Folder();
  const a = new Device();
  const keys = await openFolder(folder, PASS);
  a.conversations.set("c1", { id: "c1", title: "first", created: 1, updated: 1, changed: 1 });
  await sync(a, folder, keys);
  const name = [...folder.files.keys()].find((n) => n.startsWith("c-"));
  const old = folder.files.get(name);
  a.conversations.set("c1", { ...a.conversations.get("c1"), title: "second", changed: 2 });
  await sync(a, folder, keys);
  folder.files.set(name, { bytes: old.bytes, etag: '"replayed"' });
  await sync(a, folder, keys);
  assert.equal(a.conversations.get("c1").title, "second");
});

test("files the server adds under names sync does not write are never read", async () => {
  const folder = new Folder();
  const keys = await openFolder(folder, PASS);
  folder.files.set("../../etc/passwd", { bytes: new Uint8Array([1]), etag: '"x"' });
  folder.files.set("<img src=x onerror=alert(1)>", { bytes: new Uint8Array([1]), etag: '"y"' });
  const b = new Device();
  assert.deepEqual(await sync(b, folder, keys), { downloaded: 0, uploaded: 0, settings: { downloaded: 0, uploaded: 0 } });
});

test("an attachment goes once, by its hash, however many messages carry it", async () => {
  const folder = new Folder();
  const [a, b] = [new Device(), new Device()];
  const keys = await openFolder(folder, PASS);
  a.blobs.files.set("sha256-ab", new Uint8Array([1, 2, 3]));
  a.conversations.set("c1", { id: "c1", title: "pics", created: 1, updated: 1 });
  for (const id of ["m1", "m2"]) {
    a.messages.set(id, { id, conversation_id: "c1", parent_id: null, role: "user", status: "complete",
      parts: [{ type: "image", blob: "sha256-ab", mime_type: "image/png" }] });
  }
  await sync(a, folder, keys);
  assert.equal([...folder.files.keys()].filter((n) => n.startsWith("b-")).length, 1);
  await sync(b, folder, keys);
  assert.deepEqual(b.blobs.files.get("sha256-ab"), new Uint8Array([1, 2, 3]));
});

test("the newer record wins, and a tie is decided the same way on both sides", () => {
  const x = { id: "c", title: "x", changed: 5 };
  const y = { id: "c", title: "y", changed: 5 };
  assert.equal(isNewer({ ...x, changed: 6 }, y), true);
  assert.notEqual(isNewer(x, y), isNewer(y, x));
});

test("a folder that goes away mid-sync loses nothing: the next sync resumes and writes nothing twice", async () => {
  const folder = new Folder();
  const a = new Device();
  const keys = await openFolder(folder, PASS);
  for (let i = 0; i < 5; i += 1) {
    a.conversations.set(`c${i}`, { id: `c${i}`, title: `t${i}`, created: 1, updated: 1 });
    a.say(`c${i}`, `m${i}`, `words ${i}`, 2);
  }
  const write = folder.write.bind(folder);
  let allowed = 4;
  folder.write = async (...args) => {
    if (allowed-- <= 0) throw new Error("connection reset");
    return write(...args);
  };
  await assert.rejects(sync(a, folder, keys), /connection reset/);
  const landed = folder.writes;
  assert.ok(landed > 0 && landed < 10);
  folder.write = write;
  await sync(a, folder, keys);
  assert.equal(folder.writes, 1 + 10, "the header, then each record once");
  const b = new Device();
  await sync(b, folder, keys);
  assert.equal(b.messages.size, 5);
});

// Small records that change in place (web/sync/records.js: settings, assistants, prompts, MCP entries, keys).
class Settings {
  records = new Map();
  state = { seen: {}, sent: {}, ledger: {} };
  constructor(kind = "s", { tombstones = true, everyTime = false } = {}) {
    this.source = { kind, tombstones, everyTime, records: async () => new Map(this.records),
      apply: async (id, value) => (value === null ? this.records.delete(id) : this.records.set(id, value), value ?? undefined) };
  }
}
const syncSettings = async (device, folder, keys) => syncRecords({ source: device.source, target: folder, keys,
  state: device.state, remote: new Map((await folder.list()).map((e) => [e.name, e.etag])) });

test("a setting changed on two devices: the later change wins on both, and a delete reaches the other", async () => {
  const folder = new Folder();
  const [a, b] = [new Settings(), new Settings()];
  const keys = await openFolder(folder, PASS);
  a.records.set("prompt:p1", { name: "standup", text: "v1", updated: 100 });
  a.records.set("prompt:p2", { name: "retro", text: "well?", updated: 100 });
  await syncSettings(a, folder, keys);
  await syncSettings(b, folder, keys);
  assert.deepEqual(b.records.get("prompt:p1"), { name: "standup", text: "v1", updated: 100 });
  b.records.set("prompt:p1", { name: "standup", text: "from b", updated: 300 });
  a.records.set("prompt:p1", { name: "standup", text: "from a", updated: 200 }); // earlier, synced later
  a.records.delete("prompt:p2");
  await syncSettings(b, folder, keys);
  await syncSettings(a, folder, keys);
  await syncSettings(b, folder, keys);
  for (const device of [a, b]) {
    assert.equal(device.records.get("prompt:p1").text, "from b");
    assert.equal(device.records.has("prompt:p2"), false);
  }
  const writes = folder.writes;
  await syncSettings(a, folder, keys);
  await syncSettings(b, folder, keys);
  assert.equal(folder.writes, writes, "settled: nothing goes back and forth");
});

test("T-Y2 for settings: an older record replayed by the server loses to what this device has", async () => {
  const folder = new Folder();
  const a = new Settings();
  const keys = await openFolder(folder, PASS);
  a.records.set("pref:theme", "dark");
  await syncSettings(a, folder, keys);
  const name = [...folder.files.keys()].find((n) => n.startsWith("s-"));
  const old = folder.files.get(name);
  a.records.set("pref:theme", "light");
  await syncSettings(a, folder, keys);
  folder.files.set(name, { bytes: old.bytes, etag: '"replayed"' });
  await syncSettings(a, folder, keys);
  assert.equal(a.records.get("pref:theme"), "light");
});

test("T-Y1 for settings: a record moved under another's name does not open, and nothing is applied", async () => {
  const folder = new Folder();
  const [a, b] = [new Settings(), new Settings()];
  const keys = await openFolder(folder, PASS);
  a.records.set("pref:theme", "dark");
  a.records.set("pref:language", "ja");
  await syncSettings(a, folder, keys);
  const [x, y] = [...folder.files.keys()].filter((n) => n.startsWith("s-"));
  folder.files.set(x, { ...folder.files.get(y), etag: '"moved"' });
  await assert.rejects(syncSettings(b, folder, keys), SyncTamperedError);
  assert.equal(b.records.has("pref:theme") && b.records.get("pref:theme") !== "dark", false);
});

test("keys: a tab without the key yet deletes nothing; erased, the folder keeps no key", async () => {
  const folder = new Folder();
  const options = { tombstones: false, everyTime: true };
  const [a, b] = [new Settings("k", options), new Settings("k", options)];
  const keys = await openFolder(folder, PASS);
  a.records.set("profile:1", { key: "sk-secret" });
  await syncSettings(a, folder, keys);
  a.records.clear(); // a reload: this tab's memory is empty
  await syncSettings(a, folder, keys);
  assert.equal(a.records.get("profile:1").key, "sk-secret", "read back from the folder at each sync");
  await syncSettings(b, folder, keys);
  assert.equal(b.records.get("profile:1").key, "sk-secret");
  await eraseRecords({ kind: "k", target: folder, keys, state: a.state });
  for (const [name, file] of folder.files) {
    if (name.startsWith("k-")) assert.equal(JSON.stringify(await keys.openRecord(name, file.bytes)).includes("sk-secret"), false);
  }
});

test("a shared file opens only with its own key, and the link keeps the key in the fragment", async () => {
  const { name, bytes, key } = await sealShared({ title: "plan", messages: [{ role: "user", text: "hi" }] });
  assert.match(name, /^shared-[0-9a-f]{32}$/);
  const link = linkOf("https://site.example/app/?x=1#/c/1", "https://dav.example/s/shared file", key);
  assert.equal(new URL(link).hash.includes(key), true);
  assert.equal(new URL(link).search, "?x=1");
  const parsed = parseLink(new URL(link).hash);
  assert.deepEqual(parsed, { location: "https://dav.example/s/shared file", key });
  assert.equal((await openShared(bytes, key)).messages[0].text, "hi");
  const other = (await sealShared({ title: "x", messages: [] })).key;
  await assert.rejects(openShared(bytes, other), SharedLinkError);
  const changed = bytes.slice();
  changed[20] ^= 1;
  await assert.rejects(openShared(changed, key), SharedLinkError);
  assert.equal(parseLink(`#/shared/x&k=${key.slice(1)}`), null, "a cut key is no link");
});
