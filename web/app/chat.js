/**
 * The conversation on screen and the turns it runs.
 *
 *   const chat = new Chat({core, coreReady, store, transcript, images, provider, tools, follow, onChange, notify})
 *   await chat.open(conversationId) | chat.newChat()
 *   await chat.send(text, images, extraParts)   {ok: true, done} once the user message is stored (the reply then
 *                                        runs: chat.run, every event to the store), or {ok: false, reason}: nothing
 *                                        stored or sent, the caller keeps the words (extraParts: attached
 *                                        documents, an MCP resource's parts)
 *   await chat.compare(text, images, extraParts, choices)   the same, to 2–4 models at once (web/app/compare.js): their
 *                                        replies stream side by side, each a branch of the message, each with its Stop;
 *                                        the person picks the one the conversation continues with, or has one model
 *                                        merge them (its answer is another branch, the one that continues)
 *   chat.stop()                           cancels the running call (WorkerClient.cancel); every column of a Compare
 *   chat.turn                             the turn's state machine (web/app/turn.js); chat.running its data while
 *                                        a reply streams or waits on a question
 *
 * `provider()` returns {provider: {vendor, api_key?, base_url?}, model, vendor} for the next turn or
 * throws an Error saying what is missing; one with a `profile` (settings.js MissingKeyError) is a key
 * this tab lacks, and `askKey(profile)` asks for it (true: the key is there now): a turn asks before
 * it starts, and `await chat.ready()` lets the composer ask before it empties the box.
 * `connected(serverId)` resolves once that MCP server's connection at load has settled: whether it is connected (a
 * task a reload left behind is followed on it: #resumeTasks).
 * `tools()` resolves to {tools, policy} for chat.run; `onAlwaysAllow(approvalEvent)` is told when the user
 * presses "Always allow this tool" on a card (the Tools panel keeps the choice for later turns).
 * `apps` ({frameURL, viewOf(serverId, tool), choicesFor(serverId), isLocal(serverId), suggest(text)}) draws MCP App views: a tool
 * whose server names a `ui://` view for it gets that view on its card (web/mcp_app/view.js), kept on its result
 * part (`display.app`: server, uri, tool, arguments) so it is drawn again after a reload.
 * `artifacts` (web/artifacts/panel.js) is the artifact panel: with it, the model gets the page tool `artifact`, whose
 * documents are kept on their results (`display.artifact`; the same id again is a new version) and open in the
 * panel as they come, and a reply's HTML, SVG, mermaid and markdown blocks and the code's pictures and files get
 * an Open button.
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
 *
 * `costs` (web/app/cost_meter.js) shows what the conversation cost and how full the next request is
 * (chat.showCosts()); a turn whose request would pass a spending cap is refused before anything is stored or sent,
 * and a run that reaches one is stopped before its next request.
 */

import { filesOf, keptFiles, PYTHON_TOOL, toolContent } from "../sandbox/tool.js";
import { shownTheme } from "./theme.js";
import { ARTIFACT_TOOL, artifactOf, artifactOfCode } from "../artifacts/artifact.js";
import { apiText } from "../sandbox/code_mode.js";
import { codeCaller } from "./code_calls.js";
import { h } from "./dom.js";
import { AppView } from "../mcp_app/view.js";
import { askUser } from "./server_asks.js";
import { hasText, onLanguageChange, t } from "./i18n.js";
import { STREAM_EVENT_TYPES } from "../contract.js";
import { MessageView } from "./message_view.js";
import { ReplyRecord } from "./reply_record.js";
import { ConversationGoneError } from "../store/transcripts.js";
import { Turn } from "./turn.js";
import { CompareView, mergeRequest } from "./compare.js";
import { ConversationTree, isToolResults, textOf, toWireMessages } from "./tree.js";
import { markHit } from "./search_hit.js";
import { MissingKeyError } from "./settings.js";
import { messageOf } from "./error_notice.js";
import { followTasks, pendingTasks } from "./task_resume.js";

/**
 * @typedef {import("../types/contract").CoreEvent} CoreEvent
 * @typedef {import("../types/contract").Part} Part
 * @typedef {import("../types/contract").ErrorInfo} ErrorInfo
 * @typedef {import("../types/contract").ApprovalEvent} ApprovalEvent
 * @typedef {import("../types/contract").ToolStartEvent} ToolStartEvent
 * @typedef {import("../types/contract").ToolEndEvent} ToolEndEvent
 * @typedef {import("../types/contract").PageToolEvent} PageToolEvent
 * @typedef {import("../types/contract").MessageEvent} CoreMessageEvent
 * @typedef {import("../types/contract").AppViewRef} AppViewRef
 * @typedef {import("../types/contract").Params<"chat.run">} RunParams
 * @typedef {import("../types/contract").RunTools} RunTools
 * @typedef {import("../types/contract").Result<"chat.run">} RunResult
 * @typedef {import("../store/transcripts.js").StoredMessage} StoredMessage
 * @typedef {import("../store/transcripts.js").Conversation} Conversation
 * @typedef {import("../types/contract").Message} Message
 * @typedef {import("./settings.js").Target} Target
 * @typedef {import("./settings.js").Profile} Profile
 * @typedef {import("./server_asks.js").PageDisplay} PageDisplay
 * @typedef {import("./server_asks.js").AskingRun} AskingRun
 * @typedef {import("../mcp_app/view.js").Decision} Decision
 * @typedef {import("../mcp_app/view.js").CallToolResult} CallToolResult
 * @typedef {import("../sandbox/interpreter.js").Interpreter} SandboxInterpreter
 * @typedef {ReturnType<typeof import("../store/assistants.js").effectiveSettings>} AssistantSettings
 * @typedef {import("./tool_card.js").ToolCard} ToolCard
 * @typedef {import("../artifacts/artifact.js").Artifact} Artifact
 * @typedef {import("../sandbox/code_mode.js").Entry} CodeTool
 */
/**
 * The code interpreter as the chat uses it (main.js wraps web/sandbox/interpreter.js, loaded on first use).
 * @typedef {{tool?: (api?: string) => import("../types/contract").PageTool,
 *            run: (session: string, code: string, options: Parameters<SandboxInterpreter["run"]>[2])
 *              => ReturnType<SandboxInterpreter["run"]>,
 *            callTool: (set: string, name: string, args: unknown, options: Parameters<SandboxInterpreter["callTool"]>[3])
 *              => ReturnType<SandboxInterpreter["callTool"]>,
 *            warm?: (session: string) => unknown}} CodeInterpreter
 */
/**
 * MCP App views: the frame's page, a server's tool's `ui://` view, the user's choices for a server, whether it is
 * on this machine, and where a view's suggested message goes (the composer).
 * @typedef {{frameURL: string, viewOf: (serverId: string, tool: string) => string | null,
 *            choicesFor: (serverId: string) => import("../mcp_app/view.js").ServerChoices,
 *            isLocal?: (serverId: string) => boolean, suggest: (text: string) => void}} Apps
 */
/**
 * What a Chat is made with (the top of this file says what each is for).
 * @typedef {{core: import("../client/orizuru.js").Agent, coreReady: Promise<unknown>,
 *            store: import("../store/transcripts.js").Store, transcript: HTMLElement,
 *            images: import("../render/images.js").ImagePolicy,
 *            provider: (profileId: string | null) => Target,
 *            tools: () => Promise<{tools: RunTools, policy: NonNullable<RunParams["policy"]>, code?: CodeTool[]}>,
 *            follow: import("./follow.js").ScrollFollower,
 *            focus?: import("./focus.js").FocusMemory | null,
 *            assistant?: import("./chat_settings.js").ChatSettings | null,
 *            autoTitle?: () => boolean, onChange?: (conversation: Conversation | null) => void,
 *            interpreter?: CodeInterpreter | null, samplingLimits?: (() => Record<string, number>) | null,
 *            onRunning?: (running: boolean) => void, onText?: (text: string) => void,
 *            notify?: import("./notify.js").Notify,
 *            openSettings?: (where?: Parameters<import("./settings.js").Settings["open"]>[0]) => void,
 *            askKey?: (profile: Profile) => Promise<boolean>,
 *            connected?: (serverId: string) => Promise<boolean>,
 *            onAlwaysAllow?: (ask: Partial<ApprovalEvent>) => void, apps?: Apps | null,
 *            costs?: import("./cost_meter.js").CostMeter | null,
 *            artifacts?: Pick<import("../artifacts/panel.js").ArtifactPanel, "show" | "close"> | null}} ChatOptions
 */
