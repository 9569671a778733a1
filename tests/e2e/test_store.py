"""web/store in real Chromium: real IndexedDB, Web Locks and BroadcastChannel, on a real on-disk profile
where a reload, a closed tab or a killed browser is involved (SECURITY.md T-S1..T-S5)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import CHROMIUM, CHROMIUM_ARGS
from harness import HarnessSite
from playwright.sync_api import Browser, BrowserContext, Page, Playwright

pytestmark = pytest.mark.e2e

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def store_site(tmp_path_factory: pytest.TempPathFactory):
    site = HarnessSite(tmp_path_factory.mktemp("store"))
    site.add_page("store", entry=HERE / "store_harness" / "entry.js")
    url = site.start()
    yield url + "store.html"
    site.stop()


def open_page(context: BrowserContext, url: str) -> Page:
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("body[data-ready=yes]", state="attached")
    return page


def js(page: Page, body: str, arg=None):
    """Run ``body`` as an async function of (s = window.storeModule, store = window.store, arg).
    Built here as source text: the page's CSP forbids eval, so the page cannot compile it itself."""
    return page.evaluate(
        f"async (arg) => {{ const s = window.storeModule; const store = window.store;\n{body}\n}}", arg)


def open_store(page: Page, name: str = "t") -> None:
    js(page, "window.store = await window.openTestStore(arg);", name)


def stored_records(page: Page, store_name: str):
    return js(page, "return store.db.getAll(arg);", store_name)


# ------------------------------------------------------------ writing a conversation


def test_user_message_is_stored_before_the_reply_and_each_delta_is_its_own_record(browser: Browser, store_site: str):
    page = open_page(browser.new_context(), store_site)
    open_store(page)
    result = js(page, """
        const c = await store.createConversation({title: "first"});
        const user = await store.addMessage(c.id, {role: "user", parts: [{type: "text", text: "hello"}]});
        const onDisk = await store.db.get("messages", user.id);   // before any request goes out
        const w = await store.beginReply(c.id, {vendor: "openai", model: "gpt"});
        const counts = [];
        for (const t of ["Hel", "lo ", "there"]) {
          await w.append({type: "text_delta", index: 0, text: t});
          counts.push(await store.db.countFromIndex("deltas", "by_message", w.id));
        }
        const whole = (await store.db.get("messages", w.id)).parts;   // never rewritten per token
        const done = await w.finish({usage: {input_tokens: 3, output_tokens: 3}});
        const after = await store.db.countFromIndex("deltas", "by_message", w.id);
        return {onDisk, counts, whole, done, after, stored: await store.db.get("messages", w.id), user};
    """)
    assert result["onDisk"]["parts"] == [{"type": "text", "text": "hello"}]
    assert result["counts"] == [1, 2, 3]
    assert result["whole"] == []
    assert result["after"] == 0  # compacted on finish
    assert result["stored"]["status"] == "complete"
    assert result["stored"]["parts"] == [{"type": "text", "text": "Hello there"}]
    assert result["stored"]["parent_id"] == result["user"]["id"]
    assert result["stored"]["usage"] == {"input_tokens": 3, "output_tokens": 3}
    page.context.close()


def test_a_fast_stream_keeps_every_delta_in_order(browser: Browser, store_site: str):
    page = open_page(browser.new_context(), store_site)
    open_store(page)
    result = js(page, """
        const c = await store.createConversation();
        const w = await store.beginReply(c.id, {});
        const acks = [];
        for (let i = 0; i < 500; i++) acks.push(w.append({type: "text_delta", index: 0, text: `${i},`}));
        const saved = await Promise.all(acks);
        const records = await store.db.getAllFromIndex("deltas", "by_message", w.id);
        return {saved: saved.every(Boolean), texts: records.map(r => r.event.text)};
    """)
    assert result["saved"]
    assert result["texts"] == [f"{i}," for i in range(500)]
    page.context.close()


def test_branches_are_siblings_and_the_conversation_remembers_its_leaf(browser: Browser, store_site: str):
    page = open_page(browser.new_context(), store_site)
    open_store(page)
    result = js(page, """
        const c = await store.createConversation();
        const q = await store.addMessage(c.id, {role: "user", parts: [{type: "text", text: "q"}]});
        const a1 = await store.addMessage(c.id, {role: "assistant", parts: [{type: "text", text: "a1"}]});
        const w = await store.beginReply(c.id, {parent_id: q.id});          // Regenerate
        await w.append({type: "text_delta", index: 0, text: "a2"});
        const a2 = await w.finish();
        const edited = await store.addMessage(c.id, {parent_id: null, role: "user",
                                                     parts: [{type: "text", text: "q'"}]});
        let loaded = await store.loadConversation(c.id);
        const tree = new s.ConversationTree(loaded.messages);
        const sib = tree.siblings(a2);
        const path = s.branchPath(loaded.messages, loaded.conversation.current_leaf).map(m => m.parts[0].text);
        tree.choose(q);  // back to the first question: below it, the newest reply
        await store.setCurrentLeaf(c.id, tree.last().id);
        loaded = await store.loadConversation(c.id);
        const path2 = s.branchPath(loaded.messages, loaded.conversation.current_leaf).map(m => m.parts[0].text);
        return {sib, path, path2, shown: tree.path().map(m => m.parts[0].text), roots: tree.siblings(q).count};
    """)
    assert result["sib"] == {"index": 2, "count": 2}  # a2 is the second of a1, a2
    assert result["shown"] == ["q", "a2"] and result["roots"] == 2
    assert result["path"] == ["q'"]
    assert result["path2"] == ["q", "a2"]
    assert result["roots"] == 2
    page.context.close()


