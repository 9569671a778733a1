/**
 * Voice (issue #35.3): dictation into the message box, a recorded clip sent with the message, replies read aloud,
 * and a conversation mode that reads each reply as it streams and then listens again.
 *
 *   const dictation = new Dictation({button, status, box, notify, transcribe})   the words land in the box, never sent
 *   const clip = new MicButton({button, status, notify, onClip, labels})         a clip attached as an audio part
 *   const speaker = new Speaker({notify, speech, onIdle})
 *   speaker.read(text, button)   one reply, its button saying "Stop reading" meanwhile; again: stops
 *   speaker.say(text)            queued sentence by sentence (conversation mode); speaker.stop()
 *
 * Dictation uses the browser's speech recognition where it exists and works; where it is missing, or fails for want
 * of a service behind it (Chromium without Google's keys says "network"), it records the microphone
 * (files/recorder.js: WAV) and the core sends the clip to the profile's vendor (audio.transcribe: OpenAI's
 * /audio/transcriptions, Gemini). Reading uses the browser's voices, or the vendor's (audio.speech), as Settings →
 * Voice says, at the speed chosen there. Every state shows on its button and in the status line, and every end says
 * what happened: words in the box, a clip attached, or why not.
 */

import { Recorder } from "../files/recorder.js";
import { PREFS, prefs } from "../store/prefs.js";
import { byId, h } from "./dom.js";
import { messageOf } from "./error_notice.js";
import { t } from "./i18n.js";
import { vendorLabel } from "./vendors.js";
import { decodeBase64, sniffAudio } from "../render/media_bytes.js";
import { sentencesOf, speakable } from "../render/speech_text.js";

/**
 * @typedef {import("./notify.js").Notify} Notify
 * @typedef {{data: string, mime_type: string, size: number}} Clip   a recording, WAV in base64
 * @typedef {{isFinal: boolean, 0: {transcript: string}}} RecognitionResult
 * @typedef {{continuous: boolean, interimResults: boolean, lang: string, start(): void, stop(): void, abort(): void,
 *   onresult: ((ev: {results: ArrayLike<RecognitionResult>}) => void) | null,
 *   onerror: ((ev: {error: string}) => void) | null, onend: (() => void) | null}} Recognition
 * @typedef {new () => Recognition} RecognitionClass
 */

// The browser's recognition errors after which dictation records for the vendor instead: no service behind it.
const NO_SERVICE = new Set(["network", "service-not-allowed", "audio-capture", "language-not-supported"]);

/** The settings of Settings → Voice, with their defaults. */
export const voicePrefs = {
  dictation: () => prefs.get(PREFS.voiceDictation) ?? "auto", // "auto" | "browser" | "vendor"
  reader: () => prefs.get(PREFS.voiceReader) ?? "browser", // "browser" | "vendor"
  voice: () => prefs.get(PREFS.voiceName) ?? "",
  speed: () => Number(prefs.get(PREFS.voiceSpeed)) || 1,
};

/** The browser's speech recognition, where it has one. */
function recognitionClass() {
  const scope = /** @type {{SpeechRecognition?: RecognitionClass, webkitSpeechRecognition?: RecognitionClass}} */ (
    /** @type {unknown} */ (globalThis));
  return scope.SpeechRecognition ?? scope.webkitSpeechRecognition ?? null;
}

/**
 * A button that records the microphone while pressed and hands the clip on: "Record a clip" as it is, and the
 * recording half of dictation.
 */
export class MicButton {
  /** @type {ReturnType<typeof setInterval> | undefined} */
  #ticking;

  /**
   * @param {{button: HTMLButtonElement, status: HTMLElement, notify: Notify, onClip: (clip: Clip) => Promise<void>,
   *   labels: {idle: string, stop: string, recording: string}}} parts   labels: i18n keys
   */
  constructor({ button, status, notify, onClip, labels }) {
    this.button = button;
    this.status = status;
    this.notify = notify;
    this.onClip = onClip;
    this.labels = labels;
    this.recorder = new Recorder();
    /** @type {"idle" | "listening" | "recording" | "working"} */
    this.state = "idle";
    button.addEventListener("click", () => (this.state === "idle" ? this.start() : this.stop()));
  }

