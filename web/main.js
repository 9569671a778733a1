// The page's entry point: boots Python in the worker (worker.js, through protocol.js) and wires the
// chat app together. The UI never waits on Python: a message sent during boot is stored at once and
// goes out when the core is ready.
//
//   web/app/settings.js      provider profiles and keys        web/app/chat.js       the conversation
//   web/app/sidebar.js       conversations, search, export     web/app/tools_panel.js MCP + Python tools
//   web/app/composer.js      message box, images, shortcuts    web/app/i18n.js       English / Japanese
//   web/app/chat_settings.js the chat's assistant and its settings
//   web/app/top_bar.js       profile and model switches        web/app/first_run.js  the setup card
//   web/app/core_status.js   the core's start-up, shown        web/sandbox/          the code interpreter
//   web/store/ (IndexedDB)   web/render/ (markdown)            web/app/oauth.js      MCP OAuth redirects
//   web/app/traffic.js       an MCP server's traffic, inspected and exported
//   web/app/router.js        each conversation's address (#/c/<id>), Back/Forward
//   web/mcp_app/             MCP App views: their frame, policy and bridge
//   web/app/voice.js         dictation, recorded clips, read aloud, conversation mode

import { Bus } from "./app/bus.js";
import { Chat } from "./app/chat.js";
import { ChatSettings } from "./app/chat_settings.js";
import { PromptLibrary } from "./app/prompt_library.js";
import { byId, h } from "./app/dom.js";
import { messageOf } from "./app/error_notice.js";
import { handleOAuthRedirect } from "./app/oauth.js";
import { Composer } from "./app/composer.js";
import { ComparePicker } from "./app/compare.js";
import { KeyPrompt } from "./app/key_prompt.js";
import { ScrollFollower } from "./app/follow.js";
import { FocusMemory } from "./app/focus.js";
import { ImageHostsList } from "./app/image_hosts.js";
import { applyTranslations, language, LANGUAGES, setLanguage, t } from "./app/i18n.js";
import { Notifier } from "./app/notify.js";
import { readRelayToken } from "./app/relay.js";
import { Settings } from "./app/settings.js";
import { CoreStatus } from "./app/core_status.js";
import { TopBar } from "./app/top_bar.js";
import { SetupCard } from "./app/first_run.js";
import { PackageHosts } from "./app/package_hosts.js";
import { CostMeter } from "./app/cost_meter.js";
import { CostSettingsForm } from "./app/cost_settings.js";
import { hostsOf } from "./sandbox/hosts.js";
import { pythonTool } from "./sandbox/tool.js";
import { applyTheme, themeSelect } from "./app/theme.js";
import { Router } from "./app/router.js";
import { Sidebar } from "./app/sidebar.js";
import { SyncSettings } from "./app/sync_settings.js";
import { ShareLink } from "./app/share_link.js";
import { ToolsPanel } from "./app/tools_panel.js";
import { TrafficInspector } from "./app/traffic.js";
import { startVoice } from "./app/voice.js";
import { createAgent } from "./client/orizuru.js";
import { ImagePolicy } from "./render/markdown.js";
import { mermaidMarkup } from "./render/diagrams.js";
import { ArtifactPanel } from "./artifacts/panel.js";
import { reloadCostSettings } from "./app/prices.js";
import * as keys from "./store/keys.js";
import { openStore } from "./store/index.js";
import { PREFS, prefs } from "./store/prefs.js";

/**
 * @typedef {import("./client/orizuru.js").Agent} Agent
 * @typedef {import("./store/transcripts.js").Store} Store
 * @typedef {import("./app/notify.js").Notify} Notify
 * @typedef {import("./client/orizuru.js").Boot & {pdfWorker: string, mcpAppFrame: string,
 *   sandbox: {frame: string, worker: string, wheels: string[], tools: string[], python: string}}} PageBoot
 *   the page's boot.json (build.py): the core's boot, the sandbox's files and the MCP App views' frame
 * @typedef {ReturnType<typeof codeInterpreter>["interpreter"]} CodeInterpreter
 * @typedef {{boot: PageBoot, bus: Bus, core: Agent, store: Store, settings: Settings, tools: ToolsPanel,
 *   interpreter: CodeInterpreter, notify: Notify, readyOrFail: Promise<unknown>}} ChatParts
 */

// A sign-in popup coming back from an MCP server's authorization server is handed to the page that
// opened it (web/app/oauth.js) and closes: it never boots a second app.
if (!handleOAuthRedirect()) await main();