def test_delete_with_undo_rename_focus_and_search(browser: Browser, store_site: str):
    page = open_page(browser.new_context(), store_site)
    open_store(page)
    result = js(page, """
        const a = await store.createConversation({title: "Travel plans"});
        const b = await store.createConversation({title: "Other"});
        await store.addMessage(a.id, {role: "user", parts: [{type: "text", text: "Book a flight to Kyoto in April"}]});
        await store.addMessage(b.id, {role: "assistant", parts: [
          {type: "tool_result", call_id: "c", content: [{type: "text", text: "kyoto weather: sunny"}]},
        ]});
        await store.renameConversation(b.id, "Weather");
        await store.setFocus(a.id, {pinned: ["Kyoto"], v: 1});
        const hits = (await store.search("KYOTO")).map(h => [h.title, h.snippet]);
        const token = await store.deleteConversation(a.id);
        const afterDelete = (await store.listConversations()).map(c => c.title);
        const hitsAfterDelete = (await store.search("kyoto")).length;
        await store.undoDelete(token);
        const afterUndo = (await store.listConversations()).map(c => c.title).sort();
        const focus = (await store.loadConversation(a.id)).focus;
        const second = await store.deleteConversation(b.id);
        const purged = await store.purgeDeleted(0);
        return {hits, afterDelete, hitsAfterDelete, afterUndo, focus, purged,
                left: (await store.db.getAll("messages")).length, gone: await store.loadConversation(b.id)};
    """)
    assert sorted(result["hits"]) == [["Travel plans", "Book a flight to Kyoto in April"],
                                      ["Weather", "kyoto weather: sunny"]]
    assert result["afterDelete"] == ["Weather"]
    assert result["hitsAfterDelete"] == 1
    assert result["afterUndo"] == ["Travel plans", "Weather"]
    assert result["focus"] == {"pinned": ["Kyoto"], "v": 1}
    assert result["purged"] == 1 and result["left"] == 1 and result["gone"] is None
    page.context.close()


# ------------------------------------------------------------ search (its index: web/store/search.js)


FOUND = "return (await store.search(arg)).filter(h => h.message_id).map(h => [h.title, h.snippet]);"


def test_search_keeps_up_with_every_write_after_its_first_read(browser: Browser, store_site: str):
    page = open_page(browser.new_context(), store_site)
    open_store(page)
    result = js(page, """
        const found = async (word) => (await store.search(word)).filter(h => h.message_id).map(h => h.snippet);
        const c = await store.createConversation({title: "Birds"});
        const q = await store.addMessage(c.id, {role: "user", parts: [{type: "text", text: "Where is the Heron?"}]});
        const out = {first: await found("heron")};          // the index is read here
        await store.addMessage(c.id, {parent_id: null, role: "user",          // an edit: a sibling
                                      parts: [{type: "text", text: "Where is the Egret?"}]});
        out.edited = await found("EGRET");
        const w = await store.beginReply(c.id, {parent_id: q.id});
        await w.append({type: "text_delta", index: 0, text: "By the pond"});
        out.streaming = await found("pond");                 // this tab's reply, before it is stored
        await w.finish();
        out.finished = await found("pond");
        const token = await store.deleteConversation(c.id);
        out.deleted = await found("egret");
        await store.undoDelete(token);
        out.undone = await found("egret");
        const other = await window.openTestStore("elsewhere");
        const d = await other.createConversation({title: "Shore"});
        await other.addMessage(d.id, {role: "user", parts: [{type: "text", text: "A kingfisher dived"}]});
        await store.importJSON(await (await other.exportAll("json")).text());
        out.imported = await found("kingfisher");
        out.order = (await store.search("e")).map(h => h.snippet);
        await store.deleteConversation(c.id);
        await store.purgeDeleted(0);
        out.purged = [await found("heron"), await found("pond")];
        return out;
    """)
    assert result["first"] == ["Where is the Heron?"]
    assert result["edited"] == ["Where is the Egret?"]
    assert result["streaming"] == ["By the pond"] and result["finished"] == ["By the pond"]
    assert result["deleted"] == [] and result["undone"] == ["Where is the Egret?"]
    assert result["imported"] == ["A kingfisher dived"]
    assert result["purged"] == [[], []]
    # Titles first, then the newest conversation first, each one's messages in the order they were written.
    assert result["order"] == ["Shore", "A kingfisher dived", "Where is the Heron?", "Where is the Egret?",
                               "By the pond"]
    page.context.close()


@pytest.mark.parametrize("repairer", ["this tab", "another tab"])
def test_a_reply_found_interrupted_after_the_index_was_read_is_searchable(
    browser: Browser, store_site: str, repairer: str
):
    """Marking a reply interrupted leaves the conversation's `updated` alone: the index hears of it
    from the write itself, or from another tab over the channel."""
    context = browser.new_context()
    writer, searcher = open_page(context, store_site), open_page(context, store_site)
    open_store(writer)
    open_store(searcher)
    ids = start_stream(writer, ["the osprey ", "came back"])
    assert js(searcher, FOUND, "osprey") == []  # its text is still in deltas, which search does not read
    writer.close()
    repairing = searcher
    if repairer == "another tab":
        repairing = open_page(context, store_site)
        open_store(repairing)
    else:  # the writer's lock gone first, so the repair is this tab's own write (no watcher tells of it)
        js(searcher, """
            while ((await navigator.locks.query()).held.some(l => l.name.endsWith(arg)))
              await new Promise(r => setTimeout(r, 50));
        """, ids["reply"])
    assert wait_interrupted(repairing, ids["conversation"])["messages"][1]["status"] == "interrupted"
    found = js(searcher, """
        for (let i = 0; i < 50; i++) {   // another tab's repair is heard over the channel, soon after
          const hits = await store.search(arg);
          if (hits.length) return hits.map(h => [h.title, h.snippet]);
          await new Promise(r => setTimeout(r, 100));
        }
        return [];
    """, "osprey")
    assert found == [["cut", "the osprey came back"]]
    context.close()