  async start() {
    if (this.state === "idle") await this.record(t(this.labels.recording));
  }

  /** @param {string} saying   the status line while recording, followed by the time recorded so far */
  async record(saying) {
    this.set("recording", saying);
    try {
      await this.recorder.start();
    } catch (err) {
      this.set("idle");
      this.notify(t("voice.micRefused", { error: messageOf(err) }), { error: true, timeout: 0 });
      return;
    }
    const began = Date.now();
    const tick = () => {
      const seconds = Math.floor((Date.now() - began) / 1000);
      this.status.textContent = `${saying} ${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
    };
    tick();
    this.#ticking = setInterval(tick, 1000);
  }

  /** Let the microphone go and drop what it recorded: nothing is sent anywhere. */
  cancel() {
    this.recorder.cancel();
    this.set("idle");
  }

  async stop() {
    if (this.state !== "recording") return;
    this.set("working", t("voice.working"));
    try {
      await this.onClip(await this.recorder.stop());
    } catch (err) {
      this.notify(messageOf(err), { error: true, timeout: 0 });
    } finally {
      this.set("idle");
    }
  }

  /**
   * The button and the status line say where it stands.
   * @param {"idle" | "listening" | "recording" | "working"} state
   * @param {string} [saying]
   */
  set(state, saying = "") {
    this.state = state;
    clearInterval(this.#ticking);
    const busy = state !== "idle";
    // Its icon while idle (an SVG: emoji glyphs are missing where no emoji font is), its Stop in words while busy.
    const stop = this.button.querySelector(".voice-stop");
    if (stop) stop.textContent = busy ? t("voice.stop") : "";
    this.button.setAttribute("aria-label", t(busy ? this.labels.stop : this.labels.idle));
    this.button.title = t(busy ? this.labels.stop : this.labels.idle);
    this.button.setAttribute("aria-pressed", String(busy));
    this.button.disabled = state === "working";
    this.button.dataset.state = state;
    this.status.hidden = !busy;
    this.status.textContent = saying;
  }
}

/** Dictation: the words said land in the message box, where the person reads and sends them. */
export class Dictation extends MicButton {
  /** @type {Recognition | null} */
  #recognition = null;
  #browserFailed = false; // the browser's recognition failed for want of a service: the vendor's, this tab

  /**
   * @param {{button: HTMLButtonElement, status: HTMLElement, box: HTMLTextAreaElement, notify: Notify,
   *   transcribe: (clip: Clip) => Promise<string>, vendor: () => {name: string, transcribes: boolean}}} parts
   *   vendor: the profile in use (throws when there is none, or its key is missing)
   */
  constructor({ button, status, box, notify, transcribe, vendor }) {
    super({ button, status, notify, onClip: async (clip) => this.put(await transcribe(clip)),
            labels: { idle: "voice.dictate", stop: "voice.stopDictation", recording: "voice.recordingFor" } });
    this.box = box;
    this.vendor = vendor;
  }

  async start() {
    if (this.state !== "idle") return;
    const Recognition = recognitionClass();
    const mode = voicePrefs.dictation();
    if (mode !== "vendor" && Recognition && !this.#browserFailed) this.#listen(Recognition);
    else await this.#recordForVendor();
  }

  /** Record for the vendor's transcription, if the profile in use has one: otherwise say so, before anyone talks. */
  async #recordForVendor() {
    let vendor;
    try {
      vendor = this.vendor();
    } catch (err) {
      this.notify(messageOf(err), { settings: true });
      return;
    }
    if (!vendor.transcribes) this.notify(t("voice.noTranscription", { vendor: vendor.name }), { error: true, timeout: 0 });
    else await this.record(t("voice.recordingFor", { vendor: vendor.name }));
  }

  async stop() {
    if (this.#recognition) this.#recognition.stop(); // its end puts the words in the box
    else await super.stop();
  }

  cancel() {
    const recognition = this.#recognition;
    this.#recognition = null;
    if (recognition) {
      recognition.onend = null;
      recognition.abort();
    }
    super.cancel();
  }

  /** @param {RecognitionClass} Recognition */
  #listen(Recognition) {
    const recognition = new Recognition();
    recognition.continuous = true;
    recognition.interimResults = true;
    recognition.lang = navigator.language;
    let heard = "";
    /** @type {string | null} */
    let noService = null;
    let failed = false; // and said why
    recognition.onresult = ({ results }) => {
      const all = Array.from(results);
      heard = all.filter((r) => r.isFinal).map((r) => r[0].transcript).join("");
      const interim = all.filter((r) => !r.isFinal).map((r) => r[0].transcript).join("");
      this.status.textContent = `${t("voice.listening")} ${heard}${interim}`;
    };
    recognition.onerror = ({ error }) => {
      if (NO_SERVICE.has(error) && voicePrefs.dictation() === "auto") noService = error;
      else if (error !== "aborted" && error !== "no-speech") {
        this.notify(t("voice.recognitionFailed", { error }), { error: true, timeout: 0 });
        failed = true;
      }
    };
    recognition.onend = () => {
      this.#recognition = null;
      this.set("idle");
      if (noService) { // say so, and record for the vendor instead: the person goes on talking
        this.#browserFailed = true;
        this.notify(t("voice.browserFailed", { error: noService }));
        this.#recordForVendor();
      } else if (!failed || heard) {
        this.put(heard);
      }
    };
    this.#recognition = recognition;
    this.set("listening", t("voice.listening"));
    recognition.start();
  }

  /**
   * The words at the end of the box, after a space; none heard says so.
   * @param {string} text
   */
  put(text) {
    const words = text.trim();
    if (words) {
      const before = this.box.value;
      this.box.value = before && !/\s$/.test(before) ? `${before} ${words}` : before + words;
      this.box.dispatchEvent(new Event("input", { bubbles: true }));
      this.box.focus();
    } else {
      this.notify(t("voice.nothingHeard"), { error: true });
    }
  }
}

/** Reading aloud, one sentence at a time, with the browser's voice or the vendor's. */
export class Speaker {
  /** @type {string[]} */
  #queue = [];
  /** @type {HTMLButtonElement | null} */
  #button = null;
  /** @type {HTMLAudioElement | null} */
  #audio = null;
  #playing = false;
  #run = 0; // Stop ends the run it is in: a sentence still being fetched is then not played

  /**
   * @param {{notify: Notify, speech: (text: string) => Promise<{audio: string, mime_type: string}>,
   *   onIdle?: () => void}} parts
   */
  constructor({ notify, speech, onIdle = () => {} }) {
    this.notify = notify;
    this.speech = speech;
    this.onIdle = onIdle;
  }

  get busy() {
    return this.#playing || this.#queue.length > 0;
  }

  /**
   * Read one reply; its button says "Stop reading" until it ends. Pressed again (or another's): stops.
   * @param {string} text
   * @param {HTMLButtonElement} button
   */
  read(text, button) {
    const again = this.#button === button;
    this.stop();
    if (again) return;
    this.#button = button;
    button.textContent = t("voice.stopReading");
    button.dataset.state = "starting";
    button.setAttribute("aria-pressed", "true");
    this.say(text);
  }

  /** @param {string} text   queued after what is being read */
  say(text) {
    const { sentences, rest } = sentencesOf(`${speakable(text, t("voice.codeBlock"))}\n`);
    this.#queue.push(...sentences, ...(rest.trim() ? [rest.trim()] : []));
    if (!this.#playing) this.#pump();
  }

  stop() {
    this.#run += 1;
    this.#queue = [];
    this.#audio?.pause();
    this.#audio = null;
    if (typeof speechSynthesis !== "undefined") speechSynthesis.cancel();
    this.#playing = false;
    this.#release();
  }

  async #pump() {
    const run = this.#run;
    this.#playing = true;
    try {
      while (this.#queue.length && run === this.#run) {
        const sentence = /** @type {string} */ (this.#queue.shift());
        await (voicePrefs.reader() === "vendor" ? this.#vendor(sentence, run) : this.#browser(sentence));
      }
    } catch (err) {
      if (run === this.#run) this.notify(messageOf(err), { error: true, timeout: 0 });
      if (run === this.#run) this.stop();
      return;
    }
    if (run !== this.#run) return;
    this.#playing = false;
    this.#release();
    this.onIdle();
  }

  #release() {
    if (!this.#button) return;
    this.#button.textContent = t("voice.readAloud");
    this.#button.setAttribute("aria-pressed", "false");
    delete this.#button.dataset.state;
    this.#button = null;
  }

  /** @param {string} sentence */
  async #browser(sentence) {
    const voices = await browserVoices();
    if (!voices.length) throw new Error(t("voice.noVoice"));
    const utterance = new SpeechSynthesisUtterance(sentence);
    utterance.voice = voices.find((v) => v.name === voicePrefs.voice()) ?? null;
    utterance.rate = voicePrefs.speed();
    await new Promise((resolve, reject) => {
      utterance.onend = resolve;
      utterance.onerror = ({ error }) => (error === "canceled" || error === "interrupted" ? resolve(null)
        : reject(new Error(t("voice.speakFailed", { error }))));
      speechSynthesis.speak(utterance);
    });
  }

  /** @param {string} sentence  @param {number} run */
  async #vendor(sentence, run) {
    const { audio, mime_type } = await this.speech(sentence);
    if (run !== this.#run) return;
    const bytes = decodeBase64(audio);
    const type = sniffAudio(bytes); // played as what its bytes are, never as what the answer claims
    if (!type) throw new Error(t("voice.speakFailed", { error: `${mime_type}: ${t("voice.notAudio")}` }));
    const url = URL.createObjectURL(new Blob([bytes], { type }));
    const player = new Audio(url);
    this.#audio = player;
    try {
      const ended = new Promise((resolve, reject) => {
        player.addEventListener("ended", resolve, { once: true });
        player.addEventListener("pause", resolve, { once: true }); // Stop
        player.addEventListener("error", () => reject(new Error(t("voice.speakFailed", { error: type }))),
                                { once: true });
      });
      await player.play();
      if (this.#button) this.#button.dataset.state = "playing";
      await ended;
    } finally {
      URL.revokeObjectURL(url);
    }
  }
}

/**
 * The browser's voices; a browser may list them a moment after the page loads, so an empty list waits for
 * `voiceschanged` (a second at most).
 * @returns {Promise<SpeechSynthesisVoice[]>}
 */
async function browserVoices() {
  if (typeof speechSynthesis === "undefined") return [];
  const now = speechSynthesis.getVoices();
  if (now.length) return now;
  await new Promise((resolve) => {
    speechSynthesis.addEventListener("voiceschanged", resolve, { once: true });
    setTimeout(resolve, 1000);
  });
  return speechSynthesis.getVoices();
}

/**
 * Conversation mode: each reply read aloud as it streams, sentence by sentence, and the microphone listening again
 * once the reply has ended and been read. Turning it off stops both.
 */
export class ConversationMode {
  #on = false;
  #pending = ""; // the streamed text not yet a whole sentence
  #replyEnded = true;

  /** @param {{button: HTMLButtonElement, speaker: Speaker, dictation: Dictation}} parts */
  constructor({ button, speaker, dictation }) {
    this.button = button;
    this.speaker = speaker;
    this.dictation = dictation;
    button.addEventListener("click", () => this.toggle());
  }

  get on() {
    return this.#on;
  }

  toggle() {
    this.#on = !this.#on;
    this.button.setAttribute("aria-pressed", String(this.#on));
    if (!this.#on) {
      this.speaker.stop();
      this.#pending = "";
      if (this.dictation.state === "recording" || this.dictation.state === "listening") this.dictation.cancel();
    }
  }

  /** @param {boolean} running   a reply started or ended */
  running(running) {
    if (!this.#on) return;
    this.#replyEnded = !running;
    if (running) {
      this.#pending = "";
      return;
    }
    if (this.#pending.trim()) this.speaker.say(this.#pending);
    this.#pending = "";
    this.#listenWhenDone();
  }

  /** @param {string} text   a piece of the reply, as it streams */
  text(text) {
    if (!this.#on) return;
    const { sentences, rest } = sentencesOf(this.#pending + text);
    this.#pending = rest;
    if (sentences.length) this.speaker.say(sentences.join(" "));
  }

  /** The speaker went quiet: if the reply is over, listen for the answer. */
  #listenWhenDone() {
    if (this.#on && this.#replyEnded && !this.speaker.busy && this.dictation.state === "idle") this.dictation.start();
  }

  spoken() {
    this.#listenWhenDone();
  }
}

// The vendors' own voices, offered in Settings → Voice beside the browser's (any other name may be typed).
const VENDOR_VOICES = ["alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse",
                       "Kore", "Puck", "Charon", "Zephyr", "Aoede"];
const TRANSCRIBES = new Set(["openai", "gemini"]); // the adapters with speech-to-text (pycore/adapters)

/**
 * The voice controls of the page, joined to the core (audio.transcribe, audio.speech) with the profile in use.
 * @param {{core: import("../client/orizuru.js").Agent,
 *   settings: import("./settings.js").Settings, composer: import("./composer.js").Composer, notify: Notify,
 *   ready: Promise<unknown>}} parts
 */
export function startVoice({ core, settings, composer, notify, ready }) {
  const status = byId("voice-status");
  const dictation = new Dictation({
    button: byId("dictate", HTMLButtonElement), status, box: byId("message", HTMLTextAreaElement), notify,
    vendor: () => {
      const { wireVendor, vendor } = settings.target(); // no profile or no key: says so
      return { name: vendorLabel(vendor), transcribes: TRANSCRIBES.has(wireVendor) };
    },
    transcribe: async (clip) => {
      const { provider, model } = settings.target();
      await ready;
      const { text } = await core.call("audio.transcribe", { provider, audio: clip.data, mime_type: clip.mime_type,
                                                             chat_model: model });
      return text;
    },
  });
  new MicButton({ button: byId("record-clip", HTMLButtonElement), status, notify,
                  labels: { idle: "voice.record", stop: "voice.stopRecording", recording: "voice.recordingClip" },
                  onClip: async (clip) => composer.attachPart({ type: "document", name: clipName(),
                                                                mime_type: clip.mime_type, data: clip.data }, clip.size) });
  const speaker = new Speaker({
    notify,
    speech: async (text) => {
      const { provider } = settings.target();
      await ready;
      return core.call("audio.speech", { provider, text, voice: voicePrefs.voice() || null, speed: voicePrefs.speed() });
    },
    onIdle: () => conversation.spoken(),
  });
  const conversation = new ConversationMode({ button: byId("conversation-mode", HTMLButtonElement), speaker, dictation });
  byId("transcript").addEventListener("read-aloud", (ev) => {
    const { text, button } = /** @type {CustomEvent<{text: string, button: HTMLButtonElement}>} */ (ev).detail;
    speaker.read(text, button);
  });
  return { conversation, speaker, showSettings: voiceSettings() };
}

/** A recorded clip's name: when it was recorded. */
function clipName() {
  const now = new Date();
  const two = (/** @type {number} */ n) => String(n).padStart(2, "0");
  return `clip-${now.getFullYear()}${two(now.getMonth() + 1)}${two(now.getDate())}-` +
    `${two(now.getHours())}${two(now.getMinutes())}${two(now.getSeconds())}.wav`;
}

/**
 * Settings → Voice: each control kept as it changes (they are this browser's preferences, not a profile's).
 * @returns {() => void}   shows the kept values again (sync brought another device's)
 */
function voiceSettings() {
  const fields = /** @type {const} */ ([["voice-dictation", PREFS.voiceDictation, voicePrefs.dictation],
                                        ["voice-reader", PREFS.voiceReader, voicePrefs.reader],
                                        ["voice-name", PREFS.voiceName, voicePrefs.voice],
                                        ["voice-speed", PREFS.voiceSpeed, voicePrefs.speed]]);
  const show = () => {
    for (const [id, , current] of fields) /** @type {HTMLInputElement | HTMLSelectElement} */ (byId(id)).value = String(current());
  };
  show();
  for (const [id, key] of fields) {
    const field = /** @type {HTMLInputElement | HTMLSelectElement} */ (byId(id));
    field.addEventListener("change", () => prefs.set(key, field.value.trim()));
  }
  const names = byId("voice-names");
  const fill = () => names.replaceChildren(...[...(typeof speechSynthesis === "undefined" ? [] : speechSynthesis.getVoices())
    .map((v) => v.name), ...VENDOR_VOICES].map((name) => h("option", { value: name })));
  fill();
  if (typeof speechSynthesis !== "undefined") speechSynthesis.addEventListener("voiceschanged", fill);
  return show;
}
