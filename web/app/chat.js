/**
 * The conversation on screen and the turns it runs.
 *
 *   const chat = new Chat({core, coreReady, store, transcript, images, provider, tools, follow, onChange, notify})
 *   await chat.open(conversationId) | chat.newChat()
 *   await chat.send(text, images, extraParts)   {ok: true, done} once the user message is stored (the reply then
 *                                        runs: chat.run, every event to the store), or {ok: false, reason}: nothing
 *                                        stored or sent, the caller keeps the words (extraParts: attached
 *                                        documents, an MCP resource's parts)
 *   chat.stop()                           cancels the running call (WorkerClient.cancel)
 *   chat.turn                             the turn's state machine (web/app/turn.js); chat.running its data while
 *                                        a reply streams or waits on a question
 *
 * `provider()` returns {provider: {vendor, api_key?, base_url?}, model, vendor} for the next turn or
 * throws an Error saying what is missing; one with a `profile` (settings.js MissingKeyError) is a key
 * this tab lacks, and `askKey(profile)` asks for it (true: the key is there now): a turn asks before
 * it starts, and `await chat.ready()` lets the composer ask before it empties the box.
 * `tools()` resolves to {tools, policy} for chat.run; `onAlwaysAllow(approvalEvent)` is told when the user
 * presses "Always allow this tool" on a card (the Tools panel keeps the choice for later turns).
 * `apps` ({frameURL, viewOf(serverId, tool), choicesFor(serverId), isLocal(serverId), suggest(text)}) draws MCP App views: a tool
 * whose server names a `ui://` view for it gets that view on its card (web/mcp_app/view.js), kept on its result
 * part (`display.app`: server, uri, tool, arguments) so it is drawn again after a reload.
 * Switching profile or model between turns is just a different provider() answer: the whole path is
 * sent to the new vendor.
 *
 * One agent turn is one reply on screen (MessageView with a StepView per step). What is drawn stays drawn: a
 * message sent is added under the others, and at a turn's end the reply drawn live becomes the stored one in place
 * (MessageView.adopt), so nothing is parsed twice and an MCP App view started during the turn keeps running. The
 * path is drawn anew only when it changes (opening a conversation, switching a branch, an edit, another tab's write).
 *
 * `follow` (web/app/follow.js) keeps the reader where they are: at the end while a reply streams
 * (sending or opening a conversation goes there), or on the text they scrolled up to, across redraws.
 *
 * With `focus` (web/app/focus.js) switched on for the conversation, a turn sends focus.synthesize's
 * system prompt and messages (mission, constraints, the last exchanges, this message) instead of the
 * whole path, and after the reply focus.update runs in the background; the next turn waits for it.
 */

import { filesOf, keptFiles, PYTHON_TOOL, toolContent } from "../sandbox/tool.js";
import { h } from "./dom.js";
import { AppView } from "../mcp_app/view.js";
import { askUser } from "./server_asks.js";
import { hasText, onLanguageChange, t } from "./i18n.js";
import { STREAM_EVENT_TYPES } from "../contract.js";
import { MessageView } from "./message_view.js";
import { ReplyRecord } from "./reply_record.js";
import { ConversationGoneError } from "../store/transcripts.js";
import { Turn } from "./turn.js";
import { ConversationTree, isToolResults, textOf, toWireMessages } from "./tree.js";
import { markHit } from "./search_hit.js";

// The model's stream events (pycore/contract.py): each belongs to the reply's current step and is stored with it.
const STREAM_EVENTS = new Set(STREAM_EVENT_TYPES);
// The events that ask the person something: the turn waits on them (turn.js `awaiting`).
const ASKING = new Set(["approval", "elicitation", "sampling"]);

export class Chat {
  constructor({ core, coreReady, store, transcript, images, provider, tools, follow, focus = null, assistant = null,
                autoTitle = () => false, onChange = () => {}, interpreter = null, samplingLimits = null,
                onRunning = () => {}, notify = () => {}, openSettings = () => {}, askKey = async () => false,
                onAlwaysAllow = () => {}, apps = null }) {
    onLanguageChange(() => this.render());
    Object.assign(this, { core, coreReady, store, transcript, images, provider, tools, follow, focus, assistant, autoTitle,
                          interpreter, samplingLimits, apps,
                          onChange,
                          onRunning,
                          notify, openSettings, askKey, onAlwaysAllow });
    this.conversation = null;
    this.tree = new ConversationTree();
    this.views = [];
    // The turn's state (web/app/turn.js), shown on <html data-turn> for styles and tests.
    this.turn = new Turn({ onChange: (state) => {
      document.documentElement.dataset.turn = state;
      this.onRunning(state === "streaming" || state === "awaiting");
    } });
    document.documentElement.dataset.turn = this.turn.state;
    this.opening = Promise.resolve(); // the conversation being opened: a send waits for it
    this.renderEmpty();
  }

