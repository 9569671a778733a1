/**
 * The microphone, recorded into a WAV file: what the vendors' transcription and chat APIs all take (OpenAI Chat's
 * input_audio takes only WAV and MP3, and the browser's MediaRecorder writes neither).
 *
 *   const recorder = new Recorder();
 *   await recorder.start()          asks for the microphone (throws when refused or absent)
 *   await recorder.stop() -> {data: base64, mime_type: "audio/wav", size}   16 kHz mono 16-bit PCM
 *   recorder.cancel()               drops what was recorded, releases the microphone
 *
 * stop() throws when nothing could be read back (a recording too short to hold a frame).
 */

import { toBase64 } from "./base64.js";

const RATE = 16_000; // what speech recognisers work at; a minute is under 2 MB

export class Recorder {
  /** @type {MediaStream | null} */
  #stream = null;
  /** @type {MediaRecorder | null} */
  #media = null;
  /** @type {Blob[]} */
  #chunks = [];

  get recording() {
    return this.#media !== null;
  }

  async start() {
    if (!navigator.mediaDevices?.getUserMedia || typeof MediaRecorder === "undefined") {
      throw new Error("no-recorder");
    }
    this.#stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    this.#chunks = [];
    this.#media = new MediaRecorder(this.#stream);
    this.#media.addEventListener("dataavailable", (ev) => ev.data.size && this.#chunks.push(ev.data));
    this.#media.start();
  }

  /** @returns {Promise<{data: string, mime_type: string, size: number}>} */
  async stop() {
    const media = this.#media;
    if (!media) throw new Error("not recording");
    const stopped = new Promise((resolve) => media.addEventListener("stop", resolve, { once: true }));
    media.stop();
    await stopped;
    const recorded = new Blob(this.#chunks, { type: media.mimeType });
    this.#release();
    const wav = await toWav(await recorded.arrayBuffer());
    return { data: toBase64(wav), mime_type: "audio/wav", size: wav.length };
  }

  cancel() {
    if (this.#media?.state === "recording") this.#media.stop();
    this.#release();
  }

  #release() {
    this.#stream?.getTracks().forEach((track) => track.stop());
    this.#stream = null;
    this.#media = null;
    this.#chunks = [];
  }
}

/**
 * Any audio the browser decodes, as a mono 16-bit PCM WAV file at 16 kHz (decodeAudioData resamples to its
 * context's rate; the channels are averaged).
 * @param {ArrayBuffer} encoded
 * @returns {Promise<Uint8Array>}
 */
export async function toWav(encoded) {
  const audio = await new OfflineAudioContext(1, 1, RATE).decodeAudioData(encoded);
  const channels = Array.from({ length: audio.numberOfChannels }, (_, i) => audio.getChannelData(i));
  const pcm = new DataView(new ArrayBuffer(44 + audio.length * 2));
  const ascii = (/** @type {number} */ at, /** @type {string} */ text) =>
    [...text].forEach((c, i) => pcm.setUint8(at + i, c.charCodeAt(0)));
  ascii(0, "RIFF");
  pcm.setUint32(4, 36 + audio.length * 2, true);
  ascii(8, "WAVEfmt ");
  pcm.setUint32(16, 16, true); // the fmt chunk's size
  pcm.setUint16(20, 1, true); // PCM
  pcm.setUint16(22, 1, true); // mono
  pcm.setUint32(24, RATE, true);
  pcm.setUint32(28, RATE * 2, true); // bytes a second
  pcm.setUint16(32, 2, true); // bytes a frame
  pcm.setUint16(34, 16, true); // bits a sample
  ascii(36, "data");
  pcm.setUint32(40, audio.length * 2, true);
  for (let i = 0; i < audio.length; i += 1) {
    const sample = channels.reduce((sum, channel) => sum + channel[i], 0) / channels.length;
    pcm.setInt16(44 + i * 2, Math.max(-1, Math.min(1, sample)) * 0x7fff, true);
  }
  return new Uint8Array(pcm.buffer);
}