def test_a_database_an_older_build_wrote_is_searchable(browser: Browser, store_site: str):
    page = open_page(browser.new_context(), store_site)
    js(page, """
        const db = await s.openDatabase({name: "old", migrations: s.MIGRATIONS.slice(0, 3)});
        await db.put("conversations", {id: "c1", title: "Old", created: 1, updated: 2, current_leaf: "m2"});
        await db.put("messages", {id: "m1", conversation_id: "c1", parent_id: null, role: "user", created: 1,
                                  status: "complete", parts: [{type: "text", text: "What is a Cormorant?"}]});
        await db.put("messages", {id: "m2", conversation_id: "c1", parent_id: "m1", role: "assistant", created: 2,
                                  status: "complete", parts: [{type: "text", text: "A seabird; cormorants dive."}]});
        db.close();
    """)
    open_store(page, "old")
    assert js(page, FOUND, "cormorant") == [["Old", "What is a Cormorant?"], ["Old", "A seabird; cormorants dive."]]
    page.context.close()


# ------------------------------------------------------------ losing nothing (T-S1)


def start_stream(page: Page, deltas: list[str]) -> dict:
    """A conversation with a user message and a reply that received ``deltas`` and never finished."""
    return js(page, """
        const c = await store.createConversation({title: "cut"});
        const user = await store.addMessage(c.id, {role: "user", parts: [{type: "text", text: "tell me"}]});
        const w = await store.beginReply(c.id, {vendor: "anthropic", model: "claude"});
        for (const t of arg) await w.append({type: "text_delta", index: 0, text: t});
        window.liveWriter = w;   // never finished: the tab goes away mid-stream
        return {conversation: c.id, user: user.id, reply: w.id};
    """, deltas)


def wait_interrupted(page: Page, conversation: str) -> dict:
    """Load the conversation; a writer lock still being released is waited for, as the app would."""
    return js(page, """
        for (let i = 0; i < 100; i++) {
          const data = await store.loadConversation(arg);
          if (data.messages.every(m => m.status !== "streaming")) return data;
          await new Promise(r => setTimeout(r, 100));
        }
        return await store.loadConversation(arg);
    """, conversation)


def assert_cut_reply_kept(data: dict, ids: dict, deltas: list[str]) -> None:
    by_id = {m["id"]: m for m in data["messages"]}
    assert by_id[ids["user"]]["parts"] == [{"type": "text", "text": "tell me"}]
    reply = by_id[ids["reply"]]
    assert reply["status"] == "interrupted"
    assert reply["parts"] == [{"type": "text", "text": "".join(deltas)}]
    assert reply["model"] == "claude"


DELTAS = [f"part {i} · ünïcode ✓ " for i in range(40)]


def test_reload_mid_stream_keeps_every_delta_and_marks_the_reply_interrupted(profile: BrowserContext, store_site: str):
    page = open_page(profile, store_site)
    open_store(page)
    ids = start_stream(page, DELTAS)
    page.reload()
    page.wait_for_selector("body[data-ready=yes]", state="attached")
    open_store(page)
    data = wait_interrupted(page, ids["conversation"])
    assert_cut_reply_kept(data, ids, DELTAS)
    # The repair was written back: the deltas were compacted into the message.
    assert js(page, "return store.db.countFromIndex('deltas', 'by_message', arg);", ids["reply"]) == 0
    assert (js(page, "return store.db.get('messages', arg);", ids["reply"]))["status"] == "interrupted"


def test_a_tab_closed_mid_stream_leaves_an_interrupted_reply(profile: BrowserContext, store_site: str):
    writer = open_page(profile, store_site)
    open_store(writer)
    ids = start_stream(writer, DELTAS[:7])
    reader = open_page(profile, store_site)
    open_store(reader)
    seen = js(reader, "return (await store.loadConversation(arg)).messages.map(m => m.status);", ids["conversation"])
    assert seen == ["complete", "streaming"]  # the writer is alive: not interrupted by mistake
    js(reader, "window.changes = []; store.subscribe(c => window.changes.push(c));")
    writer.close()  # no beforeunload, no cleanup: the tab is just gone
    data = wait_interrupted(reader, ids["conversation"])
    assert_cut_reply_kept(data, ids, DELTAS[:7])
    changes = js(reader, "return window.changes;")
    assert any(c["type"] == "message" and c.get("repaired") for c in changes), changes


def test_a_killed_browser_mid_stream_leaves_an_interrupted_reply(playwright, tmp_path: Path, store_site: str):
    chromium = KillableChromium(playwright, tmp_path / "profile")
    page = open_page(chromium.start(), store_site)
    open_store(page)
    ids = start_stream(page, DELTAS)
    chromium.kill()  # SIGKILL: no unload, no flush, no goodbye
    page = open_page(chromium.start(), store_site)
    open_store(page)
    data = wait_interrupted(page, ids["conversation"])
    assert_cut_reply_kept(data, ids, DELTAS)
    chromium.stop()