  /** The running turn's data ({callId, cancelled, …}), or null while none streams. */
  get running() {
    return ["streaming", "awaiting"].includes(this.turn.state) ? this.turn.run : null;
  }

  // ------------------------------------------------------------------ opening and drawing

  newChat() {
    if (this.running) this.stop();
    this.conversation = null;
    this.tree = new ConversationTree();
    this.focus?.show(null, null);
    this.assistant?.showFor(null);
    this.render();
    this.follow.toEnd();
    this.onChange(null);
  }

  /** Open a conversation at its end, or at a search hit ({at: message id, query}: shown on its branch, marked). */
  open(id, options = {}) {
    const opening = this.opening.catch(() => {}).then(() => this.#open(id, options));
    this.opening = opening;
    return opening;
  }

  async #open(id, { at = null, query = "" } = {}) {
    if (this.running) this.stop();
    const loaded = await this.#load(id);
    this.conversation = loaded.conversation;
    this.tree = new ConversationTree(loaded.messages);
    if (loaded.conversation.current_leaf) this.#chooseLeaf(loaded.conversation.current_leaf);
    if (at && this.tree.get(at)) this.#chooseLeaf(at);
    this.focus?.show(id, loaded.focus);
    this.assistant?.showFor(loaded.conversation);
    this.render();
    const hit = at && markHit(this.transcript, at, query);
    if (hit) this.follow.reveal(hit);
    else this.follow.toEnd();
    this.onChange(this.conversation);
  }

