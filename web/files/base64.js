/**
 * Bytes <-> base64, the form parts carry bytes in (pycore's image and document parts).
 *   toBase64(Uint8Array) -> string;  fromBase64(string) -> Uint8Array  (throws on text that is not base64)
 */

/** @param {Uint8Array} bytes  @returns {string} */
export function toBase64(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** @param {string} text  @returns {Uint8Array<ArrayBuffer>} */
export function fromBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