async function main() {
  /** @type {PageBoot} */
  const boot = JSON.parse(byId("boot").textContent ?? "");
  const relayToken = readRelayToken(); // read first: it leaves the address bar at once
  applyTheme(prefs.get(PREFS.theme));
  applyTranslations();
  const bus = new Bus();
  const { core, ready, readyOrFail, coreReadyNow } = startCore(boot);
  const notifier = new Notifier(byId("toasts"));
  /** @type {Notify} */
  const notify = (message, options = {}) => {
    if (options.settings) Object.assign(options, { action: { label: t("top.openSettings"), run: () => settings.open() },
                                                    error: true, kind: "settings" }); // goes once a profile is in use
    notifier.show(message, options);
  };
  const store = await openStore({ onError: (/** @type {{message: string}} */ { message }) =>
    notify(message, { error: true, timeout: 0 }) });
  const settings = new Settings({ core, keys, notify, profiles: store.profiles, coreReadyNow,
                                  onChange: (profile) => bus.emit("profiles", profile) });
  const { interpreter } = codeInterpreter(boot, notify);
  const tools = new ToolsPanel({ core, ready: readyOrFail, coreReadyNow, settings, relayToken, notify, interpreter,
                                 inspector: new TrafficInspector({ core, notify }),
                                 onAttach: (resource, _contents, parts) => bus.emit("attach", { resource, parts }) });
  const parts = { boot, bus, core, store, settings, tools, interpreter, notify, readyOrFail };
  const { chat, assistant } = makeChat(parts);
  const sidebar = new Sidebar({ store, chat, notify, validateFocus: focusValidator(core, readyOrFail) });
  const router = new Router({ store, chat, notify, onShared: (hash) => void links.show(hash) });
  const library = new PromptLibrary({ store, notify, draft: () => byId("message", HTMLTextAreaElement).value });
  const compare = new ComparePicker({
    button: h("button", { type: "button", className: "compare-open", dataset: { i18n: "compare.button", i18nTitle: "compare.buttonHint" },
                          title: t("compare.buttonHint"), "aria-pressed": "false", "aria-controls": "compare-picker" },
              t("compare.button")),
    panel: byId("compare-picker"), profiles: () => settings.profiles, active: () => settings.active });
  assistant.bar.append(library.button, compare.button); // "Prompts" and "Compare" beside "Chat settings"
  const composer = new Composer({
    chat, notify, onNewChat: () => sidebar.newChat(), compare: () => compare.choices(),
    prompts: () => [...library.slashPrompts(), ...tools.prompts()],
    getPrompt: (id, name, args) => core.call("mcp.get_prompt", { id, name, arguments: args }),
  });
  const voice = startVoice({ core, settings, composer, notify, ready: readyOrFail });
  const setup = new SetupCard({ element: byId("setup-card"), settings, ready: readyOrFail,
                                onDone: () => byId("message").focus() });
  const topBar = new TopBar({ settings, core, coreReadyNow, ready, notify, openTools: () => tools.open(),
                              onProfile: (active) => bus.emit("profile", active) });
  const sync = new SyncSettings({ element: byId("sync-settings"), store, notify, sessionKeys: keys.sessionKeys, relayToken,
    onSettings: async () => { // another device's profiles, assistants, prompts or MCP servers: shown at once
      await settings.load();
      await assistant.load();
      await library.load();
      tools.reloadSaved();
      reloadCostSettings();
      voice.showSettings();
    } });
  const links = new ShareLink({ store, chat, sync, notify });
  byId("export-one-link").addEventListener("click", () => {
    byId("export-dialog", HTMLDialogElement).close();
    void links.create();
  });
  bus.on("profiles", () => compare.refresh());
  listen({ bus, chat, sidebar, router, composer, tools, assistant, topBar, setup, notifier, store, interpreter, voice });
  settingsControls();
  await start({ settings, assistant, library, sidebar, router, setup, readyOrFail });
  await sync.load(); // after the first screen: a sync on from before runs behind it
}

/**
 * The core (Python in a worker) through the same library any page can embed (web/client/orizuru.js).
 * @param {PageBoot} boot
 */