/**
 * The running turn's data: the turn's (turn.js) and what the chat keeps on it while it runs: the stream, each
 * running tool's start, the code runs to abort on Stop, and the server's questions (server_asks.js).
 * A Compare's turn runs one chat.run per column, each with a ChatRun of its own (`group`: the turn's columns).
 * @typedef {import("./turn.js").TurnRun & Omit<AskingRun, "running"> & {stream?: Stream, running?: Map<string, ToolStartEvent>,
 *            interpreting?: Set<() => void>, group?: ChatRun[]}} ChatRun
 */
/**
 * One turn as it streams (#stream): its reply on screen, whether a step of it is open, that step's usage and error,
 * what only the page knows of each call's card, and each step's words; `runId` names its chat.run to the core (its
 * approvals and page tools are answered with it), `column` is where a Compare column's reply is drawn (else the
 * transcript), `label` the model that column asks (its approvals say so), `asking` whether it waits on the person.
 * @typedef {{run: ChatRun, conversationId: string, target: Target, messages: Message[], interpret: boolean,
 *            record: ReplyRecord, reply: MessageView | null, stepOpen: boolean,
 *            usage: import("../types/contract").Usage | null, stepError: ErrorInfo | null, shown: PageDisplay,
 *            texts: string[], runId: string, column: HTMLElement | null, label: string | null, asking: boolean,
 *            code?: CodeTool[]}} Stream   code: the tools the code of its python calls may call
 * @typedef {import("./compare.js").CompareChoice} CompareChoice
 * @typedef {{target: Target, replies: {label: string, text: string}[]}} Merge   a merge of a Compare's replies
 */
/** @typedef {{ok: true, done: Promise<void>} | {ok: false, reason: string | null}} Outcome   a send's answer */

// The model's stream events (pycore/contract.py): each belongs to the reply's current step and is stored with it.
const STREAM_EVENTS = new Set(STREAM_EVENT_TYPES);
// The events that ask the person something: the turn waits on them (turn.js `awaiting`).
const ASKING = new Set(["approval", "elicitation", "sampling"]);

export class Chat {
  /** @type {Map<string, Set<string>>} conversation id -> the sources its notebook's code has read (code mode) */
  #codeReads = new Map();

  /** @param {ChatOptions} options */
  constructor({ core, coreReady, store, transcript, images, provider, tools, follow, focus = null, assistant = null,
                autoTitle = () => false, onChange = () => {}, interpreter = null, samplingLimits = null,
                onRunning = () => {}, onText = () => {}, notify = () => {}, openSettings = () => {},
                askKey = async () => false, connected = async () => false,
                onAlwaysAllow = () => {}, apps = null, costs = null, artifacts = null }) {
    onLanguageChange(() => this.render());
    // Each one a field of its own, for the type checker (an Object.assign declares none).
    this.core = core;
    this.coreReady = coreReady;
    this.store = store;
    this.transcript = transcript;
    this.images = images;
    this.provider = provider;
    this.tools = tools;
    this.follow = follow;
    this.focus = focus;
    this.assistant = assistant;
    this.autoTitle = autoTitle;
    this.interpreter = interpreter;
    this.samplingLimits = samplingLimits;
    this.apps = apps;
    this.costs = costs;
    this.artifacts = artifacts;
    // A reply's code block's Open (web/render/code_blocks.js): that block, alone, in the panel.
    transcript.addEventListener("artifact-open", (ev) => {
      const { language, source } = /** @type {CustomEvent<{language: string, source: string}>} */ (ev).detail;
      const artifact = artifactOfCode(language, source);
      if (artifact) this.artifacts?.show([artifact]);
    });
    this.onChange = onChange;
    this.onRunning = onRunning;
    this.onText = onText; // the reply's words as they stream (conversation mode reads them aloud)
    this.notify = notify;
    this.openSettings = openSettings;
    this.askKey = askKey;
    this.connected = connected;
    this.onAlwaysAllow = onAlwaysAllow;
    /** @type {Conversation | null} */
    this.conversation = null;
    /** @type {ConversationTree<StoredMessage>} */
    this.tree = new ConversationTree();
    /** @type {MessageView[]} */
    this.views = [];
    // The turn's state (web/app/turn.js), shown on <html data-turn> for styles and tests.
    this.turn = new Turn({ onChange: (state) => {
      document.documentElement.dataset.turn = state;
      this.onRunning(state === "streaming" || state === "awaiting");
    } });
    document.documentElement.dataset.turn = this.turn.state;
    this.opening = Promise.resolve(); // the conversation being opened: a send waits for it
    /** @type {CompareView | null} */
    this.comparing = null; // a Compare's columns on screen, until a reply is picked or the path is drawn again
    /** @type {MessageView[]} */
    this.columnViews = []; // the replies drawn in those columns
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
    this.artifacts?.close(); // another conversation's artifact stays with it
    this.focus?.show(null, null);
    this.assistant?.showFor(null);
    this.render();
    this.follow.toEnd();
    this.onChange(null);
  }

  /**
   * Open a conversation at its end, or at a search hit ({at: message id, query}: shown on its branch, marked).
   * @param {string} id
   * @param {{at?: string | null, query?: string}} [options]
   */
  open(id, options = {}) {
    const opening = this.opening.catch(() => {}).then(() => this.#open(id, options));
    this.opening = opening;
    return opening;
  }

  /**
   * @param {string} id
   * @param {{at?: string | null, query?: string}} [options]
   */
  async #open(id, { at = null, query = "" } = {}) {
    if (this.running && this.conversation?.id === id) { // on screen, its turn running (a task picked up again, too)
      const hit = at && markHit(this.transcript, at, query);
      if (hit) this.follow.reveal(hit);
      return;
    }
    if (this.running) this.stop();
    const loaded = await this.#load(id);
    if (this.conversation?.id !== id) this.artifacts?.close(); // another conversation's artifact stays with it
    this.conversation = loaded.conversation;
    this.tree = new ConversationTree(loaded.messages);
    if (loaded.conversation.current_leaf) this.#chooseLeaf(loaded.conversation.current_leaf);
    if (at && this.tree.get(at)) this.#chooseLeaf(at);
    this.focus?.show(id, /** @type {import("../types/contract").FocusState | null | undefined} */ (loaded.focus));
    this.assistant?.showFor(loaded.conversation);
    this.render();
    const hit = at && markHit(this.transcript, at, query);
    if (hit) this.follow.reveal(hit);
    else this.follow.toEnd();
    this.onChange(this.conversation);
    this.#resumeTasks(); // in the background: the tasks a reload left behind, if the path ends in them
  }

