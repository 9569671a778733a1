/**
 * Recognise media by its bytes, never by what untrusted content claims about it.
 *
 *   decodeBase64(text, maxBytes) -> Uint8Array      throws MediaError naming the problem
 *   sniffImage(bytes) -> "image/png"|"image/jpeg"|"image/gif"|"image/webp"|"image/avif"|"image/bmp"|null
 *   sniffAudio(bytes) -> "audio/wav"|"audio/mpeg"|"audio/ogg"|"audio/flac"|"audio/webm"|"audio/mp4"|null
 *
 * Only raster image formats are recognised: SVG is a document that can carry scripts and links, so
 * it is never shown inline (SECURITY.md T-X10).
 */

export class MediaError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "MediaError";
  }
}

/** Largest decoded image or audio we show inline (a 30 MB base64 payload is refused, T-X10). */
export const MAX_MEDIA_BYTES = 16 * 1024 * 1024;

/**
 * @param {unknown} text
 * @param {number} [maxBytes]
 * @returns {Uint8Array<ArrayBuffer>}
 */
export function decodeBase64(text, maxBytes = MAX_MEDIA_BYTES) {
  if (typeof text !== "string") throw new MediaError("the data is not a base64 string");
  const compact = text.replace(/\s+/g, "");
  const estimated = Math.floor((compact.length * 3) / 4);
  if (estimated > maxBytes) {
    throw new MediaError(`the data is too large (${formatBytes(estimated)}; the limit is ${formatBytes(maxBytes)})`);
  }
  let binary;
  try {
    binary = atob(compact);
  } catch {
    throw new MediaError("the data is not valid base64");
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** @param {number} n */
export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * @param {Uint8Array} bytes
 * @param {(number | null)[]} signature
 * @param {number} [offset]
 */
function startsWith(bytes, signature, offset = 0) {
  if (bytes.length < offset + signature.length) return false;
  return signature.every((byte, i) => byte === null || bytes[offset + i] === byte);
}

/** @param {string} text */
const ascii = (text) => Array.from(text, (c) => c.charCodeAt(0));

/** @param {Uint8Array} bytes */
export function sniffImage(bytes) {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a"))) return "image/gif";
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) return "image/webp";
  if (startsWith(bytes, ascii("ftypavif"), 4) || startsWith(bytes, ascii("ftypavis"), 4)) return "image/avif";
  if (startsWith(bytes, ascii("BM")) && bytes.length > 26) return "image/bmp";
  return null;
}

/** @param {Uint8Array} bytes */
export function sniffAudio(bytes) {
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WAVE"), 8)) return "audio/wav";
  if (startsWith(bytes, ascii("ID3")) || (bytes.length > 1 && bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0)) {
    return "audio/mpeg";
  }
  if (startsWith(bytes, ascii("OggS"))) return "audio/ogg";
  if (startsWith(bytes, ascii("fLaC"))) return "audio/flac";
  if (startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])) return "audio/webm";
  if (startsWith(bytes, ascii("ftyp"), 4)) return "audio/mp4";
  return null;
}

/**
 * True when a declared MIME type and the sniffed one name the same format.
 * @param {unknown} declared
 * @param {string | null} sniffed
 */
export function sameFormat(declared, sniffed) {
  /** @param {unknown} type */
  const normal = (type) => String(type ?? "").toLowerCase().split(";")[0].trim()
    .replace("image/jpg", "image/jpeg").replace("audio/mp3", "audio/mpeg").replace("audio/x-wav", "audio/wav")
    .replace("audio/wave", "audio/wav").replace("audio/x-flac", "audio/flac").replace("audio/m4a", "audio/mp4")
    .replace("audio/x-m4a", "audio/mp4");
  return sniffed !== null && normal(declared) === normal(sniffed);
}
