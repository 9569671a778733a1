// The compiled extensions (`.so`, WebAssembly side modules) a wheel holds, read out of its zip before Python
// runs: the core worker loads them before the interpreter starts, so that they sit at the same addresses in every
// boot and a memory snapshot of the interpreter stays valid (web/snapshot.js). A wheel is a plain zip (no zip64:
// each is far below 4 GB); its central directory names each member and where its bytes are.

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

/**
 * @param {ArrayBuffer} wheel
 * @returns {Promise<{ name: string, bytes: Uint8Array<ArrayBuffer> }[]>} each `.so` member, its path inside the wheel (which
 *   is its path under site-packages) and its bytes
 */
export async function extensions(wheel) {
  const view = new DataView(wheel);
  const found = [];
  for (const entry of directory(view)) {
    if (entry.name.endsWith(".so")) found.push({ name: entry.name, bytes: await member(wheel, view, entry) });
  }
  return found;
}

/**
 * @param {DataView} view
 * @returns {{ name: string, method: number, size: number, offset: number }[]}
 */
function directory(view) {
  const end = endOfDirectory(view);
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  const entries = [];
  const names = new TextDecoder();
  for (let i = 0; i < count; i++) {
    if (view.getUint32(at, true) !== DIRECTORY_ENTRY) throw new Error("the wheel's zip directory is damaged");
    const nameLength = view.getUint16(at + 28, true);
    entries.push({
      method: view.getUint16(at + 10, true),
      size: view.getUint32(at + 20, true),
      offset: view.getUint32(at + 42, true),
      name: names.decode(new Uint8Array(view.buffer, at + 46, nameLength)),
    });
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  return entries;
}

/** @param {DataView} view the end-of-directory record's offset: the last 22 bytes, or before a comment */
function endOfDirectory(view) {
  for (let at = view.byteLength - 22; at >= Math.max(0, view.byteLength - 22 - 0xffff); at--) {
    if (view.getUint32(at, true) === END_OF_DIRECTORY) return at;
  }
  throw new Error("not a zip file (no end of its directory)");
}

/**
 * @param {ArrayBuffer} wheel
 * @param {DataView} view
 * @param {{ name: string, method: number, size: number, offset: number }} entry
 */
async function member(wheel, view, entry) {
  if (view.getUint32(entry.offset, true) !== LOCAL_HEADER) throw new Error(`${entry.name}: damaged zip entry`);
  const start = entry.offset + 30 + view.getUint16(entry.offset + 26, true) + view.getUint16(entry.offset + 28, true);
  const packed = new Uint8Array(wheel, start, entry.size);
  if (entry.method === STORED) return packed.slice();
  if (entry.method !== DEFLATED) throw new Error(`${entry.name}: zip method ${entry.method} is not supported`);
  const inflated = new Blob([packed]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Uint8Array(await new Response(inflated).arrayBuffer());
}