class KillableChromium:
    """A Chromium we can SIGKILL: launched by hand on a real profile and driven over CDP, because
    Playwright's own launch only closes browsers politely."""

    def __init__(self, playwright: Playwright, profile_dir: Path) -> None:
        self.playwright = playwright
        self.profile_dir = profile_dir
        self.proc: subprocess.Popen[bytes] | None = None
        self.browser = None

    def start(self) -> BrowserContext:
        log = self.profile_dir.with_suffix(".log")
        self.profile_dir.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [CHROMIUM, *CHROMIUM_ARGS, "--headless=new", f"--user-data-dir={self.profile_dir}",
                 "--remote-debugging-port=0", "about:blank"], stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            match = re.search(rb"DevTools listening on (ws://\S+)", log.read_bytes())
            if match:
                self.browser = self.playwright.chromium.connect_over_cdp(match.group(1).decode())
                return self.browser.contexts[0]
            time.sleep(0.05)
        raise RuntimeError(f"chromium did not start: {log.read_text(errors='replace')[-2000:]}")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.browser = None  # its connection died with the process

    def stop(self) -> None:
        if self.browser is not None:
            self.browser.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


# ------------------------------------------------------------ two tabs (T-S2)


def test_two_tabs_appending_to_one_conversation_lose_and_reorder_nothing(browser: Browser, store_site: str):
    context = browser.new_context()
    a, b = open_page(context, store_site), open_page(context, store_site)
    open_store(a)
    open_store(b)
    conversation = js(a, "return (await store.createConversation({title: 'shared'})).id;")
    js(b, "window.changes = []; store.subscribe(c => window.changes.push(c));")
    for page, tag in ((a, "A"), (b, "B")):
        js(page, """
            window.done = (async () => {
              for (let i = 0; i < 25; i++) {
                await store.addMessage(arg.c, {role: "user", parts: [{type: "text", text: `${arg.tag}${i}`}]});
                const w = await store.beginReply(arg.c, {});
                await w.append({type: "text_delta", index: 0, text: `${arg.tag}${i} reply`});
                await w.finish();
              }
            })();
        """, {"c": conversation, "tag": tag})
    js(a, "await window.done;")
    js(b, "await window.done;")
    data = js(a, """
        const data = await store.loadConversation(arg);
        return {path: s.branchPath(data.messages, data.conversation.current_leaf).map(m => m.parts[0].text),
                count: data.messages.length};
    """, conversation)
    assert data["count"] == 100
    path = data["path"]
    assert len(path) == 100  # one chain: every message is on it
    for tag in "AB":
        mine = [t for t in path if t.startswith(tag) and not t.endswith("reply")]
        assert mine == [f"{tag}{i}" for i in range(25)]  # each tab's messages in the order it sent them
    changes = js(b, "return window.changes;")
    assert any(c["type"] == "message" and c.get("remote") for c in changes)
    context.close()


# ------------------------------------------------------------ quota (T-S3)


def test_a_full_quota_is_reported_and_the_conversation_stays_in_memory_and_exportable(
    browser: Browser, store_site: str
):
    context = browser.new_context()
    page = open_page(context, store_site)
    problems: list[str] = []  # an unhandled rejection would mean a failure nobody reported
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    cdp = context.new_cdp_session(page)
    origin = store_site.split("/store.html")[0]
    # Chromium reads the quota when the database is opened, so the small quota comes first.
    cdp.send("Storage.overrideQuotaForOrigin", {"origin": origin, "quotaSize": 1_000_000})
    open_store(page)
    conversation = js(page, """
        const c = await store.createConversation({title: "big"});
        await store.addMessage(c.id, {role: "user", parts: [{type: "text", text: "small and saved"}]});
        return c.id;
    """)
    result = js(page, """
        const noise = (n) => { let t = ""; while (t.length < n) t += crypto.randomUUID(); return t.slice(0, n); };
        const big = noise(2_000_000) + " the end";  // incompressible: IndexedDB compresses values
        const m = await store.addMessage(arg, {role: "user", parts: [{type: "text", text: big}]});
        const w = await store.beginReply(arg, {});
        const acks = [];
        for (let i = 0; i < 20; i++) acks.push(await w.append({type: "text_delta", index: 0, text: noise(100_000)}));
        const reply = await w.finish();
        const loaded = await store.loadConversation(arg);
        const exported = JSON.parse(await (await store.exportConversation(arg)).text());
        return {errors: window.storeErrors, onDisk: !!(await store.db.get("messages", m.id)), acks,
                loaded: loaded.messages.map(x => [x.role, x.status, s.textOfParts(x.parts).length]),
                exported: exported.conversations[0].messages.map(x => s.textOfParts(x.parts).length)};
    """, conversation)
    kinds = [e["kind"] for e in result["errors"]]
    assert "quota" in kinds
    assert "full" in result["errors"][kinds.index("quota")]["message"]
    assert result["onDisk"] is False
    assert False in result["acks"]
    assert result["loaded"] == [["user", "complete", 15], ["user", "complete", 2_000_008],
                                ["assistant", "complete", 2_000_000]]
    assert result["exported"] == [15, 2_000_008, 2_000_000]
    assert problems == []
    cdp.send("Storage.overrideQuotaForOrigin", {"origin": origin})
    context.close()