  /**
   * The path ends in a step whose MCP calls run as tasks and that has no results (a reload, a closed tab or a crash
   * ended its run): each task is followed again on its card (web/app/task_resume.js), the results are stored after
   * the step, and the turn goes on from them, as the run would have: the person started that turn and has not
   * stopped it, and the model is what reads a tool's result. It is a turn like any (Stop ends it, and cancels the
   * tasks); one tab does it (a Web Lock per step). A server that cannot be reached leaves the handles as they were,
   * said on the cards, for the next time the chat is opened.
   */
  async #resumeTasks() {
    const msg = this.tree.last();
    const handles = msg && !this.running ? pendingTasks(msg) : [];
    const conversationId = this.conversation?.id;
    if (!msg || !handles.length || !conversationId) return;
    await navigator.locks.request(`orizuru-tasks:${msg.id}`, { ifAvailable: true }, async (lock) => {
      const begun = lock && this.turn.begin();
      if (!begun?.ok) return; // another tab follows them, or a turn runs here
      const run = begun.run;
      this.turn.stored();
      const view = this.views.find((v) => v.msg.id === msg.id) ?? this.views.at(-1);
      let results = null;
      try {
        const followed = await followTasks({ core: this.core, message: msg, handles, run, card: (id) => view?.card(id),
                                             connected: (id) => this.coreReady.then(() => this.connected(id)) });
        if ("parts" in followed) {
          results = await this.store.addMessage(conversationId, { parent_id: msg.id, role: "user", parts: followed.parts });
          this.tree.add(results);
          view?.attachResults(results);
        }
      } catch (err) {
        this.notify(messageOf(err), { error: true });
      }
      // The results are kept whatever comes next; the model is asked only now (a key this tab lacks is asked for).
      const target = results && !run.cancelled && this.conversation?.id === conversationId ? await this.#target() : null;
      if (!results || !target) return this.#endTurn(run, results ? "done" : "failed", conversationId, []);
      return this.#reply(run, { conversationId, target, userMsg: results, added: false, fresh: false });
    });
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

  /** @param {string} leafId */
  #chooseLeaf(leafId) {
    for (let cur = this.tree.get(leafId); cur; cur = cur.parent_id ? this.tree.get(cur.parent_id) : undefined) {
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
    if (!this.conversation) return;
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
   * @param {{view: MessageView, id: string | null}[]} replies
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
    this.#dropCompare();
    this.transcript.replaceChildren(h("li", { className: "empty" }, t("chat.empty")));
    this.showCosts();
  }

  /** Draw the shown path again; the reader stays at the end, or on what they were reading. */
  render() {
    const place = this.follow.anchor();
    for (const view of this.views) view.destroy();
    this.views = [];
    this.#dropCompare(); // its replies are branches of the path now
    const path = this.tree.path();
    if (!path.length) return this.renderEmpty();
    /** @type {HTMLElement[]} */
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
    this.showCosts();
  }

  /** What the conversation cost and how full the next request will be, under the message box. */
  showCosts() {
    if (!this.costs) return;
    let target = null;
    try {
      target = this.#targetNow();
    } catch {
      // no vendor set up yet: the meter counts tokens only
    }
    this.costs.show(this.#meterView(target));
  }

  /**
   * The conversation as the cost meter reads it: every message (each branch was paid for), the path the next
   * request sends, and the model it goes to.
   * @param {Target | null} target
   * @returns {import("./cost_meter.js").MeterView}
   */
  #meterView(target) {
    return { messages: [...this.tree.byId.values()], path: this.tree.path(), vendor: target?.vendor,
             model: target?.model };
  }