  /**
   * The conversation as stored; one that is gone (deleted, perhaps in another tab, since it was listed) is an error
   * that says so, not a TypeError of a missing record.
   * @param {string} id
   */
  async #load(id) {
    const loaded = await this.store.loadConversation(id);
    if (!loaded) throw new Error(t("chat.openGone"));
    return loaded;
  }

  #chooseLeaf(leafId) {
    for (let cur = this.tree.get(leafId); cur; cur = this.tree.get(cur.parent_id)) {
      this.tree.chosen.set(cur.parent_id ?? "\u0000root", cur.id);
    }
  }

  /** Reload the messages from the store, keeping the branches chosen on screen, and draw them again. */
  async refresh() {
    if (!this.conversation) return;
    await this.#reload();
    this.render();
  }

  /** The conversation's messages as stored, into the tree, keeping the branches chosen on screen. */
  async #reload() {
    const loaded = await this.#load(this.conversation.id);
    const chosen = this.tree.chosen;
    const known = new Set(this.tree.byId.keys());
    this.tree = new ConversationTree(loaded.messages.filter((m) => known.has(m.id)));
    this.tree.chosen = chosen;
    for (const msg of loaded.messages.filter((m) => !known.has(m.id)).sort((a, b) => a.created - b.created)) {
      this.tree.add(msg);
    }
    this.conversation = loaded.conversation;
  }

  /**
   * A turn's end: the tree learns what was stored, and the reply drawn live becomes that stored reply in place
   * (ids, actions, branches). Nothing already on screen is drawn again: no markdown parsed twice, no MCP App view
   * restarted. Only when the screen and the store disagree (another tab wrote meanwhile) is the path drawn anew.
   */
  async #settleTurn(replies) {
    await this.#reload();
    for (const { view, id } of replies) {
      const msg = id && this.tree.get(id);
      if (!msg || !view.el.isConnected) return this.render();
      view.adopt(msg, { siblings: this.tree.siblings(msg), actions: this.#actionsFor(msg) });
    }
    const expected = onScreen(this.tree.path()).map(({ msg }) => msg.id).join();
    if (this.views.map((view) => view.msg.id).join() !== expected) this.render();
  }

  renderEmpty() {
    this.transcript.replaceChildren(h("li", { className: "empty" }, t("chat.empty")));
  }

  /** Draw the shown path again; the reader stays at the end, or on what they were reading. */
  render() {
    const place = this.follow.anchor();
    for (const view of this.views) view.destroy();
    this.views = [];
    const path = this.tree.path();
    if (!path.length) return this.renderEmpty();
    const items = [];
    for (const { msg, after } of onScreen(path)) {
      let view;
      try {
        view = new MessageView(msg, { images: this.images, siblings: this.tree.siblings(msg),
                                      actions: this.#actionsFor(msg) });
        for (const later of after) {
          if (isToolResults(later)) view.attachResults(later);
          else view.addStep(later); // the same turn, after its tools answered: one reply
        }
      } catch (error) {
        // One message that cannot be drawn must not hide the conversation: its stored text, as text.
        console.error("chat: a message could not be shown:", error);
        items.push(unrenderable(msg));
        continue;
      }
      this.views.push(view);
      items.push(view.el);
    }
    this.transcript.replaceChildren(...items);
    this.follow.restore(place);
  }

  /** For a tool of an MCP server: reads a resource link through the client, from that server (when connected). */
  #resourceReader(source) {
    if (!source?.startsWith("mcp:")) return null;
    return async (uri) => (await this.core.call("mcp.read_resource", { id: source.slice("mcp:".length), uri })).contents;
  }

  #actionsFor(msg) {
    const actions = { branch: (view, delta) => this.#switchBranch(view.msg, delta),
                      openResource: (source) => this.#resourceReader(source),
                      showApp: (card, app, result) => this.#showApp(card, app, result) };
    if (msg.role === "user") actions.edit = (view) => this.#startEdit(view);
    else {
      actions.regenerate = (view) => this.regenerate(view.msg);
      // A failed reply's way out (web/app/error_notice.js): a retry is another reply to the same prompt.
      actions.retry = (view) => this.regenerate(view.msg);
      actions.openSettings = (where) => this.openSettings(where);
    }
    return actions;
  }

  async #switchBranch(msg, delta) {
    if (this.turn.busy) return void this.notify(t("chat.busy"));
    this.tree.step(msg, delta);
    this.render();
    await this.#saveLeaf();
  }

  async #saveLeaf() {
    const leaf = this.tree.last();
    if (this.conversation && leaf) await this.store.setCurrentLeaf?.(this.conversation.id, leaf.id);
  }

  #startEdit(view) {
    if (this.turn.busy) return void this.notify(t("chat.busy"));
    const field = h("textarea", { className: "edit-field", "aria-label": t("chat.editField"), rows: 3 });
    field.value = textOf(view.msg);
    const images = view.msg.parts.filter((p) => p.type === "image");
    const documents = view.msg.parts.filter((p) => p.type === "document"); // kept: the edit is of the words
    const form = h("form", { className: "edit-form" }, field,
      h("div", { className: "actions" },
        h("button", { type: "submit" }, t("chat.resend")),
        h("button", { type: "button", onclick: () => this.render() }, t("chat.cancel"))));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const text = field.value.trim();
      if (!text) return;
      this.#start({ parentId: view.msg.parent_id ?? null, userParts: [...userParts(text, images), ...documents] })
        .then((outcome) => outcome.ok || (outcome.reason && this.notify(outcome.reason, { error: true })));
    });
    field.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        form.requestSubmit();
      }
    });
    view.body.replaceWith(form);
    field.focus();
  }

  // ------------------------------------------------------------------ turns

  /**
   * A new user message at the end of the shown path, then a reply. Resolves once the message is stored,
   * {ok: true, done} (`done`: the whole turn), or refused, {ok: false, reason}: then nothing was stored or sent,
   * and the caller keeps the words (the reason is null when it was already said, or the person cancelled).
   */
  send(text, images = [], extraParts = []) {
    return this.#start({ userParts: [...userParts(text, images), ...extraParts] });
  }

  /** Another reply to the same user message, kept as a sibling branch. */
  async regenerate(assistantMsg) {
    const prompt = this.tree.promptOf(assistantMsg);
    if (!prompt) return undefined;
    const outcome = await this.#start({ replyTo: prompt });
    if (!outcome.ok && outcome.reason) this.notify(outcome.reason);
    return outcome;
  }

  stop() {
    const run = this.running;
    if (!run) return;
    run.cancelled = true;
    if (run.callId !== undefined) this.core.cancel(run.callId);
    for (const abort of run.interpreting ?? []) abort(); // code the model is running stops too
  }

  async ready() {
    return Boolean(await this.#target());
  }

  /** provider(), after asking for a key this tab lacks; null (and said why) when there is none. */
  async #target() {
    for (;;) {
      try {
        const settings = this.assistant?.effective();
        const target = this.provider(settings?.profile_id ?? null); // the assistant's profile, else the top bar's
        return settings?.model ? { ...target, model: settings.model } : target;
      } catch (err) {
        if (!err.profile) this.notify(err.message, { settings: true });
        if (!err.profile || !(await this.askKey(err.profile))) return null;
      }
    }
  }

  /**
   * The first half of a turn, while the composer still holds the words (turn state `sending`): the vendor to
   * ask, the conversation, the person's message on disk. Anything that goes wrong here is a refusal with its
   * reason; nothing has been sent. The reply then runs in #reply, in the background.
   */
  async #start({ parentId, userParts: parts = null, replyTo = null }) {
    await this.opening.catch(() => {}); // a conversation being opened is the one this message goes to
    await this.turn.settled(); // a turn that just ended puts the transcript in order first
    const begun = this.turn.begin();
    if (!begun.ok) return { ok: false, reason: t("chat.busy") };
    const run = begun.run;
    let userMsg = replyTo;
    try {
      const target = await this.#target();
      if (!target) return this.#refuse(null); // said why, or the person closed the key prompt
      if (!this.conversation) {
        const title = parts ? titleFrom(parts) : t("nav.untitled");
        this.conversation = await this.store.createConversation({ title });
        await this.focus?.created(this.conversation.id);
        await this.assistant?.created(this.conversation.id);
        this.onChange(this.conversation);
      }
      const conversationId = this.conversation.id;
      if (parts) {
        // The person's words are on disk before anything is sent, and before the composer lets go of them.
        const parent = parentId === undefined ? this.tree.last()?.id ?? null : parentId;
        userMsg = await this.store.addMessage(conversationId, { parent_id: parent, role: "user", parts });
      }
      this.turn.stored();
      const done = this.#reply(run, { conversationId, target, userMsg, added: Boolean(parts),
                                      fresh: Boolean(parts) && !userMsg.parent_id });
      return { ok: true, done };
    } catch (err) {
      if (!(err instanceof ConversationGoneError)) return this.#refuse(t("chat.notStored", { message: err.message }));
      this.newChat(); // it is gone: the words go to a new chat when sent again
      return this.#refuse(t("chat.conversationGone"));
    }
  }

  #refuse(reason) {
    this.turn.refuse(reason);
    return { ok: false, reason };
  }

  /** The second half of a turn: the message shown, the reply streamed and stored, the transcript put in order. */
  async #reply(run, { conversationId, target, userMsg, added, fresh }) {
    const drawn = []; // the reply this turn drew live: {view, id of its stored first step}
    let status = "done";
    try {
      if (this.conversation?.id !== conversationId) {
        run.cancelled = true; // another conversation was opened meanwhile: the message is kept in its own
        return;
      }
      this.#showTurn(userMsg, added);
      if (!(await this.#coreFor(userMsg, run))) return;
      const { messages, system, focused } = await this.#prompt(userMsg);
      const { text, view, id } = await this.#stream(run, conversationId, userMsg, messages, target, system);
      if (view) drawn.push({ view, id });
      if (fresh && text && !run.cancelled && this.autoTitle()) {
        this.#nameConversation(conversationId, textOf(userMsg), text, target); // in the background
      }
      if (focused && this.conversation?.id === conversationId) {
        this.focus.afterReply({ conversationId, message: { id: userMsg.id, text: textOf(userMsg) }, reply: text, target });
      }
    } catch (err) {
      status = "failed";
      this.notify(err.message);
    } finally {
      await this.#endTurn(run, status, conversationId, drawn);
    }
  }

  /** The message just sent (or the prompt regenerated from) on screen, the reply to come followed. */
  #showTurn(userMsg, added) {
    if (added) {
      this.tree.add(userMsg);
      this.#showSent(userMsg);
    } else {
      this.tree.chosen.delete(userMsg.id); // a regeneration: the path up to the prompt, the reply a sibling branch
    }
    this.#truncateAfter(userMsg);
    this.follow.toEnd(); // the message just sent is in view, and the reply is followed
  }

  /**
   * Waits for the core when it is still starting (the message marked "waiting for the core") and for the last
   * turn's focus.update; false when the turn was stopped meanwhile.
   */
  async #coreFor(userMsg, run) {
    if (!this.core.isReady) {
      const waiting = this.views.find((v) => v.msg.id === userMsg.id)?.el;
      if (waiting) Object.assign(waiting.dataset, { state: "waiting", waiting: t("boot.waiting") });
      try {
        await this.coreReady;
      } catch (err) {
        if (waiting) waiting.dataset.state = "error";
        throw err;
      }
      if (waiting) waiting.dataset.state = "done";
    }
    if (run.cancelled) return false;
    await this.focus?.settled(); // the last turn's focus.update is folded in before this one is built
    return !run.cancelled;
  }

  /** What goes to the vendor: the path (or, with focus memory on, its synthesis) and the assistant's system prompt. */
  async #prompt(userMsg) {
    const settings = this.assistant?.effective() ?? null;
    const focused = Boolean(this.focus) && (settings?.focus ?? Boolean(this.focus.enabled));
    const system = settings?.system || undefined;
    if (focused) return { ...(await this.#focusedPrompt(userMsg, system)), focused };
    return { messages: toWireMessages(this.#pathTo(userMsg)), system, focused };
  }

  /** The turn is over: open questions closed, its end announced, the transcript put in order, the next one let in. */
  async #endTurn(run, status, conversationId, drawn) {
    for (const question of run.questions ?? []) question.close(); // the core cancelled what is still open
    showAsked(run.stream);
    this.turn.end(run.cancelled ? "stopped" : status);
    try {
      if (this.conversation?.id === conversationId) {
        await this.#settleTurn(drawn);
        await this.#saveLeaf();
      }
    } catch (err) {
      this.notify(err.message);
    } finally {
      this.turn.settle();
    }
  }

  /**
   * A short title for a new conversation, asked of its own model after the first exchange (Settings can
   * turn this off). It replaces the first-line title only if the user did not rename the chat meanwhile;
   * a failure leaves that title as it was.
   */
/**
   * The code interpreter's answer to a `python` call (web/sandbox/): the code runs in the sandbox, in this
   * conversation's notebook, with the files attached so far; its result goes to the core as the tool's content.
   * Stop ends the run (and the sandbox: its variables are lost, which the result says).
   */
  async #runPython(ev, run, conversationId, messages, shown) {
    const controller = new AbortController();
    const abort = () => controller.abort();
    (run.interpreting ??= new Set()).add(abort);
    let content;
    let isError;
    try {
      const result = await this.interpreter.run(conversationId, String(ev.arguments?.code ?? ""),
                                                { files: filesOf(messages), signal: controller.signal });
      content = toolContent(result);
      isError = Boolean(result.error);
      // The files it wrote are kept with the transcript (their bytes in OPFS) for the card to offer again.
      const files = keptFiles(result);
      if (files.length) (shown[ev.call_id] ??= {}).files = files;
    } catch (err) {
      content = [{ type: "text", text: t("chat.interpreterFailed", { message: err.message }) }];
      isError = true;
    } finally {
      run.interpreting.delete(abort);
    }
    // After Stop the core no longer waits for this answer: that refusal is expected, not news.
    await this.core.call("chat.page_tool_result", { call_id: ev.call_id, content, is_error: isError })
      .catch((err) => run.cancelled || this.notify(err.message, { error: true }));
  }

  /** One of the user's Python tools (Tools → Python tools): it runs in the code interpreter's sandbox too. */
  async #runUserTool(ev, run) {
    const controller = new AbortController();
    const abort = () => controller.abort();
    (run.interpreting ??= new Set()).add(abort);
    let result;
    try {
      result = await this.interpreter.callTool(ev.source.slice("python:".length), ev.name, ev.arguments ?? {},
                                               { callId: ev.call_id, signal: controller.signal });
    } catch (err) {
      result = { content: [{ type: "text", text: t("chat.interpreterFailed", { message: err.message }) }], is_error: true };
    } finally {
      run.interpreting.delete(abort);
    }
    await this.core.call("chat.page_tool_result", { call_id: ev.call_id, content: result.content,
                                                    is_error: Boolean(result.is_error),
                                                    structured_content: result.structured_content ?? null })
      .catch((err) => run.cancelled || this.notify(err.message, { error: true }));
  }

  async #nameConversation(conversationId, question, reply, target) {
    const before = this.conversation?.id === conversationId ? this.conversation.title : null;
    let text = "";
    try {
      await this.core.call("chat.run", {
        provider: target.provider, model: target.model, system: TITLE_PROMPT, limits: { max_steps: 1 },
        messages: [{ role: "user", parts: [{ type: "text", text: `${question}\n\n---\n\n${reply}`.slice(0, 4000) }] }],
      }, (ev) => {
        if (ev.type === "text_delta" && !ev.refusal) text += ev.text;
      });
    } catch (err) {
      console.warn(`no title for the conversation: ${err.message}`);
      return;
    }
    const title = cleanTitle(text);
    const current = (await this.store.listConversations()).find((c) => c.id === conversationId);
    if (!title || !current || (before !== null && current.title !== before)) return;
    await this.store.renameConversation(conversationId, title);
    if (this.conversation?.id === conversationId) this.conversation.title = title;
    this.onChange(this.conversation);
  }

  /** Mission, constraints and the last exchanges instead of the whole path; images sent as they are. */
  async #focusedPrompt(userMsg, system) {
    const synth = await this.focus.synthesize(textOf(userMsg), system);
    const messages = synth.messages;
    const images = userMsg.parts.filter((p) => p.type === "image");
    if (images.length) messages[messages.length - 1].parts.push(...images);
    return { messages, system: synth.system };
  }

  #pathTo(msg) {
    const out = [];
    for (let cur = msg; cur; cur = this.tree.get(cur.parent_id)) out.unshift(cur);
    return out;
  }

  /**
   * The message just sent, on screen: added under what is there when it follows it (what is drawn stays as it is),
   * else (an edit, which starts a branch higher up) the path drawn again.
   */
  #showSent(msg) {
    const ids = onScreen(this.tree.path()).map((entry) => entry.msg.id);
    const shown = this.views.map((view) => view.msg.id);
    if (!shown.length || ids.length !== shown.length + 1 || shown.some((id, i) => ids[i] !== id)) return this.render();
    const view = new MessageView(msg, { images: this.images, siblings: this.tree.siblings(msg), actions: this.#actionsFor(msg) });
    this.views.push(view);
    this.transcript.append(view.el);
  }

  /** Drop the views after `msg` (a new branch starts there). */
  #truncateAfter(msg) {
    const i = this.views.findIndex((v) => v.msg.id === msg.id);
    if (i < 0) return;
    for (const view of this.views.splice(i + 1)) {
      view.destroy();
      view.el.remove();
    }
  }

  /**
   * Run chat.run for one turn: each event to the turn's one reply on screen and, in order, to the store. Resolves to
   * {text: every step's words joined, view: the reply drawn (or null), id: its first step's id in the store}.
   */
  async #stream(run, conversationId, userMsg, messages, target, system = undefined) {
    const interpret = Boolean(this.interpreter && this.assistant?.effective().interpreter);
    if (interpret) this.interpreter.warm?.(conversationId); // this chat's sandbox starts while the model thinks
    const record = new ReplyRecord(this.store, conversationId, {
      parentId: userMsg.id, vendor: target.vendor, model: target.model,
      onError: (err) => this.notify(t("chat.storageError", { message: err.message })) });
    // The turn as it streams: its reply on screen, whether a step of it is open, that step's usage and error.
    // `shown`: what only the page knows of each call's card (call id -> part of a ToolDisplay: what its server asked
    // and the answers, the files the code wrote, its MCP App view), put on the result part when it arrives.
    const r = { run, conversationId, target, messages, interpret, record, reply: null, stepOpen: false, usage: null,
                stepError: null, shown: {}, texts: [] };
    run.stream = r; // what the turn's end puts in order (#endTurn)
    const call = this.core.call("chat.run", await this.#runParams(target, messages, system, interpret),
                                (ev) => this.#onEvent(r, ev));
    run.callId = call.id;
    if (run.cancelled) this.core.cancel(call.id);
    let result = null;
    let failure = null;
    try {
      result = await call;
    } catch (err) {
      failure = err;
    }
    this.#endStream(r, result, failure);
    const reason = result?.stop_reason;
    if (reason && hasText(`chat.stopReason.${reason}`)) this.notify(t(`chat.stopReason.${reason}`));
    await record.settled();
    return { text: r.texts.filter(Boolean).join("\n\n"), view: r.reply, id: record.id };
  }

  /** chat.run's params: the vendor, the path, every tool this chat may use, and the assistant's settings. */
  async #runParams(target, messages, system, interpret) {
    const { tools, policy } = await this.tools();
    // The page's own JavaScript tools (registerTool on the core's client) join the run beside MCP and the user's
    // Python tools, and the code interpreter's `python` when the chat's assistant has it on.
    const pageTools = [...(tools.page ?? []), ...(this.core.pageToolDefinitions?.() ?? []),
                       ...(interpret ? [this.interpreter.tool?.() ?? PYTHON_TOOL] : [])];
    const params = { provider: target.provider, model: target.model, messages,
                     tools: { ...tools, page: pageTools }, policy };
    if (system) params.system = system;
    Object.assign(params, runSettings(this.assistant?.effective(), params.tools));
    if (this.samplingLimits) params.limits = { ...params.limits, ...this.samplingLimits() };
    return params;
  }

  /** A step of the turn begins: the reply (made at the first step) gets a step, the store a message. */
  #beginStep(r) {
    if (r.reply) r.reply.beginStep({ vendor: r.target.vendor, model: r.target.model });
    else {
      r.reply = new MessageView({ role: "assistant", parts: [], status: "streaming", vendor: r.target.vendor,
                                  model: r.target.model },
        { images: this.images, live: true, actions: { ...this.#actionsFor({ role: "assistant" }),
                                                      decide: (callId, decision, ask) => this.#decide(callId, decision, ask) } });
      this.transcript.append(r.reply.el);
      this.views.push(r.reply);
    }
    r.reply.setState("streaming");
    Object.assign(r, { stepOpen: true, usage: null, stepError: null });
    r.record.beginStep();
  }

  #finishStep(r, message, incomplete, error = null) {
    const status = error ? "error" : incomplete ? "interrupted" : "complete";
    r.reply.finishStream();
    r.reply.setState(status === "complete" ? "done" : status);
    r.record.finishStep({ parts: message?.parts, status, usage: r.usage, error });
    r.stepOpen = false;
  }

  /** One event of chat.run (docs/PROTOCOL.md): to the reply on screen, its cards, and the store. */
  #onEvent(r, ev) {
    // A question to the person (approval, a server's form or sampling request) holds the turn until the
    // stream moves on; progress and logs do not.
    if (ASKING.has(ev.type) && ev.stage !== "result") this.turn.awaiting();
    else if (ev.type !== "tool_progress" && ev.type !== "page_tool") this.turn.streaming();
    const card = () => r.reply?.card(ev.call_id);
    switch (ev.type) {
      case "step":
        if (r.stepOpen) this.#finishStep(r, null, true);
        return this.#beginStep(r);
      case "message":
        return this.#onMessage(r, ev);
      case "approval":
        return card()?.askApproval(ev);
      case "tool_progress": // on the running tool's card; it is no step of the reply
        return card()?.setProgress(ev);
      case "tool_start":
        card()?.setStatus("running");
        (r.run.running ??= new Map()).set(ev.call_id, ev);
        return undefined;
      case "sampling": // an MCP server asks the model: shown, run and sent back only as the user says
        if (ev.stage === "result") return r.run.samplings?.get(ev.id)?.showResult(ev);
        return askUser(ev, { core: this.core, run: r.run, view: r.reply, shown: r.shown, transcript: this.transcript });
      case "elicitation": // an MCP server asks the user something: in the card of its running tool
        return askUser(ev, { core: this.core, run: r.run, view: r.reply, shown: r.shown, transcript: this.transcript });
      case "tool_end":
        return this.#onToolEnd(r, ev);
      case "page_tool":
        return this.#onPageTool(r, ev);
      default:
        return STREAM_EVENTS.has(ev.type) ? this.#onStreamEvent(r, ev) : undefined;
    }
  }

  /** The model's stream (a text or reasoning delta, a tool call growing, usage, an error): its step makes and fills it. */
  #onStreamEvent(r, ev) {
    if (!r.stepOpen) this.#beginStep(r);
    if (ev.type === "usage") r.usage = ev.usage;
    if (ev.type === "error") r.stepError = ev.error;
    r.reply.onEvent(ev);
    r.record.append(ev);
  }

  /** A tool of this page runs here: the user's Python tools and the code interpreter in the sandbox, else JavaScript. */
  #onPageTool(r, ev) {
    if (ev.source?.startsWith("python:")) return this.#runUserTool(ev, r.run);
    if (r.interpret && ev.name === PYTHON_TOOL.name) return this.#runPython(ev, r.run, r.conversationId, r.messages, r.shown);
    return this.core.answerPageTool(ev).catch((err) => this.notify(err.message, { error: true }));
  }

  /** A step's whole message (the reply's words and calls), or the tool results that follow it. */
  #onMessage(r, ev) {
    if (ev.message.role === "assistant") {
      r.texts.push(textOf(ev.message));
      if (!r.stepOpen) this.#beginStep(r);
      this.#finishStep(r, ev.message, Boolean(ev.incomplete), r.stepError);
      return;
    }
    // The core's display of each result (what it knew when the call ended) with what only the page knows.
    const parts = ev.message.parts.map((part) => (part.type === "tool_result" && r.shown[part.call_id]
      ? { ...part, display: { ...part.display, ...r.shown[part.call_id] } } : part));
    const message = { ...ev.message, parts };
    r.reply?.attachResults(message);
    r.record.addResults(message);
  }

  /**
   * A tool's result on its card as the call ends (the result part that follows carries the same, for a reload), and
   * its MCP App view, which the page keeps on that part (`display.app`).
   */
  #onToolEnd(r, ev) {
    const started = r.run.running?.get(ev.call_id);
    r.run.running?.delete(ev.call_id);
    const card = r.reply?.card(ev.call_id);
    if (ev.stopped) card?.setStatus("stopped");
    card?.setResult(ev.content, { isError: ev.is_error, durationMs: ev.duration_ms,
                                  structured: ev.structured_content, schemaProblem: ev.schema_problem,
                                  openResource: this.#resourceReader(started?.source) });
    const app = this.#appOf(started);
    if (!app) return;
    (r.shown[ev.call_id] ??= {}).app = app;
    const result = { content: ev.content ?? [], isError: Boolean(ev.is_error) };
    if (ev.structured_content !== undefined) result.structuredContent = ev.structured_content;
    if (card) this.#showApp(card, app, result);
  }

  /** The call is over: a step still open is closed (an error before its message, a crash, Stop); a failure shown. */
  #endStream(r, result, failure) {
    const error = failure ? { message: failure.message } : result?.error ?? null;
    if (r.stepOpen) {
      if (error) r.reply.showError(error);
      this.#finishStep(r, null, r.run.cancelled, error);
      return;
    }
    if (!error) return;
    const alone = !r.reply; // no step of this turn was drawn: the error is a reply of its own
    if (alone) r.reply = this.#errorView();
    r.reply.showError(error);
    if (alone || failure) r.record.failed(error);
  }

  #errorView() {
    const view = new MessageView({ role: "assistant", parts: [], status: "error" },
                                 { images: this.images, live: true, actions: this.#actionsFor({ role: "assistant" }) });
    this.transcript.append(view.el);
    this.views.push(view);
    return view;
  }

  /** An approval answered on its card: "allow" (this call), "always" (this tool of this server, kept), "deny". */
  /** The MCP App view a finished call of a server's tool gets (its tool names a `ui://` resource), or null. */
  #appOf(started) {
    const serverId = started?.source?.startsWith("mcp:") ? started.source.slice("mcp:".length) : null;
    const uri = serverId && this.apps?.viewOf(serverId, started.original_name);
    if (!uri) return null;
    return { server: serverId, uri, tool: started.original_name, arguments: started.arguments ?? {} };
  }

  /** The app view on its card, showing `result` (the call's CallToolResult). */
  #showApp(card, app, result) {
    if (!this.apps || !app?.uri) return;
    const view = new AppView({
      core: this.core, frameURL: this.apps.frameURL, serverId: app.server, uri: app.uri, tool: app.tool,
      args: app.arguments, result, theme: currentTheme(),
      askToRun: async (ev, shown) => {
        const decision = await shown.ask(ev);
        if (decision === "always") this.onAlwaysAllow(ev);
        return decision;
      },
      policyFor: () => this.apps.choicesFor(app.server),
      local: this.apps.isLocal?.(app.server) ?? false,
      onMessage: (text) => {
        this.apps.suggest(text);
        this.notify(t("app.suggested"));
      },
    });
    card.showView(view);
    view.start().catch((err) => view.fail(t("app.unavailable", { message: err.message })));
  }

  #decide(callId, decision, ask = {}) {
    if (decision === "always") this.onAlwaysAllow(ask);
    this.core.call("chat.approve", { call_id: callId, decision }).catch((err) => this.notify(err.message));
  }
}