# ------------------------------------------------------------ schema upgrade with another tab (T-S4)


def test_an_old_tab_lets_go_when_a_newer_schema_arrives(browser: Browser, store_site: str):
    context = browser.new_context()
    old, new = open_page(context, store_site), open_page(context, store_site)
    js(old, """
        const errors = window.oldErrors = [];
        window.oldDb = await s.openDatabase({name: "up", migrations: s.MIGRATIONS.slice(0, 1),
                                             onError: e => errors.push(e)});
        await window.oldDb.put("conversations",
                               {id: "c1", title: "from v1", created: 1, updated: 1, current_leaf: null});
    """)
    open_store(new, "up")
    assert [e["kind"] for e in js(old, "return window.oldErrors;")] == ["versionchange"]
    assert js(new, "return window.storeErrors;") == []  # never blocked: the old tab closed at once
    assert js(new, "return (await store.listConversations()).map(c => c.title);") == ["from v1"]
    assert js(new, "return [store.db.version, s.SCHEMA_VERSION];") == [3, 3]  # v3 added assistants
    assert js(new, "return (await store.assistants.list()).map(a => a.name)[0];") == "General"
    context.close()


def test_an_upgrade_blocked_by_a_tab_that_does_not_let_go_is_reported_and_completes_later(
    browser: Browser, store_site: str
):
    context = browser.new_context()
    old, new = open_page(context, store_site), open_page(context, store_site)
    js(old, """
        window.raw = await new Promise((resolve, reject) => {
          const req = indexedDB.open("stubborn", 1);   // an old build that ignores versionchange
          req.onupgradeneeded = () => s.MIGRATIONS[0](req.result);
          req.onsuccess = () => resolve(req.result);
          req.onerror = () => reject(req.error);
        });
        await new Promise(r => { const tx = window.raw.transaction("conversations", "readwrite");
          tx.objectStore("conversations").put({id: "k", title: "kept", created: 1, updated: 1, current_leaf: null});
          tx.oncomplete = r; });
    """)
    js(new, "window.opening = window.openTestStore('stubborn').then(st => (window.store = st));")
    new.wait_for_timeout(500)
    errors = js(new, "return window.storeErrors;")
    assert [e["kind"] for e in errors] == ["blocked"]
    assert "Another Orizuru tab" in errors[0]["message"]
    js(old, "window.raw.close();")
    js(new, "await window.opening;")
    assert js(new, "return (await store.listConversations()).map(c => c.title);") == ["kept"]
    context.close()


# ------------------------------------------------------------ keys (T-S5)


def test_keys_never_reach_storage_or_exports_and_a_wrong_passphrase_fails_closed(browser: Browser, store_site: str):
    context = browser.new_context()
    page = open_page(context, store_site)
    open_store(page)
    key = "sk-test-" + "Q7x9" * 10
    result = js(page, """
        s.sessionKeys.set("p1", arg);
        const record = await s.encryptSecret("correct horse battery staple", arg);
        await store.profiles.save({id: "p1", name: "Work", vendor: "openai", model: "gpt-4o", key: record});
        let refused = null;
        try {
          await store.profiles.save({name: "Bad", vendor: "openai", api_key: arg});
        } catch (e) { refused = e.message; }
        const c = await store.createConversation({title: "with a pasted key"});
        await store.addMessage(c.id, {role: "user", parts: [{type: "text", text: `my key is ${arg} ok?`}]});
        const json = await (await store.exportAll("json")).text();
        const md = await (await store.exportAll("markdown")).text();
        const dump = {};
        for (const name of store.db.objectStoreNames) dump[name] = await store.db.getAll(name);
        const back = await s.decryptSecret("correct horse battery staple", (await store.profiles.get("p1")).key);
        let wrong = null;
        try {
          await s.decryptSecret("Correct horse battery staple", record);
        } catch (e) { wrong = [e.name, e.message]; }
        let tampered = null;
        try {
          await s.decryptSecret("correct horse battery staple", {...record, iterations: 200000});
        } catch (e) { tampered = e.name; }
        return {record, refused, json, md, profiles: JSON.stringify(dump.profiles),
                local: JSON.stringify({...localStorage}), back, wrong, tampered};
    """, key)
    assert result["record"]["iterations"] >= 600_000 and result["record"]["kdf"] == "PBKDF2-SHA256"
    assert key not in json.dumps(result["record"])
    assert "plain API key" in result["refused"]
    assert key not in result["profiles"] and key not in result["local"]
    for exported in (result["json"], result["md"]):
        assert key not in exported
        assert "my key is [API key removed] ok?" in exported
    assert result["back"] == key
    assert result["wrong"][0] == "WrongPassphraseError" and "Wrong passphrase" in result["wrong"][1]
    assert key not in result["wrong"][1]
    assert result["tampered"] == "WrongPassphraseError"
    context.close()


# ------------------------------------------------------------ export / import


