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

import { Chat } from "./app/chat.js";
import { ChatSettings } from "./app/chat_settings.js";
import { PromptLibrary } from "./app/prompt_library.js";
import { h } from "./app/dom.js";
import { handleOAuthRedirect } from "./app/oauth.js";
import { Composer } from "./app/composer.js";
import { KeyPrompt } from "./app/key_prompt.js";
import { ScrollFollower } from "./app/follow.js";
import { FocusMemory } from "./app/focus.js";
import { ImageHostsList } from "./app/image_hosts.js";
import { applyTranslations, language, LANGUAGES, onLanguageChange, setLanguage, t } from "./app/i18n.js";
import { Notifier } from "./app/notify.js";
import { readRelayToken } from "./app/relay.js";
import { Settings } from "./app/settings.js";
import { CoreStatus } from "./app/core_status.js";
import { TopBar } from "./app/top_bar.js";
import { SetupCard } from "./app/first_run.js";
import { PackageHosts } from "./app/package_hosts.js";
import { hostsOf } from "./sandbox/hosts.js";
import { pythonTool } from "./sandbox/tool.js";
import { applyTheme, themeSelect } from "./app/theme.js";
import { Router } from "./app/router.js";
import { Sidebar } from "./app/sidebar.js";
import { ToolsPanel } from "./app/tools_panel.js";
import { TrafficInspector } from "./app/traffic.js";
import { createAgent } from "./client/orizuru.js";
import { ImagePolicy } from "./render/markdown.js";
import * as keys from "./store/keys.js";
import { openStore } from "./store/index.js";
import { PREFS, prefs } from "./store/prefs.js";

// A sign-in popup coming back from an MCP server's authorization server is handed to the page that
// opened it (web/app/oauth.js) and closes: it never boots a second app.
if (!handleOAuthRedirect()) await main();