  /**
   * For a tool of an MCP server: reads a resource link through the client, from that server (when connected).
   * @param {string | null | undefined} source
   */
  #resourceReader(source) {
    if (!source?.startsWith("mcp:")) return null;
    return async (/** @type {string} */ uri) => (await this.core.call("mcp.read_resource", { id: source.slice("mcp:".length), uri })).contents;
  }

  /**
   * What a message's buttons do (MessageView's actions): a user bubble's Edit, a reply's Regenerate and Retry.
   * @param {{role: string}} msg
   */
  #actionsFor(msg) {
    const actions = { branch: (/** @type {MessageView} */ view, /** @type {number} */ delta) =>
                        this.#switchBranch(storedOf(view), delta),
                      openResource: (/** @type {string | null | undefined} */ source) => this.#resourceReader(source),
                      showApp: (/** @type {ToolCard} */ card, /** @type {AppViewRef | null | undefined} */ app,
                                /** @type {CallToolResult} */ result) => this.#showApp(card, app, result),
                      openArtifact: this.artifacts ? (/** @type {Artifact} */ artifact) => this.#openArtifact(artifact) : undefined };
    if (msg.role === "user") return { ...actions, edit: (/** @type {MessageView} */ view) => this.#startEdit(view) };
    return { ...actions,
             regenerate: (/** @type {MessageView} */ view) => this.regenerate(storedOf(view)),
             // A failed reply's way out (web/app/error_notice.js): a retry is another reply to the same prompt.
             retry: (/** @type {MessageView} */ view) => this.regenerate(storedOf(view)),
             openSettings: (/** @type {Parameters<NonNullable<ChatOptions["openSettings"]>>[0]} */ where) =>
               this.openSettings(where) };
  }

  /**
   * @param {StoredMessage} msg
   * @param {number} delta
   */
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

  /** @param {MessageView} view */
  #startEdit(view) {
    if (this.turn.busy) return void this.notify(t("chat.busy"));
    const field = h("textarea", { className: "edit-field", "aria-label": t("chat.editField"), rows: 3 });
    field.value = textOf(view.msg);
    const msg = storedOf(view);
    const images = msg.parts.filter((p) => p.type === "image");
    const documents = msg.parts.filter((p) => p.type === "document"); // kept: the edit is of the words
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
    view.body?.replaceWith(form); // a user bubble's body: always there
    field.focus();
  }

  // ------------------------------------------------------------------ turns

  /**
   * A new user message at the end of the shown path, then a reply. Resolves once the message is stored,
   * {ok: true, done} (`done`: the whole turn), or refused, {ok: false, reason}: then nothing was stored or sent,
   * and the caller keeps the words (the reason is null when it was already said, or the person cancelled).
   * @param {string} text
   * @param {{data: string, mime_type: string}[]} [images]
   * @param {Part[]} [extraParts]
   * @returns {Promise<Outcome>}
   */
  send(text, images = [], extraParts = []) {
    return this.#start({ userParts: [...userParts(text, images), ...extraParts] });
  }

  /**
   * One message to 2–4 models at once (Compare): as send(), then each model's reply streams in its own column.
   * @param {string} text
   * @param {{data: string, mime_type: string}[]} images
   * @param {Part[]} extraParts
   * @param {CompareChoice[]} choices
   * @returns {Promise<Outcome>}
   */
  compare(text, images, extraParts, choices) {
    return this.#start({ userParts: [...userParts(text, images), ...extraParts], compare: choices });
  }

  /**
   * Another reply to the same user message, kept as a sibling branch.
   * @param {StoredMessage} assistantMsg
   */
  async regenerate(assistantMsg) {
    const prompt = this.tree.promptOf(assistantMsg);
    if (!prompt) return undefined;
    const outcome = await this.#start({ replyTo: prompt });
    if (!outcome.ok && outcome.reason) this.notify(outcome.reason);
    return outcome;
  }

  stop() {
    /** @type {ChatRun | null} */
    const run = this.running;
    if (!run) return;
    run.cancelled = true;
    for (const one of run.group ?? [run]) this.#stopRun(one);
  }

  /** @param {ChatRun} run   one call: the turn's, or a Compare column's (its own Stop) */
  #stopRun(run) {
    run.cancelled = true;
    if (run.callId != null) this.core.cancel(run.callId);
    for (const abort of run.interpreting ?? []) abort(); // code the model is running stops too
  }

  async ready() {
    return Boolean(await this.#target());
  }

  /**
   * provider(), after asking for a key this tab lacks; null (and said why) when there is none. A Compare column's
   * choice names its profile and model.
   * @param {CompareChoice | null} [choice]
   * @returns {Promise<Target | null>}
   */
  async #target(choice = null) {
    for (;;) {
      try {
        if (choice) return { ...this.provider(choice.profileId), model: choice.model };
        return this.#targetNow();
      } catch (err) {
        const profile = err instanceof MissingKeyError ? err.profile : null;
        if (!profile) this.notify(messageOf(err), { settings: true });
        if (!profile || !(await this.askKey(profile))) return null;
      }
    }
  }

  /** The vendor and model of the next turn: the assistant's profile, else the top bar's; throws what is missing. */
  #targetNow() {
    const settings = this.assistant?.effective();
    const target = this.provider(settings?.profile_id ?? null);
    return settings?.model ? { ...target, model: settings.model } : target;
  }

  /**
   * The first half of a turn, while the composer still holds the words (turn state `sending`): the vendor to
   * ask, the conversation, the person's message on disk. Anything that goes wrong here is a refusal with its
   * reason; nothing has been sent. The reply then runs in #reply, in the background.
   * A Compare (`compare`: its choices) asks each model in a column; a merge (`merge`) asks its model with the replies.
   * @param {{parentId?: string | null, userParts?: Part[] | null, replyTo?: StoredMessage | null,
   *          compare?: CompareChoice[] | null, merge?: Merge | null}} what
   * @returns {Promise<Outcome>}
   */
  async #start({ parentId, userParts: parts = null, replyTo = null, compare = null, merge = null }) {
    await this.opening.catch(() => {}); // a conversation being opened is the one this message goes to
    await this.turn.settled(); // a turn that just ended puts the transcript in order first
    const begun = this.turn.begin();
    if (!begun.ok) return { ok: false, reason: t("chat.busy") };
    /** @type {ChatRun} */
    const run = begun.run;
    let userMsg = replyTo;
    try {
      const targets = await this.#targets(compare, merge);
      const target = targets?.[0];
      if (!targets || !target) return this.#refuse(null); // said why, or the person closed the key prompt
      const capped = await this.#capPassed(targets);
      if (capped) return this.#refuse(capped);
      const conversationId = await this.#conversationFor(parts);
      if (parts) {
        // The person's words are on disk before anything is sent, and before the composer lets go of them.
        const parent = parentId === undefined ? this.tree.last()?.id ?? null : parentId;
        userMsg = await this.store.addMessage(conversationId, { parent_id: parent, role: "user", parts });
      }
      if (!userMsg) throw new Error("a turn needs the person's message or the prompt to answer again");
      this.turn.stored();
      const turn = { conversationId, target, userMsg, added: Boolean(parts), fresh: Boolean(parts) && !userMsg.parent_id };
      const done = compare
        ? this.#compareReply(run, { ...turn, targets, choices: compare })
        : this.#reply(run, { ...turn, merge });
      return { ok: true, done };
    } catch (err) {
      if (!(err instanceof ConversationGoneError)) return this.#refuse(t("chat.notStored", { message: messageOf(err) }));
      this.newChat(); // it is gone: the words go to a new chat when sent again
      return this.#refuse(t("chat.conversationGone"));
    }
  }

  /**
   * The spending cap a turn to these targets would pass, said as a refusal; null when none would.
   * @param {Target[]} targets
   */
  async #capPassed(targets) {
    for (const target of targets) {
      const capped = await this.costs?.refusal(this.#meterView(target));
      if (capped) return capped;
    }
    return null;
  }

  /**
   * The conversation on screen's id; a new chat's conversation is made now, named after the message.
   * @param {Part[] | null} parts
   */
  async #conversationFor(parts) {
    if (!this.conversation) {
      const title = parts ? titleFrom(parts) : t("nav.untitled");
      this.conversation = await this.store.createConversation({ title });
      await this.focus?.created(this.conversation.id);
      await this.assistant?.created(this.conversation.id);
      this.onChange(this.conversation);
    }
    return this.conversation.id;
  }

  /**
   * Whom the turn asks: a merge's model, each Compare column's, else the one the chat is set to; null if one is
   * missing (said why, or the person closed the key prompt).
   * @param {CompareChoice[] | null} compare
   * @param {Merge | null} merge
   * @returns {Promise<Target[] | null>}
   */
  async #targets(compare, merge) {
    if (merge) return [merge.target];
    /** @type {Target[]} */
    const targets = [];
    for (const choice of compare ?? [null]) {
      const target = await this.#target(choice);
      if (!target) return null;
      targets.push(target);
    }
    return targets;
  }

  /**
   * @param {string | null} reason
   * @returns {Outcome}
   */
  #refuse(reason) {
    this.turn.refuse(reason);
    return { ok: false, reason };
  }

  /**
   * The second half of a turn: the message shown, the reply streamed and stored, the transcript put in order.
   * @param {ChatRun} run
   * @param {{conversationId: string, target: Target, userMsg: StoredMessage, added: boolean, fresh: boolean,
   *          merge?: Merge | null}} turn
   */
  async #reply(run, { conversationId, target, userMsg, added, fresh, merge = null }) {
    /** @type {{view: MessageView, id: string | null}[]} */
    const drawn = []; // the reply this turn drew live: {view, id of its stored first step}
    /** @type {"done" | "failed"} */
    let status = "done";
    try {
      const start = await this.#replyStart(run, conversationId, userMsg, added);
      if (!start) return;
      const { messages, system, focused } = start;
      const { text, view, id } = await this.#stream(run, conversationId, userMsg,
                                                    merge ? mergeRequest(messages, merge.replies) : messages, target, system);
      if (view) drawn.push({ view, id });
      if (fresh && text && !run.cancelled && this.autoTitle()) {
        this.#nameConversation(conversationId, textOf(userMsg), text, target); // in the background
      }
      if (focused && this.focus && this.conversation?.id === conversationId) {
        this.focus.afterReply({ conversationId, message: { id: userMsg.id, text: textOf(userMsg) }, reply: text, target });
      }
    } catch (err) {
      status = "failed";
      this.notify(messageOf(err));
    } finally {
      await this.#endTurn(run, status, conversationId, drawn);
    }
  }

  /**
   * Where a reply starts: the person's message shown and the prompt made; null when the reply must not run: another
   * conversation was opened meanwhile (the message is kept in its own), or the core could not be had (said why).
   * @param {ChatRun} run
   * @param {string} conversationId
   * @param {StoredMessage} userMsg
   * @param {boolean} added
   */
  async #replyStart(run, conversationId, userMsg, added) {
    if (this.conversation?.id !== conversationId) {
      run.cancelled = true;
      return null;
    }
    this.#showTurn(userMsg, added);
    if (!(await this.#coreFor(userMsg, run))) return null;
    return this.#prompt(userMsg);
  }

  /**
   * A Compare's replies: one chat.run per column, all at once, each stored as a branch of the message. The first
   * column's reply is the one the conversation continues with until the person picks another or merges them.
   * @param {ChatRun} run
   * @param {{conversationId: string, userMsg: StoredMessage, added: boolean, fresh: boolean, targets: Target[],
   *          choices: CompareChoice[]}} turn
   */
  async #compareReply(run, { conversationId, userMsg, added, fresh, targets, choices }) {
    /** @type {ChatRun[]} */
    const group = targets.map(() => ({ cancelled: false, callId: undefined }));
    run.group = group;
    /** @type {({text: string, view: MessageView | null, id: string | null} | null)[]} */
    let results = [];
    /** @type {"done" | "failed"} */
    let status = "done";
    try {
      const start = await this.#replyStart(run, conversationId, userMsg, added);
      if (!start) return;
      const { messages, system } = start;
      const view = new CompareView({ labels: choices.map((c) => c.label), onStop: (i) => this.#stopRun(group[i]),
                                     onPick: (i) => this.#pick(results[i]?.id ?? null),
                                     onMerge: (i) => this.#merge(userMsg, targets[i], choices, results) });
      this.comparing = view;
      this.transcript.append(view.el);
      this.follow.toEnd();
      this.columnViews = [];
      results = await Promise.all(targets.map((target, i) =>
        this.#stream(group[i], conversationId, userMsg, messages, target, system,
                     { column: view.columns[i].body, label: choices[i].label })
          .catch((err) => {
            this.notify(messageOf(err));
            return null;
          })
          .finally(() => view.ended(i))));
      const first = results.find((r) => r?.text);
      if (fresh && first && !run.cancelled && this.autoTitle()) {
        this.#nameConversation(conversationId, textOf(userMsg), first.text, targets[results.indexOf(first)]);
      }
    } catch (err) {
      status = "failed";
      this.notify(messageOf(err));
    } finally {
      await this.#endCompare(run, status, conversationId, results.map((r) => ({ view: r?.view ?? null, id: r?.id ?? null })));
    }
  }

  /**
   * A Compare is over: its columns' questions closed, the replies in the tree, the first one continuing the
   * conversation (so a reload shows it, the others as branches) until the person picks or merges.
   * @param {ChatRun} run
   * @param {"done" | "failed"} status
   * @param {string} conversationId
   * @param {{view: MessageView | null, id: string | null}[]} replies   each column's reply and its stored first step
   */
  async #endCompare(run, status, conversationId, replies) {
    const ids = replies.map((reply) => reply.id);
    const group = run.group ?? [];
    for (const one of group) {
      for (const question of one.questions ?? []) question.close();
      showAsked(one.stream);
    }
    this.turn.end(run.cancelled || (group.length && group.every((one) => one.cancelled)) ? "stopped" : status);
    try {
      const view = this.comparing;
      if (this.conversation?.id === conversationId && view) {
        await this.#reload();
        const stored = ids.map((id) => Boolean(id && this.tree.get(id)));
        const first = ids.find((id, i) => id && stored[i]);
        // Each column's reply becomes its stored self (its Regenerate and Retry act on it), without branch arrows.
        replies.forEach(({ view: reply, id }) => {
          const msg = id ? this.tree.get(id) : undefined;
          if (reply && msg) reply.adopt(msg, { actions: this.#actionsFor(msg) });
        });
        if (first) this.#chooseLeaf(first);
        await this.#saveLeaf();
        view.finish(stored);
      }
    } catch (err) {
      this.notify(messageOf(err));
    } finally {
      this.turn.settle();
    }
  }

  /**
   * The person picked a Compare column's reply: the conversation continues with it, the others stay branches.
   * @param {string | null} id
   */
  async #pick(id) {
    if (this.turn.busy) return void this.notify(t("chat.busy"));
    const msg = id ? this.tree.get(id) : undefined;
    if (!msg) return;
    this.#chooseLeaf(msg.id);
    this.render();
    await this.#saveLeaf();
  }

  /**
   * One model merges a Compare's replies into one answer: another branch of the message, the one that continues.
   * @param {StoredMessage} userMsg
   * @param {Target} target
   * @param {CompareChoice[]} choices
   * @param {({text: string} | null)[]} results
   */
  async #merge(userMsg, target, choices, results) {
    const replies = results.flatMap((r, i) => (r?.text ? [{ label: choices[i].label, text: r.text }] : []));
    const outcome = await this.#start({ replyTo: userMsg, merge: { target, replies } });
    if (!outcome.ok && outcome.reason) this.notify(outcome.reason);
  }

  /**
   * The message just sent (or the prompt regenerated from) on screen, the reply to come followed.
   * @param {StoredMessage} userMsg
   * @param {boolean} added
   */
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
   * @param {StoredMessage} userMsg
   * @param {ChatRun} run
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

  /**
   * What goes to the vendor: the path (or, with focus memory on, its synthesis) and the assistant's system prompt.
   * @param {StoredMessage} userMsg
   * @returns {Promise<{messages: Message[], system: string | undefined, focused: boolean}>}
   */
  async #prompt(userMsg) {
    const settings = this.assistant?.effective() ?? null;
    const focus = this.focus;
    const focused = Boolean(focus) && (settings?.focus ?? Boolean(focus?.enabled));
    const system = settings?.system || undefined;
    if (focused && focus) return { ...(await this.#focusedPrompt(focus, userMsg, system)), focused };
    return { messages: toWireMessages(this.#pathTo(userMsg)), system, focused };
  }

  /**
   * The turn is over: open questions closed, its end announced, the transcript put in order, the next one let in.
   * @param {ChatRun} run
   * @param {"done" | "failed"} status
   * @param {string} conversationId
   * @param {{view: MessageView, id: string | null}[]} drawn
   */
  async #endTurn(run, status, conversationId, drawn) {
    for (const question of run.questions ?? []) question.close(); // the core cancelled what is still open
    showAsked(run.stream);
    this.turn.end(run.cancelled ? "stopped" : status);
    try {
      if (this.conversation?.id === conversationId) {
        await this.#settleTurn(drawn);
        await this.#saveLeaf();
        this.showCosts();
      }
    } catch (err) {
      this.notify(messageOf(err));
    } finally {
      this.turn.settle();
    }
  }

  /**
   * The code interpreter's answer to a `python` call (web/sandbox/): the code runs in the sandbox, in this
   * conversation's notebook, with the files attached so far; its result goes to the core as the tool's content.
   * Stop ends the run (and the sandbox: its variables are lost, which the result says).
   * @param {PageToolEvent} ev
   * @param {Stream} r
   */
  async #runPython(ev, { run, conversationId, messages, shown, runId, code = [], reply }) {
    const controller = new AbortController();
    const abort = () => controller.abort();
    const interpreting = (run.interpreting ??= new Set()).add(abort);
    // Code mode: the tools its code calls, each approved as the model's own calls, asked on this call's card.
    const onToolCall = code.length ? codeCaller({
      core: this.core, catalog: code, callId: ev.call_id, readFrom: this.#codeRead(conversationId),
      choicesFor: (id) => this.apps?.choicesFor(id) ?? { policy: [], trusted: false },
      ask: (ask) => reply?.card(ev.call_id)?.askForCode(ask, controller.signal) ?? Promise.resolve("deny"),
      decide: (callId, decision, ask) => this.#decide(null, callId, decision, ask) }) : null; // not a run's own ask
    /** @type {import("../sandbox/messages.js").ContentItem[]} */
    let content;
    let isError;
    try {
      const result = await this.#interpreter().run(conversationId, String(ev.arguments?.code ?? ""),
                                                { files: filesOf(messages), signal: controller.signal, tools: code,
                                                  onToolCall });
      content = toolContent(result);
      isError = Boolean(result.error);
      // The files it wrote are kept with the transcript (their bytes in OPFS) for the card to offer again.
      const files = keptFiles(result);
      if (files.length) (shown[ev.call_id] ??= {}).files = files;
    } catch (err) {
      content = [{ type: "text", text: t("chat.interpreterFailed", { message: messageOf(err) }) }];
      isError = true;
    } finally {
      interpreting.delete(abort);
      abort(); // a question its code left open (the run ended first) goes, answered no
    }
    // After Stop the core no longer waits for this answer: that refusal is expected, not news.
    await this.core.call("chat.page_tool_result", { run_id: runId, call_id: ev.call_id, content, is_error: isError })
      .catch((err) => run.cancelled || this.notify(messageOf(err), { error: true }));
  }

  /**
   * One of the user's Python tools (Tools → Python tools): it runs in the code interpreter's sandbox too.
   * @param {PageToolEvent} ev
   * @param {Stream} r
   */
  async #runUserTool(ev, { run, runId }) {
    const controller = new AbortController();
    const abort = () => controller.abort();
    const interpreting = (run.interpreting ??= new Set()).add(abort);
    /** @type {import("../sandbox/messages.js").CallResult} */
    let result;
    try {
      result = await this.#interpreter().callTool(ev.source.slice("python:".length), ev.name, ev.arguments ?? {},
                                               { callId: ev.call_id, signal: controller.signal });
    } catch (err) {
      result = { content: [{ type: "text", text: t("chat.interpreterFailed", { message: messageOf(err) }) }], is_error: true };
    } finally {
      interpreting.delete(abort);
    }
    await this.core.call("chat.page_tool_result", { run_id: runId, call_id: ev.call_id, content: result.content,
                                                    is_error: Boolean(result.is_error),
                                                    structured_content: /** @type {Record<string, unknown> | undefined} */
                                                      (result.structured_content ?? undefined) }) // the core: absent, null alike
      .catch((err) => run.cancelled || this.notify(messageOf(err), { error: true }));
  }

  /**
   * The servers whose results the code of this conversation's notebook has received (code mode): kept while the page
   * is, as its variables may hold them in later runs.
   * @param {string} conversationId
   */
  #codeRead(conversationId) {
    let read = this.#codeReads.get(conversationId);
    if (!read) this.#codeReads.set(conversationId, (read = new Set()));
    return read;
  }

  /** The code interpreter, which a page without one has not: a tool of it then fails, saying so, to the model. */
  #interpreter() {
    if (!this.interpreter) throw new Error("this page has no code interpreter");
    return this.interpreter;
  }

  /**
   * A short title for a new conversation, asked of its own model after the first exchange (Settings can
   * turn this off). It replaces the first-line title only if the user did not rename the chat meanwhile;
   * a failure leaves that title as it was.
   * @param {string} conversationId
   * @param {string} question
   * @param {string} reply
   * @param {Target} target
   */
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
      console.warn(`no title for the conversation: ${messageOf(err)}`);
      return;
    }
    const title = cleanTitle(text);
    const current = (await this.store.listConversations()).find((c) => c.id === conversationId);
    if (!title || !current || (before !== null && current.title !== before)) return;
    await this.store.renameConversation(conversationId, title);
    if (this.conversation?.id === conversationId) this.conversation.title = title;
    this.onChange(this.conversation);
  }

  /**
   * Mission, constraints and the last exchanges instead of the whole path; images sent as they are.
   * @param {import("./focus.js").FocusMemory} focus
   * @param {StoredMessage} userMsg
   * @param {string | undefined} system
   */
  async #focusedPrompt(focus, userMsg, system) {
    const synth = await focus.synthesize(textOf(userMsg), system);
    this.costs?.focused(synth); // what it left out, beside the context meter
    const messages = synth.messages;
    const images = userMsg.parts.filter((p) => p.type === "image");
    const last = messages[messages.length - 1]; // this message, as focus synthesized it
    if (images.length && last) (last.parts ??= []).push(...images);
    return { messages, system: synth.system };
  }

  /** @param {StoredMessage} msg */
  #pathTo(msg) {
    /** @type {StoredMessage[]} */
    const out = [];
    for (let cur = /** @type {StoredMessage | undefined} */ (msg); cur;
         cur = cur.parent_id ? this.tree.get(cur.parent_id) : undefined) out.unshift(cur);
    return out;
  }

  /**
   * The message just sent, on screen: added under what is there when it follows it (what is drawn stays as it is),
   * else (an edit, which starts a branch higher up) the path drawn again.
   * @param {StoredMessage} msg
   */
  #showSent(msg) {
    const ids = onScreen(this.tree.path()).map((entry) => entry.msg.id);
    const shown = this.views.map((view) => view.msg.id);
    if (!shown.length || ids.length !== shown.length + 1 || shown.some((id, i) => ids[i] !== id)) return this.render();
    const view = new MessageView(msg, { images: this.images, siblings: this.tree.siblings(msg), actions: this.#actionsFor(msg) });
    this.views.push(view);
    this.transcript.append(view.el);
  }

  /**
   * Drop the views after `msg` (a new branch starts there).
   * @param {StoredMessage} msg
   */
  #truncateAfter(msg) {
    this.#dropCompare(); // a Compare's columns give way to the reply that merges them
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
   * @param {ChatRun} run
   * @param {string} conversationId
   * @param {StoredMessage} userMsg
   * @param {Message[]} messages
   * @param {Target} target
   * @param {string} [system]
   * @param {{column?: HTMLElement | null, label?: string | null}} [where]   a Compare column's: drawn there, named so
   */
  async #stream(run, conversationId, userMsg, messages, target, system = undefined, { column = null, label = null } = {}) {
    const settings = this.assistant?.effective();
    // Code mode (web/sandbox/code_mode.js): tools offered through Python need the interpreter, whatever its switch.
    const interpret = Boolean(this.interpreter && (settings?.interpreter || codeMode(settings) !== "direct"));
    if (interpret) this.interpreter?.warm?.(conversationId); // this chat's sandbox starts while the model thinks
    const record = new ReplyRecord(this.store, conversationId, {
      parentId: userMsg.id, vendor: target.vendor, model: target.model,
      onError: (err) => this.notify(t("chat.storageError", { message: err.message })) });
    // The turn as it streams: its reply on screen, whether a step of it is open, that step's usage and error.
    // `shown`: what only the page knows of each call's card (call id -> part of a ToolDisplay: what its server asked
    // and the answers, the files the code wrote, its MCP App view), put on the result part when it arrives.
    /** @type {Stream} */
    const r = { run, conversationId, target, messages, interpret, record, reply: null, stepOpen: false, usage: null,
                stepError: null, shown: {}, texts: [], runId: crypto.randomUUID(), column, label, asking: false };
    run.stream = r; // what the turn's end puts in order (#endTurn)
    const params = { ...(await this.#runParams(r, system)), run_id: r.runId };
    const call = this.core.call("chat.run", params, (ev) => this.#onEvent(r, ev));
    run.callId = call.id;
    if (run.cancelled) this.core.cancel(call.id);
    /** @type {RunResult | null} */
    let result = null;
    /** @type {unknown} */
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

  /**
   * chat.run's params: the vendor, the path, every tool this chat may use, and the assistant's settings; the tools
   * the code of its python calls may call go on the stream (`r.code`).
   * @param {Stream} r
   * @param {string | undefined} system
   * @returns {Promise<RunParams>}
   */
  async #runParams(r, system) {
    const { target, messages, interpret } = r;
    const { tools, policy, code = [] } = await this.tools();
    const settings = this.assistant?.effective();
    const mode = codeMode(settings);
    const allowed = settings?.tools?.mcp ?? "all";
    r.code = interpret && mode !== "direct"
      ? code.filter((entry) => allowed === "all" || allowed.includes(entry.ref.server)) : [];
    // The page's own JavaScript tools (registerTool on the core's client) join the run beside MCP and the user's
    // Python tools, and the code interpreter's `python` when the chat's assistant has it on, telling the model the
    // tools its code may call.
    const pageTools = [...(tools.page ?? []), ...(this.core.pageToolDefinitions?.() ?? []),
                       ...(interpret ? [this.interpreter?.tool?.(apiText(r.code)) ?? PYTHON_TOOL] : []),
                       ...this.#artifactTool(settings)];
    /** @type {RunParams} */
    const params = { provider: target.provider, model: target.model,
                     messages: /** @type {RunParams["messages"]} */ (messages), // it ends in the person's message
                     tools: { ...tools, page: pageTools, ...(mode === "code" ? { mcp: [] } : {}) }, policy };
    if (system) params.system = system;
    Object.assign(params, runSettings(settings, params.tools ?? {}));
    if (this.samplingLimits) params.limits = { ...params.limits, ...this.samplingLimits() };
    return params;
  }

  /**
   * The `artifact` tool, when there is a panel and the chat's assistant offers it (web/artifacts/).
   * @param {AssistantSettings | undefined} settings
   */
  #artifactTool(settings) {
    return this.artifacts && settings?.artifacts !== false ? [ARTIFACT_TOOL] : [];
  }

  /**
   * A step of the turn begins: the reply (made at the first step) gets a step, the store a message.
   * @param {Stream} r
   * @returns {MessageView} the reply
   */
  #beginStep(r) {
    if (r.reply) r.reply.beginStep({ vendor: r.target.vendor, model: r.target.model });
    else {
      r.reply = new MessageView({ role: "assistant", parts: [], status: "streaming", vendor: r.target.vendor,
                                  model: r.target.model },
        { images: this.images, live: true, actions: { ...this.#actionsFor({ role: "assistant" }),
                                                      decide: (/** @type {string | undefined} */ callId,
                                                               /** @type {Decision} */ decision, /** @type {unknown} */ ask) =>
                                                        this.#decide(r.runId, callId ?? "", decision, /** @type {ApprovalEvent} */ (ask)) } });
      this.#place(r, r.reply);
    }
    r.reply.setState("streaming");
    Object.assign(r, { stepOpen: true, usage: null, stepError: null });
    r.record.beginStep();
    return r.reply;
  }

  /**
   * @param {Stream} r
   * @param {import("../types/contract").Message | null} message
   * @param {boolean} incomplete
   * @param {ErrorInfo | null} [error]
   */
  #finishStep(r, message, incomplete, error = null) {
    const status = error ? "error" : incomplete ? "interrupted" : "complete";
    const reply = r.reply;
    if (!reply) throw new Error("a step ends with no reply drawn"); // #beginStep draws it as the step opens
    reply.finishStream();
    reply.setState(status === "complete" ? "done" : status);
    r.record.finishStep({ parts: message?.parts, status, usage: r.usage, error });
    r.stepOpen = false;
    this.#countStep(r, message);
  }

  /**
   * A step's cost to the day's spend; when it reaches a spending cap and the model asked for tools (a next request
   * would follow their results), the run stops here, saying why.
   * @param {Stream} r
   * @param {import("../types/contract").Message | null} message
   */
  async #countStep(r, message) {
    const capped = await this.costs?.stepDone(r.usage, r.target.vendor, r.target.model);
    const more = (message?.parts ?? []).some((p) => p.type === "tool_call");
    if (!capped || !more || this.running !== r.run) return; // a last step: the next send is refused, saying why
    this.notify(capped, { error: true, timeout: 0 });
    this.stop();
  }

  /**
   * One event of chat.run (docs/PROTOCOL.md): to the reply on screen, its cards, and the store.
   * @param {Stream} r
   * @param {CoreEvent} ev
   */
  #onEvent(r, ev) {
    this.#noteAsking(r, ev); // a question to the person holds the turn until the stream moves on
    switch (ev.type) {
      case "step":
        if (r.stepOpen) this.#finishStep(r, null, true);
        return this.#beginStep(r);
      case "message":
        return this.#onMessage(r, ev);
      case "approval": // in a Compare, the question says which model asks
        return r.reply?.card(ev.call_id)?.askApproval(ev, { asker: r.label });
      case "tool_progress": // on the running tool's card; it is no step of the reply
        return r.reply?.card(ev.call_id)?.setProgress(ev);
      case "tool_task": // the call runs as a task on its server: its handle kept with the step, for a reload
        return r.record.keepTask(ev.handle);
      case "tool_start":
        r.reply?.card(ev.call_id)?.setStatus("running");
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

  /**
   * Whether the turn waits on the person: a question holds its run until its stream moves on (progress and a page
   * tool do not), and a Compare's turn waits while any of its columns does.
   * @param {Stream} r
   * @param {CoreEvent} ev
   */
  #noteAsking(r, ev) {
    if (ASKING.has(ev.type) && !("stage" in ev && ev.stage === "result")) r.asking = true;
    else if (ev.type !== "tool_progress" && ev.type !== "page_tool") r.asking = false;
    if ((r.run.group ?? [r.run]).some((run) => run.stream?.asking)) this.turn.awaiting();
    else this.turn.streaming();
  }

  /**
   * The model's stream (a text or reasoning delta, a tool call growing, usage, an error): its step makes and fills it.
   * @param {Stream} r
   * @param {CoreEvent} ev
   */
  #onStreamEvent(r, ev) {
    const reply = r.stepOpen && r.reply ? r.reply : this.#beginStep(r);
    if (ev.type === "usage") r.usage = ev.usage;
    if (ev.type === "error") r.stepError = ev.error;
    if (ev.type === "text_delta" && !ev.refusal) this.onText(ev.text);
    reply.onEvent(ev);
    r.record.append(ev);
  }

  /**
   * A tool of this page runs here: the user's Python tools and the code interpreter in the sandbox, else JavaScript.
   * @param {Stream} r
   * @param {PageToolEvent} ev
   */
  #onPageTool(r, ev) {
    if (ev.source?.startsWith("python:")) return this.#runUserTool(ev, r);
    if (r.interpret && ev.name === PYTHON_TOOL.name) return this.#runPython(ev, r);
    if (this.artifacts && ev.source === "page" && ev.name === ARTIFACT_TOOL.name) return this.#keepArtifact(ev, r);
    return this.core.answerPageTool(ev, r.runId).catch((err) => this.notify(messageOf(err), { error: true }));
  }

  /**
   * A step's whole message (the reply's words and calls), or the tool results that follow it.
   * @param {Stream} r
   * @param {CoreMessageEvent} ev
   */
  #onMessage(r, ev) {
    if (ev.message.role === "assistant") {
      r.texts.push(textOf({ parts: ev.message.parts ?? [] }));
      if (!r.stepOpen) this.#beginStep(r);
      this.#finishStep(r, ev.message, Boolean(ev.incomplete), r.stepError);
      return;
    }
    // The core's display of each result (what it knew when the call ended) with what only the page knows.
    const parts = (ev.message.parts ?? []).map((part) => (part.type === "tool_result" && r.shown[part.call_id]
      ? { ...part, display: { ...part.display, ...r.shown[part.call_id] } } : part));
    const message = { ...ev.message, parts };
    const before = r.reply?.artifacts.length ?? 0;
    r.reply?.attachResults(message);
    r.record.addResults(message);
    const made = r.reply?.artifacts.slice(before).at(-1);
    if (made) this.#openArtifact(made); // the model made or revised one now: it opens as it comes
  }

  /**
   * The `artifact` tool (web/artifacts/artifact.js): the document is kept on the call's result (`display.artifact`),
   * a version of the artifact with its id; the model is told which.
   * @param {PageToolEvent} ev
   * @param {Stream} r
   */
  async #keepArtifact(ev, r) {
    const { artifact, error } = artifactOf(ev.arguments);
    if (artifact) (r.shown[ev.call_id] ??= {}).artifact = artifact;
    const version = artifact ? this.#artifactVersions(artifact.id).length + 1 : 0;
    const text = artifact ? `The user sees "${artifact.title}" (id ${artifact.id}, version ${version}) in the artifact panel.`
      : `Not shown: ${error}.`;
    await this.core.call("chat.page_tool_result", { run_id: r.runId, call_id: ev.call_id, content: [{ type: "text", text }],
                                                    is_error: !artifact })
      .catch((err) => r.run.cancelled || this.notify(messageOf(err), { error: true }));
  }

  /**
   * The versions of the artifact with this id on the path shown, oldest first (each reply keeps its own in order).
   * @param {string} id
   */
  #artifactVersions(id) {
    return this.views.flatMap((view) => view.artifacts).filter((artifact) => artifact.id === id);
  }

  /**
   * One artifact in the panel: a kept one among its versions, else alone (a code block, a file the code wrote).
   * @param {Artifact} artifact
   */
  #openArtifact(artifact) {
    const versions = artifact.id ? this.#artifactVersions(artifact.id) : [];
    const index = versions.indexOf(artifact);
    if (index < 0) this.artifacts?.show([artifact]);
    else this.artifacts?.show(versions, index);
  }

  /**
   * A tool's result on its card as the call ends (the result part that follows carries the same, for a reload), and
   * its MCP App view, which the page keeps on that part (`display.app`).
   * @param {Stream} r
   * @param {ToolEndEvent} ev
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
    /** @type {CallToolResult} */
    const result = { content: /** @type {CallToolResult["content"]} */ (ev.content ?? []), isError: Boolean(ev.is_error) };
    if (ev.structured_content !== undefined) result.structuredContent = ev.structured_content;
    if (card) this.#showApp(card, app, result);
  }

  /**
   * The call is over: a step still open is closed (an error before its message, a crash, Stop); a failure shown.
   * @param {Stream} r
   * @param {RunResult | null} result
   * @param {unknown} failure
   */
  #endStream(r, result, failure) {
    const error = failure ? { message: messageOf(failure) } : result?.error ?? null;
    if (r.stepOpen) {
      if (error) r.reply?.showError(error);
      this.#finishStep(r, null, r.run.cancelled, error);
      return;
    }
    if (!error) return;
    const alone = !r.reply; // no step of this turn was drawn: the error is a reply of its own
    r.reply ??= this.#errorView(r);
    r.reply.showError(error);
    if (alone || failure) r.record.failed(error);
  }

  /** @param {Stream} r */
  #errorView(r) {
    const view = new MessageView({ role: "assistant", parts: [], status: "error" },
                                 { images: this.images, live: true, actions: this.#actionsFor({ role: "assistant" }) });
    this.#place(r, view);
    return view;
  }

  /** A Compare's columns off the screen, their replies' views (and any MCP App view on their cards) ended. */
  #dropCompare() {
    this.comparing?.el.remove();
    this.comparing = null;
    for (const view of this.columnViews.splice(0)) view.destroy();
  }

  /**
   * A turn's reply on screen: under the others, or in its Compare column (which is no view of the path).
   * @param {Stream} r
   * @param {MessageView} view
   */
  #place(r, view) {
    if (r.column) {
      r.column.append(view.el);
      this.columnViews.push(view);
      return;
    }
    this.transcript.append(view.el);
    this.views.push(view);
  }

  /**
   * The MCP App view a finished call of a server's tool gets (its tool names a `ui://` resource), or null.
   * @param {ToolStartEvent | undefined} started
   * @returns {AppViewRef | null}
   */
  #appOf(started) {
    const serverId = started?.source?.startsWith("mcp:") ? started.source.slice("mcp:".length) : null;
    const uri = started && serverId && this.apps?.viewOf(serverId, started.original_name);
    if (!started || !serverId || !uri) return null;
    return { server: serverId, uri, tool: started.original_name, arguments: started.arguments ?? {} };
  }

  /**
   * The app view on its card, showing `result` (the call's CallToolResult).
   * @param {ToolCard} card
   * @param {AppViewRef | null | undefined} app
   * @param {CallToolResult} result
   */
  #showApp(card, app, result) {
    const apps = this.apps;
    if (!apps || !app?.uri) return;
    const view = new AppView({
      core: this.core, frameURL: apps.frameURL, serverId: app.server, uri: app.uri, tool: app.tool,
      args: app.arguments, result, theme: shownTheme(),
      askToRun: async (ev, shown) => {
        const decision = await shown.ask(ev);
        if (decision === "always") this.onAlwaysAllow(ev);
        return decision;
      },
      policyFor: () => apps.choicesFor(app.server),
      local: apps.isLocal?.(app.server) ?? false,
      onMessage: (text) => {
        apps.suggest(text);
        this.notify(t("app.suggested"));
      },
    });
    card.showView(view);
    view.start().catch((err) => view.fail(t("app.unavailable", { message: messageOf(err) })));
  }

  /**
   * An approval answered on its card: "allow" (this call), "always" (this tool of this server, kept), "deny".
   * @param {string | null} runId   the chat.run that asks (null: a view's or code's call, asked outside a run)
   * @param {string} callId
   * @param {Decision} decision
   * @param {Partial<ApprovalEvent>} [ask]
   */
  #decide(runId, callId, decision, ask = {}) {
    if (decision === "always") this.onAlwaysAllow(ask);
    this.core.call("chat.approve", { run_id: runId, call_id: callId, decision }).catch((err) => this.notify(messageOf(err)));
  }
}