def make_sample(page: Page) -> str:
    return js(page, """
        const c = await store.createConversation({title: "Sample · 見本"});
        const q = await store.addMessage(c.id, {role: "user", parts: [{type: "text", text: "What is 2+2?"},
            {type: "image", data: "iVBORw0KGgo=", mime_type: "image/png"}]});
        const w = await store.beginReply(c.id, {vendor: "openai", model: "gpt-4o"});
        await w.append({type: "tool_call_start", index: 0, id: "call_1", name: "calc"});
        await w.append({type: "tool_call_args_delta", index: 0, delta: '{"expr": "2+2"}'});
        await w.append({type: "tool_call_end", index: 0, id: "call_1", name: "calc", arguments: {expr: "2+2"}});
        await w.finish({finish_reason: "tool_calls", usage: {input_tokens: 5, output_tokens: 7}});
        await store.addMessage(c.id, {role: "user", parts: [{type: "tool_result", call_id: "call_1", name: "calc",
            content: [{type: "text", text: "4"}]}]});
        const w2 = await store.beginReply(c.id, {vendor: "anthropic", model: "claude"});
        await w2.append({type: "text_delta", index: 0, text: "It is **4**."});
        await w2.finish();
        await store.addMessage(c.id, {parent_id: q.id, role: "assistant", parts: [{type: "text", text: "Four."}]});
        await store.setFocus(c.id, {facts: ["math"]});
        return c.id;
    """)


def export_all(page: Page) -> dict:
    return json.loads(js(page, "return await (await store.exportAll('json')).text();"))


def test_export_then_import_elsewhere_gives_back_the_same_conversations(browser: Browser, store_site: str):
    context = browser.new_context()
    page = open_page(context, store_site)
    open_store(page, "source")
    make_sample(page)
    first = export_all(page)
    assert first["format"] == "orizuru.conversations" and first["version"] == 1
    [conv] = first["conversations"]
    assert len(conv["messages"]) == 5 and conv["focus"] == {"facts": ["math"]}
    assert conv["messages"][1]["parts"][0] == {"type": "tool_call", "id": "call_1", "name": "calc",
                                               "arguments": {"expr": "2+2"}}
    open_store(page, "destination")
    result = js(page, "return await store.importJSON(arg);", json.dumps(first))
    assert result == {"imported": 1, "copied": 0, "skipped": 0, "conversation_ids": [conv["id"]]}
    second = export_all(page)
    first.pop("exported_at"), second.pop("exported_at")
    assert second == first
    # The same file again: already here, skipped; nothing duplicated.
    again = js(page, "return await store.importJSON(arg);", json.dumps({**first, "exported_at": "x"}))
    assert again["skipped"] == 1 and again["imported"] == again["copied"] == 0
    # A diverged copy of an existing conversation comes in under fresh ids and overwrites nothing.
    diverged = json.loads(json.dumps(first))
    diverged["conversations"][0]["messages"].append({**conv["messages"][-1], "id": "extra",
                                                     "parts": [{"type": "text", "text": "new"}]})
    copied = js(page, "return await store.importJSON(arg);", json.dumps(diverged))
    assert copied["copied"] == 1 and copied["conversation_ids"][0] != conv["id"]
    third = export_all(page)
    original = next(c for c in third["conversations"] if c["id"] == conv["id"])
    assert original == conv
    copy = next(c for c in third["conversations"] if c["id"] != conv["id"])
    assert len(copy["messages"]) == 6 and not {m["id"] for m in copy["messages"]} & {m["id"] for m in conv["messages"]}
    parents = {m["id"] for m in copy["messages"]}
    assert all(m["parent_id"] is None or m["parent_id"] in parents for m in copy["messages"])
    context.close()


PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
PDF = "JVBERi0xLjQKJcOkw7zDtsOfCjEgMCBvYmoKPDwvVHlwZS9DYXRhbG9nPj4KZW5kb2JqCnRyYWlsZXIKPDwvUm9vdCAxIDAgUj4+CiUlRU9G"
ATTACHMENTS = [{"type": "text", "text": "what is in these?"},
               {"type": "image", "mime_type": "image/png", "data": PNG},
               {"type": "document", "name": "report.pdf", "mime_type": "application/pdf", "data": PDF}]


def opfs_files(page: Page, database: str) -> dict[str, str]:
    """The attachment files of a database in this origin's OPFS: name -> their bytes as base64."""
    return js(page, """
        const all = await (await navigator.storage.getDirectory()).getDirectoryHandle("attachments", {create: true});
        const dir = await all.getDirectoryHandle(arg, {create: true});
        const out = {};
        for await (const [name, handle] of dir.entries()) {
          const bytes = new Uint8Array(await (await handle.getFile()).arrayBuffer());
          out[name] = btoa(String.fromCharCode(...bytes));
        }
        return out;
    """, database)