async function main() {
  const boot = JSON.parse(document.getElementById("boot").textContent);
  const status = new CoreStatus({ text: document.getElementById("core-status-text"),
                                  progress: document.getElementById("core-progress"), root: document.documentElement });

  const relayToken = readRelayToken(); // read first: it leaves the address bar at once
  applyTheme(prefs.get(PREFS.theme));
  applyTranslations();

  // ------------------------------------------------------------------ the core (Python in a worker)

  // The app's client of the core is the same library any page can embed (web/client/orizuru.js).
  const core = createAgent({
    boot, site: document.baseURI,
    onStage: (stage, detail) => status.stage(stage, detail),
    onLog: (level, message) => (console[level] ?? console.log)(`[core] ${message}`),
  });
  const coreReadyNow = () => core.isReady;
  const ready = core.ready.then((info) => (status.ready(info), info));
  const readyOrFail = ready.catch((err) => {
    status.failed(err);
    throw new Error(t("boot.failed", { stage: t(`boot.${err.stage}`) ?? err.stage, message: err.message }));
  });
  readyOrFail.catch(() => {}); // shown in the status line; each waiting turn reports it too

  // ------------------------------------------------------------------ the app

  const notifier = new Notifier(document.getElementById("toasts"));
  const notify = (message, options = {}) => {
    if (options.settings) {
      options.action = { label: t("top.openSettings"), run: () => settings.open() };
      options.error = true;
      options.kind = "settings"; // goes once a profile is in use (below)
    }
    notifier.show(message, options);
  };

  // Remote images (web/render/images.js): the hosts the user chose "Always load images from <host>" for
  // are kept here; a single image the user loads is not kept (it asks again after a reload).
  const images = new ImagePolicy(prefs.getJSON(PREFS.imageHosts, []),
    (hosts) => prefs.setJSON(PREFS.imageHosts, hosts));

  const store = await openStore({ onError: ({ message }) => notify(message, { error: true, timeout: 0 }) });

  const settings = new Settings({
    core, keys, notify,
    profiles: store.profiles,
    coreReadyNow,
    onChange: (profile) => {
      topBar.showProfiles();
      if (profile) notifier.clear("settings"); // "Choose a provider and model in Settings first" is stale now
    },
  });

  // The code interpreter (web/sandbox/): its code and its sandbox load when the model first runs code or the
  // user's Python tools are first defined or called. Its package hosts (none by default) are chosen in Settings;
  // its policy names them.
  let sandbox = null;
  const packages = new PackageHosts({ element: document.getElementById("package-hosts"),
                                      onChange: (value) => sandbox?.then((s) => s.configure(value)) });
  const loadSandbox = () => (sandbox ??= import("./sandbox/interpreter.js").then(({ Interpreter }) => {
    const made = new Interpreter({ pyodide: boot.pyodide, frameScript: boot.sandbox.frame,
                                   workerScript: boot.sandbox.worker, wheels: boot.sandbox.wheels,
                                   toolWheels: boot.sandbox.tools });
    made.configure(packages.value);
    return made;
  }));
  const timeoutMs = () => (Number(prefs.get(PREFS.interpreterTimeout)) || 60) * 1000;
  const interpreter = {
    tool: () => pythonTool({ packages: hostsOf(packages.value).length > 0 }),
    run: async (session, code, options) => (await loadSandbox()).run(session, code, { ...options, timeoutMs: timeoutMs() }),
    // The user's Python tools (Tools → Python tools) run in the same sandbox, never in the core's worker.
    defineTools: async (set, source) => (await loadSandbox()).defineTools(set, source, { timeoutMs: timeoutMs() }),
    useTools: (set, source) => loadSandbox().then((s) => s.useTools(set, source)),
    callTool: async (set, name, args, options) =>
      (await loadSandbox()).callTool(set, name, args, { ...options, timeoutMs: timeoutMs() }),
    warm: () => loadSandbox().then((s) => s.warm(), () => {}),
    reset: async (session) => sandbox && (await sandbox).reset(session), // nothing to reset before the first run
  };

  const inspector = new TrafficInspector({ core, notify });
  const tools = new ToolsPanel({ core, ready: readyOrFail, coreReadyNow, settings, relayToken, notify, interpreter, inspector,
                                 onAttach: (resource, _contents, parts) => composer.attachResource(resource, parts) });

  // Focus memory (per conversation): the panel beside the chat; its calls wait for the core like a turn.
  const focus = new FocusMemory({
    core, store, notify,
    element: document.getElementById("focus-aside"),
    t,
    locale: () => language(),
    classifier: (target) => settings.classifierFor(target),
    ready: readyOrFail,
  });

  // The assistant a chat runs as, and the chat's own changes to it (above the message box).
  const assistant = new ChatSettings({
    store, notify, element: document.getElementById("chat-settings-area"),
    vendor: () => settings.active?.vendor ?? null,
    resetNotebook: (conversationId) => interpreter.reset(conversationId),
  });

  const chat = new Chat({
    core, store, images, notify, focus, assistant, interpreter,
    autoTitle: () => prefs.get(PREFS.autoTitle) !== "off",
    samplingLimits: () => tools.samplingLimits(),
    coreReady: readyOrFail,
    transcript: document.getElementById("transcript"),
    follow: new ScrollFollower(document.getElementById("transcript"), document.getElementById("jump-latest")),
    provider: () => settings.target(),
    tools: () => tools.runParams(),
    onAlwaysAllow: (ask) => tools.alwaysAllow(ask),
    // MCP App views (web/mcp_app/): their frame is a page of the site's own, beside index.html.
    apps: { frameURL: new URL(boot.mcpAppFrame, document.baseURI).href, viewOf: (id, tool) => tools.viewOf(id, tool),
            choicesFor: (id) => tools.choicesFor(id), suggest: (text) => composer.insert(text) },
    onChange: (conversation) => {
      router.shown(conversation); // the address names the conversation on screen (#/c/<id>)
      sidebar.markActive(conversation?.id ?? null);
      sidebar.refresh().catch((err) => notify(err.message));
    },
    onRunning: (running) => composer.setRunning(running),
    openSettings: (where) => settings.open(where), // a failed reply's: its profile, the field to fix
    askKey: (profile) => keyPrompt.ask(profile),
  });
  // A host removed in Settings: its images go back behind placeholders (a running turn redraws when it ends).
  images.subscribe(({ removed }) => {
    if (removed && !chat.running) chat.render();
  });
  const imageHosts = new ImageHostsList({ images, list: document.getElementById("image-hosts"),
                                          empty: document.getElementById("image-hosts-none") });
  const keyPrompt = new KeyPrompt({ settings, openSettings: () => settings.open() });

  const sidebar = new Sidebar({ store, chat, notify, validateFocus: async (state) => {
    await readyOrFail;
    try {
      return (await core.call("focus.validate", { state })).state;
    } catch (err) {
      throw new Error(err.message, { cause: err }); // "focus state: <field>: <problem>" (code invalid_params)
    }
  } });
  const router = new Router({ store, chat, notify });
  const library = new PromptLibrary({ store, notify, draft: () => document.getElementById("message").value });
  assistant.bar.append(library.button); // "Prompts" beside "Chat settings"
  const composer = new Composer({
    chat, notify, onNewChat: () => sidebar.newChat(),
    prompts: () => [...library.slashPrompts(), ...tools.prompts()],
    getPrompt: (id, name, args) => core.call("mcp.get_prompt", { id, name, arguments: args }),
  });

  store.subscribe?.((change) => {
    sidebar.refresh().catch(() => {});
    if (change?.conversation_id && change.conversation_id === chat.conversation?.id && !chat.running) {
      chat.refresh().catch(() => {});
    }
  });

  // ------------------------------------------------------------------ top bar, first run

  const topBar = new TopBar({ settings, core, coreReadyNow, ready, notify, openTools: () => tools.open(),
    onProfile: (active) => {
      tools.profileChanged(active);
      assistant.render(); // the reasoning and temperature fields follow the vendor
      if (active) setup.hide();
      else if (uiReady) setup.show(); // the last profile was deleted: the card again
    } });
  // The first run: a short card in the chat, not the Settings dialog (web/app/first_run.js).
  let uiReady = false;
  const setup = new SetupCard({ element: document.getElementById("setup-card"), settings, ready: readyOrFail,
    onDone: () => document.getElementById("message").focus() });

  const languageSelect = document.getElementById("language");
  languageSelect.replaceChildren(...Object.entries(LANGUAGES).map(([code, name]) => h("option", { value: code }, name)));
  languageSelect.value = language();
  languageSelect.addEventListener("change", () => setLanguage(languageSelect.value));
  const redrawThemes = themeSelect(document.getElementById("theme"));
  const autoTitle = document.getElementById("auto-title");
  autoTitle.checked = prefs.get(PREFS.autoTitle) !== "off";
  autoTitle.addEventListener("change", () => prefs.set(PREFS.autoTitle, autoTitle.checked ? "on" : "off"));
  onLanguageChange(() => {
    status.render();
    settings.relabel();
    imageHosts.render();
    chat.render();
    focus.setT(t); // drawn again in the new language
    assistant.render();
    library.render();
    redrawThemes();
    sidebar.refresh().catch(() => {});
    tools.render();
    if (!setup.element.hidden) setup.render();
    packages.render();
  });

  // ------------------------------------------------------------------ start

  await settings.load();
  await assistant.load();
  await library.load();
  await sidebar.refresh();
  await router.start(); // the conversation the address names (a reload, a bookmark, Back/Forward)
  if (!settings.active) setup.show();
  uiReady = true;
  performance.mark("ui-usable"); // read by bench/boot: handlers are attached, the message box works
  document.documentElement.dataset.ui = "ready"; // the first-run decision is made (tests wait for it)
  // Installable, boots offline. Registered once the core is up (or failed): the worker's install downloads the
  // whole site for offline use, which on a first visit would otherwise share the link with the core's start.
  readyOrFail.finally(() => import("./store/pwa.js").then(({ registerServiceWorker }) => registerServiceWorker()));
}