function startCore(boot) {
  const status = new CoreStatus({ text: byId("core-status-text"), progress: byId("core-progress", HTMLProgressElement),
                                  root: document.documentElement });
  /** @type {Record<string, ((...data: unknown[]) => void) | undefined>} */
  const logs = { debug: console.debug, info: console.info, warn: console.warn, error: console.error,
                 log: console.log };
  const core = createAgent({
    boot, site: document.baseURI,
    onStage: (stage, detail) => status.stage(stage, /** @type {{done?: number, count?: number} | null} */ (detail)),
    onLog: (level, message) => (logs[level] ?? console.log)(`[core] ${message}`),
  });
  const ready = core.ready.then((info) => (status.ready(info), info));
  const readyOrFail = ready.catch((err) => {
    status.failed(err);
    throw new Error(t("boot.failed", { stage: t(`boot.${err.stage}`) ?? err.stage, message: err.message }));
  });
  readyOrFail.catch(() => {}); // shown in the status line; each waiting turn reports it too
  return { core, ready, readyOrFail, coreReadyNow: () => core.isReady };
}

/**
 * The code interpreter (web/sandbox/): its code and its sandbox load when the model first runs code or the user's
 * Python tools are first defined or called. Its package hosts (none by default) are chosen in Settings.
 */
/**
 * @param {PageBoot} boot
 * @param {Notify} notify
 */
function codeInterpreter(boot, notify) {
  /** @type {Promise<import("./sandbox/interpreter.js").Interpreter> | null} */
  let sandbox = null;
  const packages = new PackageHosts({ element: byId("package-hosts"),
                                      onChange: (value) => sandbox?.then((s) => s.configure(value)) });
  const load = () => (sandbox ??= import("./sandbox/interpreter.js").then(({ Interpreter }) => {
    const made = new Interpreter({ pyodide: boot.pyodide, frameScript: boot.sandbox.frame,
                                   workerScript: boot.sandbox.worker, python: boot.sandbox.python,
                                   wheels: boot.sandbox.wheels,
                                   toolWheels: boot.sandbox.tools,
                                   maxNotebooks: Number(prefs.get(PREFS.interpreterNotebooks)) || undefined,
                                   leftMs: Number(prefs.get(PREFS.interpreterLeftMinutes)) * 60_000 || undefined });
    made.configure(packages.value);
    made.shown(shownConversation);
    return made;
  }));
  /** @type {string | null} */
  let shownConversation = null; // the conversation on screen: the others' notebooks close once left a while
  const timeoutMs = () => (Number(prefs.get(PREFS.interpreterTimeout)) || 60) * 1000;
  /**
   * @typedef {import("./sandbox/interpreter.js").Interpreter} Interpreter
   * @typedef {Parameters<Interpreter["run"]>[2]} RunOptions
   * @typedef {Parameters<Interpreter["callTool"]>[3]} CallOptions
   */
  const interpreter = {
    /** @param {string} [api]   code mode: the tools its code may call, as Python (web/sandbox/code_mode.js) */
    tool: (api) => pythonTool({ packages: hostsOf(packages.value).length > 0, pyodide: Boolean(packages.value.pyodide), api }),
    /** @type {(session: string, code: string, options?: RunOptions) => ReturnType<Interpreter["run"]>} */
    run: async (session, code, options) => {
      const result = await (await load()).run(session, code, { ...options, timeoutMs: timeoutMs() });
      if (result.restarted === "closed") notify(t("interpreter.restarted")); // the model reads it in the result
      return result;
    },
    /** @param {string | null} session */
    shown: (session) => {
      shownConversation = session;
      sandbox?.then((s) => s.shown(session));
    },
    // The user's Python tools (Tools → Python tools) run in a sandbox of their own, never in the core's worker.
    /** @type {(set: string, source: string) => ReturnType<Interpreter["defineTools"]>} */
    defineTools: async (set, source) => (await load()).defineTools(set, source, { timeoutMs: timeoutMs() }),
    /** @type {(set: string, source: string) => Promise<unknown>} */
    useTools: (set, source) => load().then((s) => s.useTools(set, source)),
    /** @type {(set: string, name: string, args: unknown, options?: CallOptions) => ReturnType<Interpreter["callTool"]>} */
    callTool: async (set, name, args, options) => (await load()).callTool(set, name, args, { ...options, timeoutMs: timeoutMs() }),
    /** @param {string} session */
    warm: (session) => load().then((s) => s.warm(session), () => {}),
    /** @param {string} session */
    reset: async (session) => sandbox && (await sandbox).reset(session), // nothing to reset before the first run
  };
  return { interpreter };
}

/**
 * The conversation on screen, with what it draws with: focus memory, the chat's assistant, images, MCP App views.
 * @param {ChatParts} parts
 */