def test_attachment_bytes_live_in_opfs_and_come_back_whole_in_loads_exports_and_imports(
        browser: Browser, store_site: str):
    """Issue #19: bytes in OPFS (named by their SHA-256, so kept once), the parts without them in IndexedDB;
    a load, an export and an import give the whole parts back; a purge sweeps what nothing refers to."""
    context = browser.new_context()
    page = open_page(context, store_site)
    open_store(page, "blobs")
    made = js(page, """
        const c = await store.createConversation({title: "files"});
        const user = await store.addMessage(c.id, {role: "user", parts: arg});
        const again = await store.addMessage(c.id, {role: "user", parts: arg.slice(1, 2)});  // the same image again
        const other = await store.createConversation({title: "other"});
        await store.addMessage(other.id, {role: "user", parts: arg.slice(2)});                // the same PDF elsewhere
        const record = (await store.db.get("messages", user.id)).parts;
        return {id: c.id, other: other.id, returned: user.parts, record,
                loaded: (await store.loadConversation(c.id)).messages.map((m) => m.parts)};
    """, ATTACHMENTS)
    assert made["returned"] == ATTACHMENTS  # the caller keeps whole parts
    text, image, document = made["record"]
    assert text == ATTACHMENTS[0] and "data" not in image and "data" not in document
    assert image["blob"].startswith("sha256-") and image["size"] == 70 and document["name"] == "report.pdf"
    files = opfs_files(page, "blobs")
    assert sorted(files.values()) == sorted([PNG, PDF])  # two files for four attachments
    assert files[image["blob"].removeprefix("sha256-")] == PNG
    assert made["loaded"] == [ATTACHMENTS, ATTACHMENTS[1:2]]

    exported = export_all(page)
    parts = [p for c in exported["conversations"] for m in c["messages"] for p in m["parts"]]
    assert sum(p.get("data") == PNG for p in parts) == 2 and sum(p.get("data") == PDF for p in parts) == 2
    assert not any("blob" in p for p in parts)  # an export stands alone: the bytes, not this browser's names

    open_store(page, "blobs-imported")
    js(page, "await store.importJSON(arg);", json.dumps(exported))
    stored = stored_records(page, "messages")
    assert all("data" not in p for m in stored for p in m["parts"] if p["type"] != "text")
    assert export_all(page)["conversations"] == exported["conversations"]
    assert sorted(opfs_files(page, "blobs-imported").values()) == sorted([PNG, PDF])

    # Deleting a conversation and purging it frees the files nothing else refers to (once they are old enough
    # that no other tab can be saving a message that uses them).
    open_store(page, "blobs")
    kept = js(page, """
        await store.deleteConversation(arg.id);
        await store.purgeDeleted(0);
        const young = await store.sweepBlobs();
        const swept = await store.sweepBlobs({minAgeMs: 0});
        return {young, swept, left: (await store.loadConversation(arg.other)).messages[0].parts};
    """, made)
    assert kept["young"] == 0 and kept["swept"] == 1 and kept["left"] == ATTACHMENTS[2:]
    assert list(opfs_files(page, "blobs").values()) == [PDF]  # the PDF: the other conversation still has it
    js(page, "await store.deleteConversation(arg.other); await store.purgeDeleted(0);", made)
    assert js(page, "return await store.sweepBlobs({minAgeMs: 0});") == 1 and opfs_files(page, "blobs") == {}
    assert sorted(opfs_files(page, "blobs-imported").values()) == sorted([PNG, PDF])  # another database's: kept
    context.close()


CSV = "bmFtZSxjYXBpdGFsClVLLExvbmRvbgo="  # the code interpreter wrote it: kept with its call's result
WRITTEN = {"type": "document", "name": "capitals.csv", "mime_type": "text/csv", "data": CSV}
OLD_EXPORT = {"format": "orizuru.conversations", "version": 1, "exported_at": "2026-11-01T00:00:00Z", "conversations": [
    {"id": "c-old", "title": "old", "created": 1, "updated": 4, "current_leaf": "m3", "messages": [
        {"id": "m1", "parent_id": None, "role": "user", "parts": [{"type": "text", "text": "csv please"}],
         "status": "complete", "created": 1},
        {"id": "m2", "parent_id": "m1", "role": "assistant", "status": "complete", "created": 2,
         "parts": [{"type": "tool_call", "id": "py1", "name": "python", "arguments": {"code": "..."}}]},
        {"id": "m3", "parent_id": "m2", "role": "user", "status": "complete", "created": 3,
         "parts": [{"type": "tool_result", "call_id": "py1", "name": "python",
                    "content": [{"type": "text", "text": "wrote capitals.csv"}]}],
         "tool_meta": {"py1": {"duration_ms": 40.5, "files": [WRITTEN]}}}]}]}


def test_an_older_export_with_tool_meta_comes_in_with_each_cards_data_on_its_result_part(
        browser: Browser, store_site: str):
    """Issue 30: exports (and records) of builds before it kept a card's data in a table beside the results,
    tool_meta. Imported, it is on the result part (display), the files the code wrote in OPFS like any
    attachment, and a sweep keeps them; exported again, the table is gone."""
    page = open_page(browser.new_context(), store_site)
    open_store(page, "old-export")
    got = js(page, """
        await store.importJSON(arg);
        const record = await store.db.get("messages", "m3");
        const swept = await store.sweepBlobs({minAgeMs: 0});
        return {record, swept, loaded: (await store.loadConversation("c-old")).messages[2]};
    """, json.dumps(OLD_EXPORT))
    record, loaded = got["record"], got["loaded"]
    assert "tool_meta" not in record and "tool_meta" not in loaded
    [kept] = record["parts"][0]["display"]["files"]
    assert "data" not in kept and kept["blob"].startswith("sha256-")
    assert got["swept"] == 0 and list(opfs_files(page, "old-export").values()) == [CSV]
    assert loaded["parts"][0]["display"] == {"duration_ms": 40.5, "files": [WRITTEN]}
    [again] = [m for m in export_all(page)["conversations"][0]["messages"] if m["id"] == "m3"]
    assert "tool_meta" not in again and again["parts"][0]["display"]["files"] == [WRITTEN]
    page.context.close()