function currentTheme() {
  const chosen = document.documentElement.dataset.theme;
  if (chosen === "light" || chosen === "dark") return chosen;
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

/** A stored message MessageView failed on: its text as plain text, under a note (SECURITY.md T-Z2). */
function unrenderable(msg) {
  let text;
  try {
    text = textOf(msg);
  } catch {
    text = ""; // not even its text can be read: the note alone says something is there
  }
  return h("li", { className: `msg ${msg?.role === "user" ? "user" : "assistant"}`, dataset: { id: msg?.id ?? "", state: "error" } },
    h("p", { className: "notice error" }, t("chat.couldNotShow")),
    h("pre", { className: "content md-plain" }, text));
}

/**
 * What each tool's server asked during the turn, and what was answered, on its card as a reload shows it
 * (display.asked): the questions the card held while open give way to that record.
 */
function showAsked(stream) {
  for (const [callId, shown] of Object.entries(stream?.shown ?? {})) {
    const card = shown.asked?.length ? stream.reply?.card(callId) : null;
    if (!card) continue;
    for (const question of card.el.querySelectorAll(":scope section.question")) question.remove();
    card.showAsked(shown.asked);
  }
}

/**
 * The path as it is drawn: one entry per bubble or reply, a reply taking with it the tool results and the later
 * steps of its turn (`after`, in order), so that one agent turn is one reply on screen.
 */
function onScreen(path) {
  const out = [];
  let reply = null; // the reply a tool result or a later step belongs to
  let afterResults = false;
  for (const msg of path) {
    if (reply && (isToolResults(msg) || (msg.role === "assistant" && afterResults))) {
      reply.after.push(msg);
      afterResults = isToolResults(msg);
      continue;
    }
    const entry = { msg, after: [] };
    out.push(entry);
    reply = msg.role === "assistant" ? entry : null;
    afterResults = false;
  }
  return out;
}

function userParts(text, images) {
  const parts = images.map((img) => ({ type: "image", data: img.data, mime_type: img.mime_type }));
  if (text) parts.unshift({ type: "text", text });
  return parts;
}

/** The assistant's part of chat.run's params (store/assistants.js): sampling, reasoning, limits, which tools. */
function runSettings(settings, tools) {
  if (!settings) return {};
  const out = {};
  if (settings.temperature !== null) out.temperature = settings.temperature;
  if (settings.max_tokens !== null) out.max_tokens = settings.max_tokens;
  if (settings.reasoning) out.reasoning = settings.reasoning;
  const limits = Object.fromEntries(Object.entries(settings.limits ?? {}).filter(([, v]) => v !== null));
  if (Object.keys(limits).length) out.limits = limits;
  const allowed = settings.tools ?? { mcp: "all", python: true };
  if (allowed.mcp !== "all" || !allowed.python) {
    out.tools = { ...tools, mcp: allowed.mcp === "all" ? tools.mcp : (tools.mcp ?? []).filter((id) => allowed.mcp.includes(id)),
                  page: allowed.python ? tools.page : (tools.page ?? []).filter((tool) => !tool.source?.startsWith("python:")) };
  }
  return out;
}

const TITLE_PROMPT = "Write a title for this conversation: at most six words, in the language of the user's " +
  "message, no quotes, no full stop. Reply with the title only.";

/** The model's title as one short line: quotes, markdown marks and a trailing full stop taken off. */
export function cleanTitle(text) {
  const line = text.trim().split("\n", 1)[0].replace(/^[#*\s"'“「]+|[*\s"'”」.。]+$/gu, "").replace(/^title:\s*/i, "");
  return line.length > 60 ? `${line.slice(0, 57)}…` : line;
}

function titleFrom(parts) {
  const text = parts.find((p) => p.type === "text")?.text ?? parts.find((p) => p.type === "document")?.name ?? "";
  const line = text.split("\n", 1)[0].trim();
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || t("nav.untitled");
}