/**
 * A stored message MessageView failed on: its text as plain text, under a note (SECURITY.md T-Z2).
 * @param {StoredMessage | null | undefined} msg   as stored, which may be anything
 */
function unrenderable(msg) {
  let text;
  try {
    text = textOf(/** @type {StoredMessage} */ (msg)); // a throw here is caught
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
 * @param {Stream | undefined} stream
 */
function showAsked(stream) {
  for (const [callId, shown] of Object.entries(stream?.shown ?? {})) {
    const asked = shown.asked ?? [];
    const card = asked.length ? stream?.reply?.card(callId) : null;
    if (!card) continue;
    for (const question of card.el.querySelectorAll(":scope section.question")) question.remove();
    card.showAsked(asked);
  }
}

/**
 * The path as it is drawn: one entry per bubble or reply, a reply taking with it the tool results and the later
 * steps of its turn (`after`, in order), so that one agent turn is one reply on screen.
 * @param {StoredMessage[]} path
 */
function onScreen(path) {
  /** @type {{msg: StoredMessage, after: StoredMessage[]}[]} */
  const out = [];
  /** @type {{msg: StoredMessage, after: StoredMessage[]} | null} */
  let reply = null; // the reply a tool result or a later step belongs to
  let afterResults = false;
  for (const msg of path) {
    if (reply && (isToolResults(msg) || (msg.role === "assistant" && afterResults))) {
      reply.after.push(msg);
      afterResults = isToolResults(msg);
      continue;
    }
    /** @type {{msg: StoredMessage, after: StoredMessage[]}} */
    const entry = { msg, after: [] };
    out.push(entry);
    reply = msg.role === "assistant" ? entry : null;
    afterResults = false;
  }
  return out;
}

/**
 * @param {string} text
 * @param {{data: string, mime_type: string}[]} images
 * @returns {Part[]}
 */
function userParts(text, images) {
  /** @type {Part[]} */
  const parts = images.map((img) => ({ type: "image", data: img.data, mime_type: img.mime_type }));
  if (text) parts.unshift({ type: "text", text });
  return parts;
}

/**
 * The assistant's part of chat.run's params (store/assistants.js): sampling, reasoning, limits, which tools.
 * @param {AssistantSettings | null | undefined} settings
 * @param {RunTools} tools
 * @returns {Partial<RunParams>}
 */
function runSettings(settings, tools) {
  if (!settings) return {};
  /** @type {Partial<RunParams>} */
  const out = {};
  if (settings.temperature !== null) out.temperature = settings.temperature;
  if (settings.max_tokens !== null) out.max_tokens = settings.max_tokens;
  if (settings.reasoning) out.reasoning = /** @type {RunParams["reasoning"]} */ (settings.reasoning); // the efforts
  const limits = Object.fromEntries(Object.entries(settings.limits ?? {}).filter(([, v]) => v !== null));
  if (Object.keys(limits).length) out.limits = limits;
  const allowed = settings.tools ?? { mcp: "all", python: true };
  const mcp = allowed.mcp;
  if (mcp !== "all" || !allowed.python) {
    out.tools = { ...tools, mcp: mcp === "all" ? tools.mcp : (tools.mcp ?? []).filter((id) => mcp.includes(id)),
                  page: allowed.python ? tools.page : (tools.page ?? []).filter((tool) => !tool.source?.startsWith("python:")) };
  }
  return out;
}

/**
 * How the assistant offers the MCP tools (store/assistants.js `tool_mode`): directly, through code, or both.
 * @param {AssistantSettings | null | undefined} settings
 */
function codeMode(settings) {
  return settings?.tool_mode ?? "direct";
}

const TITLE_PROMPT = "Write a title for this conversation: at most six words, in the language of the user's " +
  "message, no quotes, no full stop. Reply with the title only.";

/**
 * The model's title as one short line: quotes, markdown marks and a trailing full stop taken off.
 * @param {string} text
 */
export function cleanTitle(text) {
  const line = text.trim().split("\n", 1)[0].replace(/^[#*\s"'“「]+|[*\s"'”」.。]+$/gu, "").replace(/^title:\s*/i, "");
  return line.length > 60 ? `${line.slice(0, 57)}…` : line;
}

/** @param {Part[]} parts */
function titleFrom(parts) {
  const text = parts.find((p) => p.type === "text")?.text ?? parts.find((p) => p.type === "document")?.name ?? "";
  const line = text.split("\n", 1)[0].trim();
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || t("nav.untitled");
}

/**
 * A view's message as the store keeps it: a live reply's stub is replaced by its record at the turn's end
 * (MessageView.adopt), before any of its buttons can act on it.
 * @param {MessageView} view
 * @returns {StoredMessage}
 */
function storedOf(view) {
  if (typeof view.msg.id !== "string") throw new Error("this message is not saved yet");
  return /** @type {StoredMessage} */ (view.msg);
}