def test_an_attachment_whose_file_is_gone_loads_as_a_note_not_a_broken_part(browser: Browser, store_site: str):
    context = browser.new_context()
    page = open_page(context, store_site)
    open_store(page, "gone")
    loaded = js(page, """
        const c = await store.createConversation({title: "x"});
        await store.addMessage(c.id, {role: "user", parts: arg});
        const all = await (await navigator.storage.getDirectory()).getDirectoryHandle("attachments");
        await all.removeEntry("gone", {recursive: true});   // e.g. site data partly cleared
        return (await store.loadConversation(c.id)).messages[0].parts;
    """, ATTACHMENTS)
    assert loaded == [ATTACHMENTS[0],
                      {"type": "text", "text": "[an image attached here is no longer in this browser's storage]"},
                      {"type": "text", "text": "[report.pdf attached here is no longer in this browser's storage]"}]
    context.close()


BAD_FILES = [
    ("not json {", "not valid JSON"),
    ('{"format": "something else", "version": 1, "conversations": []}', 'format: expected "orizuru.conversations"'),
    ('{"format": "orizuru.conversations", "version": 99, "conversations": []}', "version: 99 is newer"),
    ("ROLE", 'conversations[0].messages[1].role: expected "user" or "assistant", got "system"'),
    ("PARENT", 'conversations[0].messages[2].parent_id: "nope" is not a message of this conversation'),
    ("PART", "conversations[0].messages[0].parts[1].mime_type: expected an image media type"),
    # Checked against the contract's schema (issue 30), not a hand-written copy that knew fewer fields:
    ("EXTRA", "conversations[0].messages[0].parts[0].html: not a field of TextPart"),
]


@pytest.mark.parametrize(("bad", "expected"), BAD_FILES, ids=[b[1][:30] for b in BAD_FILES])
def test_a_bad_import_names_the_problem_and_changes_nothing(browser: Browser, store_site: str, bad: str, expected: str):
    context = browser.new_context()
    page = open_page(context, store_site)
    open_store(page)
    make_sample(page)
    good = export_all(page)
    if bad in ("ROLE", "PARENT", "PART", "EXTRA"):
        data = json.loads(json.dumps(good))
        data["conversations"][0]["id"] = "another"  # would be imported if the file were valid
        for m in data["conversations"][0]["messages"]:
            m["id"] = "n-" + m["id"]
            m["parent_id"] = m["parent_id"] and "n-" + m["parent_id"]
        data["conversations"][0]["current_leaf"] = None
        messages = data["conversations"][0]["messages"]
        if bad == "ROLE":
            messages[1]["role"] = "system"
        elif bad == "PARENT":
            messages[2]["parent_id"] = "nope"
        elif bad == "PART":
            messages[0]["parts"][1]["mime_type"] = "text/html"
        else:
            messages[0]["parts"][0]["html"] = "<img src=x onerror=alert(1)>"
        bad = json.dumps(data)
    dump_all = "const d = {}; for (const n of store.db.objectStoreNames) d[n] = await store.db.getAll(n); return d;"
    before = js(page, dump_all)
    error = js(page, "try { await store.importJSON(arg); return null; } catch (e) { return [e.name, e.message]; }", bad)
    assert error is not None and error[0] == "ImportError"
    assert expected in error[1] and "nothing was changed" in error[1]
    after = js(page, dump_all)
    assert after == before
    context.close()


def test_markdown_export_shows_the_branch_on_show(browser: Browser, store_site: str):
    page = open_page(browser.new_context(), store_site)
    open_store(page)
    conversation = make_sample(page)
    md = js(page, "return await (await store.exportConversation(arg, 'markdown')).text();", conversation)
    assert md.startswith("# Sample · 見本\n")
    assert "## You\n\nWhat is 2+2?" in md and "_[image: image/png]_" in md
    assert "## Assistant\n\nFour." in md and "It is **4**." not in md  # the branch on show only
    md = js(page, """
        const data = await store.loadConversation(arg);
        const tree = new s.ConversationTree(data.messages);
        const replies = data.messages.filter(m => m.parent_id === data.messages[0].id);
        tree.choose(replies.reduce((a, b) => (a.created <= b.created ? a : b)));  // the first reply's branch
        await store.setCurrentLeaf(arg, tree.last().id);
        return await (await store.exportConversation(arg, 'markdown')).text();
    """, conversation)
    assert "## Assistant · openai/gpt-4o" in md and "**Tool call** `calc`" in md and '"expr": "2+2"' in md
    assert "**Tool result**\n\n```\n4\n```" in md
    assert "## Assistant · anthropic/claude\n\nIt is **4**." in md and "Four." not in md
    page.context.close()


def test_a_reply_cut_inside_a_tool_call_keeps_its_text_and_the_partial_arguments(
    profile: BrowserContext, store_site: str
):
    page = open_page(profile, store_site)
    open_store(page)
    ids = js(page, """
        const c = await store.createConversation();
        const w = await store.beginReply(c.id, {});
        await w.append({type: "reasoning_delta", index: 0, text: "look it up"});
        await w.append({type: "text_delta", index: 1, text: "Searching"});
        await w.append({type: "tool_call_start", index: 2, id: "t1", name: "search"});
        await w.append({type: "tool_call_args_delta", index: 2, delta: '{"q": "kyo'});
        return {conversation: c.id, reply: w.id};
    """)
    page.reload()
    page.wait_for_selector("body[data-ready=yes]", state="attached")
    open_store(page)
    [reply] = wait_interrupted(page, ids["conversation"])["messages"]
    assert reply["status"] == "interrupted"
    assert reply["parts"] == [
        {"type": "reasoning", "text": "look it up"},
        {"type": "text", "text": "Searching"},
        {"type": "tool_call", "id": "t1", "name": "search", "arguments": {},
         "provider_details": {"partial_arguments": '{"q": "kyo'}},
    ]
