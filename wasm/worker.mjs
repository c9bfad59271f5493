// The worker side of createWorker() (supertok.mjs): runs the module in a Web Worker (browsers,
// type "module") or a worker_threads Worker (Node.js), so a page stays responsive while a long
// text is encoded. Messages in: {id, op, encoding, args}; out: {id, result} or {id, error}.
// Encodings are loaded on first use by name (getEncoding) and kept.
// The module is imported when the first message comes, not by a static import: supertok.mjs
// reads its catalogue with a top-level await, and a static import would hold this module's
// body, and so the message listener below, until that read ends, while a Web Worker drops the
// messages posted to it before a listener is set.
const stModule = import("./supertok.mjs");

const OPS = {
  encode: (enc, text, options) => enc.encode(text, options),
  encodeOrdinary: (enc, text) => enc.encodeOrdinary(text),
  encodeWithOffsets: (enc, text, options) => enc.encodeWithOffsets(text, options),
  count: (enc, text, options) => enc.count(text, options),
  decode: (enc, ids, options) => enc.decode(ids, options),
};

function errorFields(e) {
  // what structured cloning keeps of an Error varies: send its fields as plain data
  const out = { name: e?.name ?? "Error", message: String(e?.message ?? e) };
  for (const k of ["code", "status", "offset", "unit", "line", "token", "input", "detail", "index"]) if (e && k in e) out[k] = e[k];
  return out;
}

async function handle(msg, post) {
  const { id, op, encoding, args } = msg;
  try {
    if (!Object.hasOwn(OPS, op)) throw new RangeError(`unknown operation ${op}`);
    const st = await stModule;
    const enc = await st.getEncoding(encoding);
    const result = OPS[op](enc, ...args);
    const transfer = result instanceof Uint32Array ? [result.buffer]
      : result?.ids instanceof Uint32Array ? [result.ids.buffer, result.starts.buffer] : [];
    post({ id, result }, transfer);
  } catch (e) {
    post({ id, error: errorFields(e) }, []);
  }
}

if (typeof self !== "undefined" && typeof self.postMessage === "function" && typeof WorkerGlobalScope !== "undefined") {
  self.onmessage = (ev) => handle(ev.data, (m, t) => self.postMessage(m, t));
} else {
  const { parentPort } = await import("node:worker_threads");
  parentPort.on("message", (msg) => handle(msg, (m, t) => parentPort.postMessage(m, t)));
}