function makeChat({ boot, bus, core, store, settings, tools, interpreter, notify, readyOrFail }) {
  // Remote images (web/render/images.js): the hosts the user chose "Always load images from <host>" for are kept
  // here; a single image the user loads is not kept (it asks again after a reload).
  const images = new ImagePolicy(prefs.getJSON(PREFS.imageHosts, []),
                                 (/** @type {string[]} */ hosts) => prefs.setJSON(PREFS.imageHosts, hosts));
  new ImageHostsList({ images, list: byId("image-hosts"), empty: byId("image-hosts-none") });
  const focus = new FocusMemory({ core, store, notify, element: byId("focus-aside"), t, locale: () => language(),
                                  classifier: (target) => settings.classifierFor(/** @type {import("./app/settings.js").Target} */ (target)),
                                  ready: readyOrFail });
  const assistant = new ChatSettings({ store, notify, element: byId("chat-settings-area"),
                                       vendor: () => settings.active?.vendor ?? null,
                                       resetNotebook: (conversationId) => interpreter.reset(conversationId) });
  const keyPrompt = new KeyPrompt({ settings, openSettings: () => settings.open() });
  // What the conversation cost and how full the next request is (web/app/cost_meter.js); prices in Settings → Costs.
  const box = byId("message", HTMLTextAreaElement);
  const costs = new CostMeter({ element: byId("cost-meter"), draft: () => box.value,
                                focusOn: () => assistant.effective()?.focus ?? focus.enabled });
  box.addEventListener("input", () => costs.render());
  byId("focus-aside").addEventListener("change", () => costs.render()); // its switch: what a full window does
  const costForm = new CostSettingsForm({ element: byId("cost-settings"), model: () => settings.active?.model ?? "" });
  bus.on("profile", () => costForm.render()); // the model in use is the one offered for a price
  const frameURL = new URL(boot.mcpAppFrame, document.baseURI).href;
  // Artifacts (web/artifacts/) are drawn in the MCP App views' frame: the same sandbox.
  const artifacts = new ArtifactPanel({ element: byId("artifact-panel"), frameURL, notify,
                                        mermaidMarkup });
  const chat = new Chat({
    core, store, images, notify, focus, assistant, interpreter, costs,
    autoTitle: () => prefs.get(PREFS.autoTitle) !== "off",
    samplingLimits: () => tools.samplingLimits(),
    coreReady: readyOrFail,
    transcript: byId("transcript"),
    follow: new ScrollFollower(byId("transcript"), byId("jump-latest")),
    provider: (/** @type {string | null} */ profileId) => settings.target(profileId), // a Compare column's, an assistant's
    tools: () => tools.runParams(),
    onAlwaysAllow: (/** @type {Parameters<ToolsPanel["alwaysAllow"]>[0]} */ ask) => tools.alwaysAllow(ask),
    // MCP App views (web/mcp_app/): their frame is a page of the site's own, beside index.html.
    artifacts,
    apps: { frameURL,
            viewOf: (/** @type {string} */ id, /** @type {string} */ tool) => tools.viewOf(id, tool),
            choicesFor: (/** @type {string} */ id) => tools.choicesFor(id),
            isLocal: (/** @type {string} */ id) => tools.isLocal(id),
            suggest: (/** @type {string} */ text) => bus.emit("suggest", text) },
    onChange: (/** @type {import("./app/bus.js").Conversation | null} */ conversation) =>
      bus.emit("conversation", conversation),
    onRunning: (/** @type {boolean} */ running) => bus.emit("running", running),
    onText: (/** @type {string} */ text) => bus.emit("reply_text", text),
    // a failed reply's: its profile, the field to fix
    openSettings: (/** @type {Parameters<Settings["open"]>[0]} */ where) => settings.open(where),
    askKey: (/** @type {import("./app/settings.js").Profile} */ profile) => keyPrompt.ask(profile),
    connected: (/** @type {string} */ serverId) => tools.connected(serverId),
  });
  // A host removed in Settings: its images go back behind placeholders (a running turn redraws when it ends).
  images.subscribe((/** @type {{removed?: unknown}} */ { removed }) => {
    if (removed && !chat.running) chat.render();
  });
  return { chat, assistant };
}

/**
 * focus.validate for an imported focus state, as the sidebar's import needs it.
 * @param {Agent} core
 * @param {Promise<unknown>} readyOrFail
 */
function focusValidator(core, readyOrFail) {
  return async (/** @type {unknown} */ state) => {
    await readyOrFail;
    try {
      const valid = /** @type {import("./types/contract").FocusExport} */ (await core.call("focus.validate", {
        state: /** @type {Record<string, unknown>} */ (state) })); // checked there: that is the call's point
      return /** @type {Record<string, unknown>} */ (valid.state);
    } catch (err) {
      throw new Error(messageOf(err), { cause: err }); // "focus state: <field>: <problem>" (code invalid_params)
    }
  };
}

/**
 * Who reacts to what: every part exists by now, so none holds a callback into a part made after it.
 * @param {{bus: Bus, chat: Chat, sidebar: Sidebar, router: Router, composer: Composer, tools: ToolsPanel,
 *   assistant: ChatSettings, topBar: TopBar, setup: SetupCard, notifier: Notifier, store: Store,
 *   interpreter: CodeInterpreter, voice: ReturnType<typeof startVoice>}} parts
 */
function listen({ bus, chat, sidebar, router, composer, tools, assistant, topBar, setup, notifier, store, interpreter,
                  voice }) {
  bus.on("conversation", (conversation) => {
    router.shown(conversation); // the address names the conversation on screen (#/c/<id>)
    interpreter.shown(conversation?.id ?? null); // the others' notebooks close once left a while
    sidebar.markActive(conversation?.id ?? null);
    sidebar.refresh().catch((err) => composer.notify(messageOf(err), { error: true }));
  });
  bus.on("running", (running) => {
    composer.setRunning(running);
    voice.conversation.running(running); // conversation mode: read the rest, then listen again
  });
  bus.on("reply_text", (text) => voice.conversation.text(text));
  bus.on("attach", ({ resource, parts }) => composer.attachResource(resource, parts));
  bus.on("suggest", (text) => composer.insert(text));
  bus.on("profiles", (saved) => {
    topBar.showProfiles(); // which tells "profile" in turn
    if (saved) notifier.clear("settings"); // "Choose a provider and model in Settings first" is stale now
  });
  bus.on("profile", (active) => {
    tools.profileChanged(active);
    chat.showCosts(); // the next request's model: its prices and context window
    assistant.render(); // the reasoning and temperature fields follow the vendor
    if (active) setup.hide();
    else if (document.documentElement.dataset.ui === "ready") setup.show(); // the last profile was deleted: the card again
  });
  store.subscribe((change) => { // another tab's change, or what sync brought (one notice a burst)
    sidebar.refresh().catch(() => {});
    const ids = "conversation_ids" in change ? change.conversation_ids : [change.conversation_id];
    if (chat.conversation && ids.includes(chat.conversation.id) && !chat.running) chat.refresh().catch(() => {});
  });
}

/** Settings' own controls that belong to no part: the language, the theme, naming new conversations. */
function settingsControls() {
  const languageSelect = byId("language", HTMLSelectElement);
  languageSelect.replaceChildren(...Object.entries(LANGUAGES).map(([code, name]) => h("option", { value: code }, name)));
  languageSelect.value = language();
  languageSelect.addEventListener("change", () => setLanguage(languageSelect.value));
  themeSelect(byId("theme", HTMLSelectElement));
  const autoTitle = byId("auto-title", HTMLInputElement);
  autoTitle.checked = prefs.get(PREFS.autoTitle) !== "off";
  autoTitle.addEventListener("change", () => prefs.set(PREFS.autoTitle, autoTitle.checked ? "on" : "off"));
}

/**
 * What the page reads before it is usable, in order, then the first-run decision.
 * @param {{settings: Settings, assistant: ChatSettings, library: PromptLibrary, sidebar: Sidebar, router: Router,
 *   setup: SetupCard, readyOrFail: Promise<unknown>}} parts
 */
async function start({ settings, assistant, library, sidebar, router, setup, readyOrFail }) {
  await settings.load();
  await assistant.load();
  await library.load();
  await sidebar.refresh();
  await router.start(); // the conversation the address names (a reload, a bookmark, Back/Forward)
  if (!settings.active) setup.show();
  performance.mark("ui-usable"); // read by bench/boot: handlers are attached, the message box works
  document.documentElement.dataset.ui = "ready"; // the first-run decision is made (tests wait for it)
  // Installable, boots offline. Registered once the core is up (or failed): the worker's install downloads the
  // whole site for offline use, which on a first visit would otherwise share the link with the core's start.
  readyOrFail.finally(() => import("./store/pwa.js").then(({ registerServiceWorker }) => registerServiceWorker()));
}
