// supertok for JavaScript: the C core's supertok.wasm (the same module the Python package ships)
// driven from an ES module. Every rule (pre-tokenizing, merging, special tokens, decoding, UBE)
// is the core's: this layer converts types, raises errors and manages handles, nothing more.
//
// Memory: the module's linear memory can grow during any call that allocates (st_malloc, every
// constructor, st_encode building its tables on first need), and growing detaches the
// ArrayBuffer views onto it, so views are taken through mem8()/mem32() right before each use,
// never kept across a call into the module.
//
// Handles: each core object (encoding, decoder, UBE stream state) belongs to one JS object with
// free() and [Symbol.dispose]; a FinalizationRegistry frees what the program forgot to free.

// ---- constants of core_c/include/supertok.h (test/api.test.mjs checks them against the header)
export const _C = Object.freeze({
  ST_OK: 0,
  ST_ERR_BUFFER_TOO_SMALL: 4,
  ST_ERR_DISALLOWED_SPECIAL: 10,
  ST_PRETOK_SCRIPT_AWARE: 1,
  ST_OFFSETS_BYTES: 0,
  ST_OFFSETS_UTF16: 2,
  ST_ALPHABET_BYTES: 0,
  ST_ALPHABET_UBE: 1,
  ST_SPECIAL_ALLOW_ALL: 1,
  ST_SPECIAL_DISALLOW_REST: 2,
  ST_SPECIAL_BY_STRING: 4,
  ST_SPECIAL_BY_TEXT: 8,
  ST_UBE_FINAL: 1,
  ST_UBE_STRICT: 2,
  ST_UNIT_NONE: 0,
  ST_UNIT_BYTE: 1,
  ST_UNIT_CODEPOINT: 2,
  ST_UNIT_UTF16: 3,
  ST_UNIT_INDEX: 4,
  ST_MODEL_RULES: 1,
  ST_MODEL_RANKS: 2,
  ST_TRAIN_PAPER: 0,
  ST_TRAIN_HF: 1,
  ST_ALGORITHM_BPE: 0,
  ST_ALGORITHM_BOUNDLESS: 1,
  ST_ALGORITHM_SUPERBPE: 2,
  ST_SUPERWORDS_NGRAM_SPLIT: 1,
  ST_EXTEND_COLON_SPACE: 1,
  ST_ADDED_SPECIAL: 1,
  ST_COUNTER_DOCUMENTS: 0,
  ST_COUNTER_BYTES: 1,
  ST_TRAINER_TARGET: 1,
  ST_TRAINER_SUPERMERGES: 6,
  ST_TRAINER_CANDIDATES: 8,
  ST_TRAINER_STEPS: 10,
  ST_TRAINER_STATE: 18,
  ST_TRAINING_MERGES: 1,
  ST_TRAINING_CANDIDATES: 2,
  ST_TRAINING_SUPERMERGES: 3,
  ST_TRAINING_DONE: 4,
});
const C = _C;
const ERR_SIZE = 160; // sizeof(st_error): status, unit, offset u64, line u64, token, input, kind, length, message[120]
const ERR_MESSAGE = 40; // offsetof(st_error, message)
const UNITS = ["none", "byte", "codepoint", "utf16", "index"];

const utf8Encoder = new TextEncoder();
// input is always valid UTF-8 (the core made it); ignoreBOM: a leading U+FEFF is text, kept
const utf8Decoder = new TextDecoder("utf-8", { ignoreBOM: true });

// ---- errors ---------------------------------------------------------------------------------

/** A failure the core reported: code (the header's status name, e.g. "ST_ERR_INVALID_UTF8"),
 * status (its number), kind (what was wrong: the header's st_error_kind name, e.g.
 * "ST_KIND_DISALLOWED_SPECIAL"; "ST_KIND_NONE" when the status says it), offset and unit (where it
 * went wrong, null when no position applies), length (of what starts there, in unit; 0 if not
 * known), line, token (the id concerned) and input (which input of the call), detail (the core's
 * message, for people: code reads the other fields). */
export class SupertokError extends Error {
  constructor(message, fields) {
    super(message);
    this.name = "SupertokError";
    Object.assign(this, fields);
  }
}

// ---- the module -----------------------------------------------------------------------------

let rt = null; // the one instance: {ex, memory, err, scratch, ...}
let rtPromise = null;

const isNode = typeof process !== "undefined" && process.versions != null && process.versions.node != null;

async function readUrl(url) {
  if (isNode && url.protocol === "file:") {
    const { readFile } = await import("node:fs/promises");
    return new Uint8Array(await readFile(url));
  }
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

// Where the package's files are: next to this module in the npm package (tools/copy-assets.mjs
// puts them there when packing); in a checkout of the repository, where the repository keeps
// its one copy of each: the wasm module the core's build writes (core_c/), the catalogue and
// rank files of the Python package (py/supertok/).
const CHECKOUT_DIR = (rel) => (rel === "supertok.wasm" ? "../core_c/" : "../py/supertok/");

async function readAsset(rel) {
  let firstError = null;
  for (const dir of ["./", CHECKOUT_DIR(rel)]) {
    try {
      return await readUrl(new URL(dir + rel, import.meta.url));
    } catch (e) {
      firstError ??= e;
    }
  }
  throw new Error(`supertok: cannot find ${rel} next to supertok.mjs or in ${CHECKOUT_DIR(rel)} (${firstError?.message})`);
}

// ---- the encoding catalogue -------------------------------------------------------------------
// catalogue.json, the one copy of the encodings, patterns, special tokens, default scripts and
// model tables that the Python package, this module and the vector generators read (its "fields"
// say what each part means). Read once when the module loads: the functions that use it are
// synchronous.

const CATALOGUE = JSON.parse(utf8Decoder.decode(await readAsset("catalogue.json")));
// pattern names the pre-tokenizer takes (each pattern's name, then its aliases) -> the core's
// pattern ids; no prototype, so a name like "toString" is unknown rather than inherited
const PATTERNS = Object.assign(Object.create(null), Object.fromEntries(Object.entries(CATALOGUE.patterns)
  .flatMap(([name, p]) => [name, ...p.aliases].map((n) => [n, p.id]))));
export const DEFAULT_SCRIPTS = Object.freeze([...CATALOGUE.default_scripts]);
const ENCODING_NAMES = Object.keys(CATALOGUE.encodings);

/** {text: id} of one catalogue encoding, in its order: its special_tokens, then each
 * special_token_ranges rule's tokens in id order (o200k_harmony's reserved ids). */
function catalogueSpecialTokens(entry) {
  const specials = { ...entry.special_tokens };
  for (const rule of entry.special_token_ranges ?? []) {
    for (let i = rule.first; i <= rule.last; i++) specials[rule.template.replace("{id}", String(i))] = i;
  }
  return specials;
}

/** Load the wasm module once (later calls return the same promise). source: the module's bytes
 * (ArrayBuffer, typed array), a WebAssembly.Module, a URL, or nothing (the packaged file). */
export function init(source) {
  if (rtPromise) return rtPromise;
  rtPromise = (async () => {
    let mod;
    if (source instanceof WebAssembly.Module) mod = source;
    else {
      let bytes;
      if (source == null) bytes = await readAsset("supertok.wasm");
      else if (source instanceof URL || typeof source === "string") bytes = await readUrl(new URL(source, import.meta.url));
      else bytes = source instanceof ArrayBuffer ? new Uint8Array(source) : source;
      mod = await WebAssembly.compile(bytes);
    }
    const inst = await WebAssembly.instantiate(mod, {}); // the module imports nothing
    setRuntime(inst.exports);
    return rt;
  })();
  rtPromise.catch(() => { rtPromise = null; });
  return rtPromise;
}

function setRuntime(ex) {
  rt = { ex, memory: ex.memory, u8: null, u32: null, pretok: new Map(), blocks: [0, 0, 0, 0], caps: [0, 0, 0, 0] };
  rt.err = ex.st_malloc(ERR_SIZE) >>> 0;
  rt.scratch = ex.st_malloc(32) >>> 0; // out-parameters: 8 x u32
  rt.names = new Map();
  rt.kinds = new Map();
}

function need() {
  if (!rt) throw new Error("supertok: call `await init()` (or await getEncoding / loadEncoding / loadModel) first");
  return rt;
}

function mem8() {
  const b = rt.memory.buffer;
  if (rt.u8 === null || rt.u8.buffer !== b) rt.u8 = new Uint8Array(b);
  return rt.u8;
}

function mem32() {
  const b = rt.memory.buffer;
  if (rt.u32 === null || rt.u32.buffer !== b) rt.u32 = new Uint32Array(b);
  return rt.u32;
}

function u32at(p) { return mem32()[p >>> 2]; }

function cstr(p) {
  if (!p) return null;
  const m = mem8();
  let e = p;
  while (m[e] !== 0) e++;
  return utf8Decoder.decode(m.subarray(p, e));
}

function statusName(status) {
  let n = rt.names.get(status);
  if (n === undefined) {
    n = cstr(rt.ex.st_status_name(status) >>> 0) ?? `ST_ERR_${status}`;
    rt.names.set(status, n);
  }
  return n;
}

function kindName(kind) {
  let n = rt.kinds.get(kind);
  if (n === undefined) {
    n = cstr(rt.ex.st_error_kind_name(kind) >>> 0) ?? `ST_KIND_${kind}`;
    rt.kinds.set(kind, n);
  }
  return n;
}

/** The core's st_error report of the last failed call. */
function readError() {
  const dv = new DataView(rt.memory.buffer, rt.err, ERR_SIZE);
  const status = dv.getUint32(0, true);
  const unit = dv.getUint32(4, true);
  const token = dv.getUint32(24, true);
  const m = mem8();
  let e = rt.err + ERR_MESSAGE;
  while (e < rt.err + ERR_SIZE && m[e] !== 0) e++;
  return {
    status, code: statusName(status), kind: kindName(dv.getUint32(32, true)), unit: UNITS[unit] ?? String(unit),
    offset: unit ? Number(dv.getBigUint64(8, true)) : null,
    length: dv.getUint32(36, true),
    line: Number(dv.getBigUint64(16, true)) || null,
    token: token === 0xFFFFFFFF ? null : token,
    input: dv.getUint32(28, true),
    detail: utf8Decoder.decode(m.subarray(rt.err + ERR_MESSAGE, e)),
  };
}

function coreError(status, what, report) {
  const r = report ?? (status === undefined ? readError() : { status, code: statusName(status), kind: "ST_KIND_NONE",
    unit: "none", offset: null, length: 0, line: null, token: null, input: 0, detail: "" });
  const text = cstr(rt.ex.st_status_str(r.status) >>> 0);
  let where = "";
  if (r.offset !== null) where = r.unit === "index" ? ` at index ${r.offset}` : ` at ${r.unit} ${r.offset}`;
  if (r.line) where += ` (line ${r.line})`;
  const msg = `${what ? what + ": " : ""}${text}${r.detail ? ": " + r.detail : ""}${where} (${r.code})`;
  return new SupertokError(msg, r);
}

function check(status, what) {
  if (status !== C.ST_OK) throw coreError(undefined, what);
}

// Reusable blocks for a call's input and outputs: short calls allocate nothing. A block grows
// when a call needs more; blocks above KEEP bytes are freed when the call returns (done()).
const KEEP = 1 << 20;
const IN = 0, OUT = 1, OUT2 = 2;

function block(i, size) {
  if (rt.caps[i] < size) {
    if (rt.blocks[i]) rt.ex.st_free(rt.blocks[i]);
    rt.blocks[i] = 0;
    rt.caps[i] = 0;
    const p = rt.ex.st_malloc(Math.max(size, 64)) >>> 0;
    if (!p) throw new RangeError(`supertok: out of wasm memory (asked ${size} bytes)`);
    rt.blocks[i] = p;
    rt.caps[i] = Math.max(size, 64);
  }
  return rt.blocks[i];
}

function done() {
  for (let i = 0; i < rt.blocks.length; i++) {
    if (rt.caps[i] > KEEP) {
      rt.ex.st_free(rt.blocks[i]);
      rt.blocks[i] = 0;
      rt.caps[i] = 0;
    }
  }
}

function alloc(size) {
  const p = rt.ex.st_malloc(size || 1) >>> 0;
  if (!p) throw new RangeError(`supertok: out of wasm memory (asked ${size} bytes)`);
  return p;
}

function putBytes(i, bytes) {
  const p = block(i, bytes.length + 1);
  mem8().set(bytes, p);
  return p;
}

/** text as UTF-8 in block i: [pointer, length]. TextEncoder repairs lone surrogates as tiktoken
 * does (each becomes U+FFFD; a pair is its character), and keeps UTF-16 lengths unchanged, so
 * UTF-16 offsets into the repaired text are offsets into the caller's string. */
function putText(i, text) {
  if (typeof text !== "string") throw new TypeError(`text must be a string, not ${typeof text}`);
  const cap = text.length * 3;
  const p = block(i, cap + 1);
  const { written } = utf8Encoder.encodeInto(text, mem8().subarray(p, p + cap));
  return [p, written];
}

/** A ValueError-like refusal of lone surrogates, for the calls Python's API refuses them in
 * (pretokenize, ubeEncodeSymbols: `supertok._text.utf8`). */
function checkWellFormed(text) {
  if (typeof text !== "string") throw new TypeError(`text must be a string, not ${typeof text}`);
  if (text.isWellFormed === undefined || !text.isWellFormed()) {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0xD800 && c <= 0xDBFF) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xDC00 && d <= 0xDFFF) { i++; continue; }
      } else if (!(c >= 0xDC00 && c <= 0xDFFF)) continue;
      const err = new RangeError(`text holds a lone surrogate U+${c.toString(16).toUpperCase().padStart(4, "0")} `
        + `at index ${i}; it cannot be encoded as UTF-8`);
      err.index = i;
      throw err;
    }
  }
}

/** ids (an array or typed array of integers) as uint32 in block i. */
function putIds(i, ids) {
  const n = ids.length;
  const p = block(i, 4 * n + 4);
  const m = mem32();
  const base = p >>> 2;
  if (ids instanceof Uint32Array) m.set(ids, base);
  else {
    for (let k = 0; k < n; k++) {
      const v = ids[k];
      if (!Number.isInteger(v) || v < 0 || v > 0xFFFFFFFF) {
        const err = new RangeError(`id ${String(v)} at index ${k} is not an integer in 0..2^32-1`);
        err.index = k;
        throw err;
      }
      m[base + k] = v;
    }
  }
  return [p, n];
}

function putSymbols(i, symbols) {
  const n = symbols.length;
  const p = block(i, 2 * n + 2);
  const m = new Uint16Array(rt.memory.buffer, p, n);
  for (let k = 0; k < n; k++) {
    const v = symbols[k];
    if (!Number.isInteger(v) || v < 0 || v > 0xFFFF) {
      const err = new RangeError(`invalid UBE symbol ${String(v)} at index ${k}: symbols are 0-511`);
      err.index = k;
      throw err;
    }
    m[k] = v;
  }
  return [p, n];
}

// ---- handles --------------------------------------------------------------------------------

const registry = new FinalizationRegistry((frees) => {
  if (!rt) return;
  for (const [fn, p] of frees) rt.ex[fn](p);
});

class Handle {
  #ptr;
  #frees;
  constructor(ptr, frees) {
    this.#ptr = ptr;
    this.#frees = frees;
    registry.register(this, frees, this);
  }
  get _ptr() {
    if (this.#ptr === 0) throw new Error(`supertok: ${this.constructor.name} used after free()`);
    return this.#ptr;
  }
  get freed() { return this.#ptr === 0; }
  /** A block of the module's memory (or, with free, a core object freed by that export) this
   * handle owns beside its object (freed with it). */
  _own(p, free = "st_free") { this.#frees.push([free, p]); }
  /** Free the core object now (idempotent). */
  free() {
    if (this.#ptr === 0) return;
    registry.unregister(this);
    for (const [fn, p] of this.#frees) rt.ex[fn](p);
    this.#ptr = 0;
  }
  [Symbol.dispose]() { this.free(); }
}

// ---- pre-tokenizers ---------------------------------------------------------------------------

function patternId(pattern) {
  const id = PATTERNS[pattern];
  if (id === undefined) {
    throw new RangeError(`unknown pattern ${JSON.stringify(pattern)}: choose one of ${Object.keys(PATTERNS).sort().join(", ")}`);
  }
  return id;
}

/** The scripts option as the core takes it (a comma-separated list), or null for the default. */
function scriptsSpec(scriptAware, scripts) {
  if (scripts != null && !scriptAware) {
    throw new RangeError("scripts applies only with scriptAware: true (it names the scripts split one letter "
      + "per piece in script-aware mode)");
  }
  let spec = null;
  if (scripts != null) {
    const names = typeof scripts === "string" ? [scripts] : [...scripts];
    for (const s of names) {
      if (typeof s !== "string" || s.includes(",") || !s.trim()) {
        throw new RangeError(`script names must be non-empty strings without commas, got ${JSON.stringify(s)}`);
      }
    }
    spec = names.join(",");
  }
  return spec;
}

/** The core pre-tokenizer for these options (made once, kept for the module's life). */
function pretokenizer(pattern, scriptAware, scripts) {
  const pid = patternId(pattern);
  const spec = scriptsSpec(scriptAware, scripts);
  const flags = scriptAware ? C.ST_PRETOK_SCRIPT_AWARE : 0;
  const key = `${pid}/${flags}/${spec}`;
  let h = rt.pretok.get(key);
  if (h === undefined) {
    let sp = 0, sl = 0;
    if (spec !== null) [sp, sl] = putText(IN, spec);
    const st = rt.ex.st_pretokenizer_new(pid, flags, sp, sl, 0, rt.scratch, rt.err);
    if (st !== C.ST_OK) {
      const r = readError();
      if (r.code === "ST_ERR_UNKNOWN_SCRIPT" && r.offset !== null && spec !== null) {
        const bad = utf8Decoder.decode(utf8Encoder.encode(spec).subarray(r.offset)).split(",")[0].trim();
        const e = coreError(st, "scripts", r);
        e.message = `unknown script name ${JSON.stringify(bad)} (${r.code})`;
        throw e;
      }
      throw coreError(st, "pre-tokenizer", r);
    }
    h = u32at(rt.scratch);
    rt.pretok.set(key, h);
  }
  return h;
}

/** UTF-16 offsets of byte offsets (increasing) into the UTF-8 bytes at p. */
function byteToUtf16(p, ends, n) {
  const m = mem8();
  const out = new Array(n);
  let b = 0, u = 0;
  for (let k = 0; k < n; k++) {
    const e = ends[k];
    for (; b < e; b++) {
      const c = m[p + b];
      if ((c & 0xC0) !== 0x80) u += c >= 0xF0 ? 2 : 1;
    }
    out[k] = u;
  }
  return out;
}

function pretokenizeEnds(text, options) {
  need();
  checkWellFormed(text);
  const { pattern = "o200k", scriptAware = false, scripts = null } = options ?? {};
  try {
    const h = pretokenizer(pattern, scriptAware, scripts);
    const [tp, tl] = putText(IN, text);
    const ep = block(OUT, 4 * tl + 4);
    const st = rt.ex.st_pretokenize(h, tp, tl, C.ST_OFFSETS_BYTES, ep, tl, rt.scratch, rt.err);
    check(st, "text");
    const n = u32at(rt.scratch);
    const ends = mem32().subarray(ep >>> 2, (ep >>> 2) + n);
    return byteToUtf16(tp, ends, n);
  } finally {
    done();
  }
}

/** [start, end] UTF-16 offsets of the pieces of text (pattern "o200k", "cl100k", "gpt2" /
 * "r50k" / "p50k", "superbpe": SuperBPE's Stage-2 split, its regex's matches and the text
 * between them, or "llama3", "qwen2" / "qwen3", "deepseek_v3": those models' pre-tokenizers as
 * HuggingFace tokenizers splits with them; scriptAware splits into single-script chunks first; scripts: the scripts split
 * one letter per piece, default DEFAULT_SCRIPTS). A lone surrogate is a RangeError. */
export function pretokenizeSpans(text, options) {
  const ends = pretokenizeEnds(text, options);
  const spans = new Array(ends.length);
  let a = 0;
  for (let k = 0; k < ends.length; k++) { spans[k] = [a, ends[k]]; a = ends[k]; }
  return spans;
}

/** The pieces of text as strings; see pretokenizeSpans. */
export function pretokenize(text, options) {
  const ends = pretokenizeEnds(text, options);
  const pieces = new Array(ends.length);
  let a = 0;
  for (let k = 0; k < ends.length; k++) { pieces[k] = text.slice(a, ends[k]); a = ends[k]; }
  return pieces;
}

// ---- UBE ----------------------------------------------------------------------------------------

/** The routed base-symbol stream of text (UBE: UTF-8 bytes below U+0800, 256 + UTF-16LE bytes
 * above). A lone surrogate is a RangeError. */
export function ubeEncodeSymbols(text) {
  need();
  checkWellFormed(text);
  try {
    const [tp, tl] = putText(IN, text);
    const op = block(OUT, 2 * tl + 2);
    check(rt.ex.st_ube_encode_symbols(tp, tl, op, tl, rt.scratch, rt.err), "text");
    const n = u32at(rt.scratch);
    return new Uint16Array(rt.memory.buffer, op, n).slice();
  } finally {
    done();
  }
}

function streamFeed(state, symbols, flags) {
  const [ip, n] = putSymbols(IN, symbols);
  let cap = 3 * n + 3;
  for (;;) {
    const op = block(OUT, cap);
    const st = rt.ex.st_ube_stream_feed(state, ip, n, flags, op, cap, rt.scratch, rt.err);
    if (st === C.ST_ERR_BUFFER_TOO_SMALL) { cap = u32at(rt.scratch); continue; }
    if (st !== C.ST_OK) throw coreError(undefined, "symbols");
    return utf8Decoder.decode(mem8().subarray(op, op + u32at(rt.scratch)));
  }
}

function errorsFlag(errors) {
  if (errors !== "replace" && errors !== "strict") {
    throw new RangeError(`errors must be "replace" or "strict", not ${JSON.stringify(errors)}`);
  }
  return errors === "strict" ? C.ST_UBE_STRICT : 0;
}

/** Incremental decoding of UBE base symbols: add() returns the characters completed so far;
 * special() marks a special token (a flush); flush() ends the stream. */
export class UbeStreamDecoder extends Handle {
  #flags;
  constructor({ errors = "replace" } = {}) {
    need();
    const flags = errorsFlag(errors);
    const p = alloc(rt.ex.st_ube_stream_size() >>> 0);
    rt.ex.st_ube_stream_init(p);
    super(p, [["st_free", p]]);
    this.#flags = flags;
  }
  add(symbols) {
    if (typeof symbols === "number") symbols = [symbols];
    try { return streamFeed(this._ptr, symbols, this.#flags); } finally { done(); }
  }
  special() {
    try { return streamFeed(this._ptr, [], this.#flags | C.ST_UBE_FINAL); } finally { done(); }
  }
  flush() {
    return this.special();
  }
}

/** Text of a base-symbol stream: errors "replace" (each same-alphabet run decodes as
 * bytes.decode(..., "replace")) or "strict" (a SupertokError whose offset is the symbol index
 * where the malformed sequence starts). */
export function ubeDecodeSymbols(symbols, { errors = "replace" } = {}) {
  need();
  const flags = errorsFlag(errors) | C.ST_UBE_FINAL;
  const p = alloc(rt.ex.st_ube_stream_size() >>> 0);
  try {
    rt.ex.st_ube_stream_init(p);
    return streamFeed(p, symbols, flags);
  } finally {
    rt.ex.st_free(p);
    done();
  }
}

// ---- encodings ------------------------------------------------------------------------------

function disallowedError(tok, index, id = null) {
  // tiktoken's message, with the position (a UTF-16 index into the text) added; the fields say
  // the same for code: offset the index, length the string's, token its id (null for a string
  // that is no special token), special the string
  const q = JSON.stringify(tok);
  const err = new SupertokError(
    `Encountered text corresponding to disallowed special token ${q} at index ${index}.\n`
    + `If you want this text to be encoded as a special token, pass it to \`allowedSpecial\`, e.g. \`allowedSpecial: [${q}]\`.\n`
    + `If you want this text to be encoded as normal text, disable the check for this token by passing `
    + `\`disallowedSpecial\` without it, or \`disallowedSpecial: []\` to disable the check for all special tokens.`,
    { status: C.ST_ERR_DISALLOWED_SPECIAL, code: "ST_ERR_DISALLOWED_SPECIAL", kind: "ST_KIND_DISALLOWED_SPECIAL",
      unit: "utf16", offset: index, length: tok.length, token: id, special: tok, line: null, input: 0, detail: tok });
  return err;
}

// a lone surrogate: no text the core sees holds one (putText repairs them)
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A special-token string as the core's policy takes it: UTF-8, a lone surrogate as its own
 * three bytes (ill-formed UTF-8), so that it matches nothing in a repaired text rather than the
 * U+FFFD that TextEncoder would make of it. */
function policyBytes(s) {
  if (!LONE_SURROGATE.test(s)) return utf8Encoder.encode(s);
  const out = [];
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    if (ch.length === 1 && c >= 0xD800 && c <= 0xDFFF) out.push(0xE0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(...utf8Encoder.encode(ch));
  }
  return Uint8Array.from(out);
}

function asSet(v, what) {
  if (v === "all") return v;
  if (v == null) return new Set();
  if (typeof v === "string") throw new TypeError(`${what} must be "all" or an iterable of strings, not a string`);
  return v instanceof Set ? v : new Set(v);
}

/** One loaded vocabulary (immutable; free() releases its memory in the module). */
export class Encoding extends Handle {
  #specials; // Map text -> id
  #byId; // Map id -> text (its first string)
  #policies = new Map(); // flags -> a policy of flags alone, kept while the encoding lives
  #model; // the model file's bytes (loadModel, train), or null
  constructor(ptr, { name, specials, alphabet, patternId, model = null }) {
    super(ptr, [["st_encoding_free", ptr]]);
    this.#model = model;
    this.name = name;
    this.#specials = specials;
    // an id may have several strings: the first given is the one decoding gives
    this.#byId = new Map();
    for (const [t, i] of specials) if (!this.#byId.has(i)) this.#byId.set(i, t);
    this.alphabet = alphabet;
    this.patternId = patternId;
    this.nVocab = rt.ex.st_encoding_n_vocab(ptr) >>> 0;
    this.maxTokenValue = this.nVocab - 1;
    Object.freeze(this);
  }

  toString() { return `<Encoding ${JSON.stringify(this.name)}>`; }
  /** {text: id} of the special tokens. */
  get specialTokens() { return Object.fromEntries(this.#specials); }
  get specialTokensSet() { return new Set(this.#specials.keys()); }
  get eotToken() { return this.#specials.get("<|endoftext|>"); }
  isSpecialToken(id) { return this.#byId.has(id); }
  /** The model file this encoding was made from (loadModel, train): a copy of its bytes, what
   * loadModel loads again; null for tiktoken vocabularies. */
  modelBytes() { return this.#model === null ? null : this.#model.slice(); }

  /** The compact image of this encoding's ordinary tokens (st_encoding_save_compact): what
   * loadEncoding({compact}) loads, with the special tokens and patStr given there; for an encoding
   * from a tokenizer.json, the whole model's image, which loadModel and fromTokenizerJson load.
   * Rank vocabularies and tokenizer.json models only (a SupertokError ST_ERR_INVALID_ARGUMENT for a
   * merge-rules model). */
  saveCompact() {
    const h = this._ptr;
    const st = rt.ex.st_encoding_save_compact(h, 0, 0, rt.scratch, rt.err); // the size query
    if (st !== C.ST_ERR_BUFFER_TOO_SMALL) check(st, "saveCompact");
    const size = u32at(rt.scratch);
    const p = alloc(size);
    try {
      check(rt.ex.st_encoding_save_compact(h, p, size, rt.scratch, rt.err), "saveCompact");
      return mem8().slice(p, p + size);
    } finally {
      rt.ex.st_free(p);
    }
  }

  /** The core's st_special_policy for tiktoken's options, the sets as strings
   * (ST_SPECIAL_BY_TEXT; "all" as a flag): [pointer in the module, whether the caller frees it].
   * The core resolves the strings against the encoding's specials and refuses a disallowed
   * string in the text, a special token or not. A policy of flags alone (the default) is made
   * once per encoding. */
  #policy(allowedSpecial, disallowedSpecial) {
    const allowed = asSet(allowedSpecial, "allowedSpecial");
    const disallowed = asSet(disallowedSpecial, "disallowedSpecial");
    let flags = 0;
    const strings = [];
    if (allowed === "all") flags |= C.ST_SPECIAL_ALLOW_ALL;
    else for (const t of allowed) if (typeof t === "string") strings.push(policyBytes(t));
    const nAllowed = strings.length;
    if (disallowed === "all") flags |= C.ST_SPECIAL_DISALLOW_REST;
    else for (const t of disallowed) {
      if (typeof t !== "string") throw new TypeError(`disallowedSpecial holds ${String(t)}, which is not a string`);
      strings.push(policyBytes(t));
    }
    if (!strings.length) {
      let p = this.#policies.get(flags);
      if (p === undefined) {
        p = alloc(28);
        mem32().fill(0, p >>> 2, (p >>> 2) + 7);
        mem32()[(p >>> 2) + 4] = flags;
        this.#policies.set(flags, p);
        this._own(p);
      }
      return [p, false];
    }
    // one block: the 28-byte struct, the strings' ends, then the strings
    const size = strings.reduce((n, b) => n + b.length, 0);
    const p = alloc(28 + 4 * strings.length + size);
    const m = mem32(), b = p >>> 2, ep = p + 28, sp = ep + 4 * strings.length;
    m[b] = 0; m[b + 1] = nAllowed; m[b + 2] = 0; m[b + 3] = strings.length - nAllowed;
    m[b + 4] = flags | C.ST_SPECIAL_BY_TEXT; m[b + 5] = sp; m[b + 6] = ep;
    const m8 = mem8();
    let end = 0;
    strings.forEach((bytes, k) => { m8.set(bytes, sp + end); end += bytes.length; m[b + 7 + k] = end; });
    return [p, true];
  }

  #raise(status, tp) {
    const r = readError();
    if (r.kind === "ST_KIND_DISALLOWED_SPECIAL") {
      // the core's byte offset as a UTF-16 index (the repaired text has the caller's lengths), and
      // the string it found (an id may have several): the text's bytes at offset and length
      const m = mem8();
      const index = utf8Decoder.decode(m.subarray(tp, tp + r.offset)).length;
      throw disallowedError(utf8Decoder.decode(m.subarray(tp + r.offset, tp + r.offset + r.length)), index, r.token);
    }
    throw coreError(status, "text", r);
  }

  #encode(text, options, wantStarts) {
    const [pol, owned] = this.#policy(options?.allowedSpecial ?? [], options?.disallowedSpecial ?? "all");
    try {
      const [tp, tl] = putText(IN, text);
      const ip = block(OUT, 4 * tl + 4);
      const sp = wantStarts ? block(OUT2, 4 * tl + 4) : 0;
      const st = rt.ex.st_encode(this._ptr, tp, tl, pol, wantStarts ? C.ST_OFFSETS_UTF16 : 0, ip, sp, tl,
        rt.scratch, rt.err);
      if (st !== C.ST_OK) this.#raise(st, tp);
      const n = u32at(rt.scratch);
      const ids = new Uint32Array(rt.memory.buffer, ip, n).slice();
      if (!wantStarts) return ids;
      return { ids, starts: new Uint32Array(rt.memory.buffer, sp, n).slice() };
    } finally {
      if (owned) rt.ex.st_free(pol);
      done();
    }
  }

  /** The ids of text (a Uint32Array). allowedSpecial: "all" or the special tokens recognised in
   * the text (default none); disallowedSpecial: "all" (default: every special not allowed) or
   * the ones whose presence is an error (SupertokError ST_ERR_DISALLOWED_SPECIAL naming the
   * token and its UTF-16 index). Lone surrogates encode as U+FFFD (tiktoken's repair). */
  encode(text, options) { return this.#encode(text, options, false); }

  /** encode() as a plain Array of numbers. */
  encodeToArray(text, options) { return Array.from(this.#encode(text, options, false)); }

  /** The ids of text with no special token recognised or refused. */
  encodeOrdinary(text) { return this.#encode(text, ORDINARY, false); }

  /** {ids, starts}: starts[i] is the UTF-16 index (JavaScript's string index) in text where
   * token i starts; a token starting inside a character gets that character's index. */
  encodeWithOffsets(text, options) { return this.#encode(text, options, true); }

  /** The number of tokens encode() would give, counted in the core. */
  count(text, options) {
    const [pol, owned] = this.#policy(options?.allowedSpecial ?? [], options?.disallowedSpecial ?? "all");
    try {
      const [tp, tl] = putText(IN, text);
      const st = rt.ex.st_encode_count(this._ptr, tp, tl, pol, rt.scratch, rt.err);
      if (st !== C.ST_OK) this.#raise(st, tp);
      return u32at(rt.scratch);
    } finally {
      if (owned) rt.ex.st_free(pol);
      done();
    }
  }

  #unstable = 0; // the st_unstable handle, made on the first call (it indexes the tokens once)

  /** tiktoken's encode_with_unstable: {stable, completions}. stable: the ids (an Array) of a
   * prefix of text that more text cannot change; completions: the ways text's last, unstable,
   * bytes could be tokenized once more text follows, each an Array of ids that, after stable,
   * decodes to bytes starting with the whole text; each once, sorted. Computed by the core
   * (st_unstable_*), a batch of completions at a time. Options as for encode(); byte-level
   * encodings without supermerges only (SupertokError ST_ERR_INVALID_ARGUMENT otherwise). */
  encodeWithUnstable(text, options) {
    if (this.#unstable === 0) {
      check(rt.ex.st_unstable_new(this._ptr, 0, rt.scratch, rt.err), "encoding");
      this.#unstable = u32at(rt.scratch);
      this._own(this.#unstable, "st_unstable_free"); // it reads nothing of the encoding when freed
    }
    const u = this.#unstable;
    const [pol, owned] = this.#policy(options?.allowedSpecial ?? [], options?.disallowedSpecial ?? "all");
    try {
      const [tp, tl] = putText(IN, text);
      const st = rt.ex.st_unstable_encode(u, tp, tl, pol, rt.err);
      if (st !== C.ST_OK) this.#raise(st, tp);
      rt.ex.st_unstable_stable(u, 0, 0, rt.scratch, 0); // the size query
      const ns = u32at(rt.scratch);
      let ip = block(OUT, 4 * ns + 4);
      check(rt.ex.st_unstable_stable(u, ip, ns, rt.scratch, rt.err), "text");
      const stable = Array.from(new Uint32Array(rt.memory.buffer, ip, ns));
      const seen = new Map();
      const length = rt.ex.st_unstable_length(u);
      if (length) {
        const cap = Math.max(1 << 16, length), maxN = 1 << 12; // one completion always fits
        ip = block(OUT, 4 * cap);
        const lp = block(OUT2, 4 * maxN);
        for (;;) {
          check(rt.ex.st_unstable_next(u, ip, cap, lp, maxN, rt.scratch, rt.scratch + 4, rt.err), "text");
          const count = u32at(rt.scratch + 4);
          if (!count) break;
          const flat = new Uint32Array(rt.memory.buffer, ip, u32at(rt.scratch));
          const lengths = new Uint32Array(rt.memory.buffer, lp, count);
          for (let k = 0, at = 0; k < count; at += lengths[k++]) {
            const c = Array.from(flat.subarray(at, at + lengths[k]));
            seen.set(c.join(","), c);
          }
        }
      }
      const completions = [...seen.values()].sort((x, y) => {
        for (let i = 0; i < x.length && i < y.length; i++) if (x[i] !== y[i]) return x[i] - y[i];
        return x.length - y.length;
      });
      return { stable, completions };
    } finally {
      if (owned) rt.ex.st_free(pol);
      done();
    }
  }

  #decodeCall(ids, strict, raw) {
    try {
      const [ip, n] = putIds(IN, ids);
      let cap = 8 * n + 64, asked = false; // a guess; the size the core reports otherwise
      for (;;) {
        const op = block(OUT, cap);
        const st = raw ? rt.ex.st_decode(this._ptr, ip, n, op, cap, rt.scratch, rt.err)
          : rt.ex.st_decode_text(this._ptr, ip, n, strict ? C.ST_UBE_STRICT : 0, op, cap, rt.scratch, rt.err);
        if (st === C.ST_ERR_BUFFER_TOO_SMALL && !asked) { cap = u32at(rt.scratch); asked = true; continue; }
        if (st !== C.ST_OK) throw coreError(undefined, "ids");
        const len = u32at(rt.scratch);
        return raw ? mem8().slice(op, op + len) : utf8Decoder.decode(mem8().subarray(op, op + len));
      }
    } finally {
      done();
    }
  }

  /** The text of ids. errors "replace" (malformed text becomes U+FFFD, as CPython decodes) or
   * "strict" (a SupertokError ST_ERR_INVALID_UTF8 whose offset is the index of the id where the
   * malformed text starts). An id that is no token: SupertokError ST_ERR_INVALID_TOKEN. */
  decode(ids, { errors = "replace" } = {}) {
    return this.#decodeCall(ids, errorsFlag(errors) !== 0, false);
  }

  /** The bytes of ids (a Uint8Array). A UBE model's tokens are symbols, not bytes: the UTF-8 of
   * decode(ids). */
  decodeBytes(ids) {
    if (this.alphabet === "ube") return utf8Encoder.encode(this.decode(ids));
    return this.#decodeCall(ids, false, true);
  }

  /** The bytes of one token (ordinary or special; a UBE token: its symbols, 2 bytes each). */
  decodeSingleTokenBytes(id) {
    if (!Number.isInteger(id) || id < 0 || id > 0xFFFFFFFF) throw new RangeError(`id ${String(id)} is not an integer in 0..2^32-1`);
    const st = rt.ex.st_token_bytes(this._ptr, id, rt.scratch, rt.scratch + 4, rt.err);
    if (st !== C.ST_OK) throw coreError(undefined, "token");
    const p = u32at(rt.scratch), n = u32at(rt.scratch + 4);
    return mem8().slice(p, p + n);
  }

  /** An incremental decoder of this encoding's ids. */
  incrementalDecoder({ errors = "replace" } = {}) {
    return new IncrementalDecoder(this, { errors });
  }
}
const ORDINARY = { allowedSpecial: [], disallowedSpecial: [] };

/** Feed ids; each add() returns the characters completed so far (the text decode() gives for
 * the whole stream, for any split); flush() ends the stream (and may be fed on after). After an
 * error the decoder is as it was before the call. */
export class IncrementalDecoder extends Handle {
  #enc;
  constructor(encoding, { errors = "replace" } = {}) {
    need();
    const flags = errorsFlag(errors);
    const st = rt.ex.st_decoder_new(encoding._ptr, flags, 0, rt.scratch, rt.err);
    if (st !== C.ST_OK) throw coreError(undefined, "decoder");
    const p = u32at(rt.scratch);
    super(p, [["st_decoder_free", p]]);
    this.#enc = encoding; // the decoder borrows the encoding: keep it alive
  }
  #live() {
    // the core decoder borrows the encoding: once that is freed the decoder must not run
    if (this.#enc.freed) throw new Error("supertok: IncrementalDecoder used after its Encoding was freed");
    return this._ptr;
  }
  #feed(ids, flags) {
    const d = this.#live();
    try {
      const [ip, n] = putIds(IN, ids);
      let cap = 12 * n + 64; // most tokens are short; a longer output is asked for again
      for (;;) {
        const op = block(OUT, cap);
        const st = rt.ex.st_decoder_feed(d, ip, n, flags, op, cap, rt.scratch, rt.err);
        if (st === C.ST_ERR_BUFFER_TOO_SMALL) { cap = u32at(rt.scratch); continue; }
        if (st !== C.ST_OK) throw coreError(undefined, "ids");
        return utf8Decoder.decode(mem8().subarray(op, op + u32at(rt.scratch)));
      }
    } finally {
      done();
    }
  }
  add(ids) {
    if (typeof ids === "number") ids = [ids];
    return this.#feed(ids, 0);
  }
  flush() { return this.#feed([], C.ST_UBE_FINAL); }
  reset() { rt.ex.st_decoder_reset(this.#live()); }
  get encoding() { return this.#enc; }
}

// ---- training ---------------------------------------------------------------------------------
// The core trains (docs/training.md); this layer only hands it the texts and follows the
// trainer's state: phase-1 steps; for superwords, when the trainer asks for the texts again
// (ST_TRAINING_CANDIDATES), the same texts into a candidates counter it gives and takes back,
// then the step that closes the pass (the n-gram split, phase 2) and phase-2 steps.

const TRAIN_MODES = { paper: C.ST_TRAIN_PAPER, hf: C.ST_TRAIN_HF };
const TRAIN_ALPHABETS = { bytes: C.ST_ALPHABET_BYTES, ube: C.ST_ALPHABET_UBE };
const TRAIN_ALGORITHMS = { bpe: C.ST_ALGORITHM_BPE, boundless: C.ST_ALGORITHM_BOUNDLESS, superbpe: C.ST_ALGORITHM_SUPERBPE };
const TRAIN_BATCH_BYTES = 1 << 20; // text one core call counts (the reusable block's size)
const TRAIN_BATCH_DOCS = 4096;
const TRAIN_STEP = 4096; // merges a step makes between progress reports

function choice(name, value, choices) {
  if (typeof value !== "string" || !Object.hasOwn(choices, value)) {
    throw new RangeError(`${name} must be one of ${Object.keys(choices).map((c) => JSON.stringify(c)).join(", ")}, `
      + `not ${JSON.stringify(value)}`);
  }
  return choices[value];
}

function uint64Option(name, value, min) {
  if (typeof value === "bigint" ? value < BigInt(min) || value >= 1n << 64n : !Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`${name} must be an integer of at least ${min}, not ${String(value)}`);
  }
  return BigInt(value);
}

/** The documents of texts as UTF-8, in batches for one core call each: {bytes, ends (u32), first
 * (the index of its first document)}. A string with a lone surrogate is a RangeError naming the
 * document (it is not UTF-8: Python's train() refuses it too). */
function* trainBatches(texts) {
  let parts = [], size = 0, first = 0, k = 0;
  const flush = () => {
    const bytes = new Uint8Array(size), ends = new Uint32Array(parts.length);
    let o = 0;
    for (let i = 0; i < parts.length; i++) { bytes.set(parts[i], o); o += parts[i].length; ends[i] = o; }
    const batch = { bytes, ends, first };
    parts = []; size = 0; first = k;
    return batch;
  };
  for (const doc of texts) {
    let b;
    if (typeof doc === "string") {
      try { checkWellFormed(doc); } catch (e) {
        const err = new RangeError(`texts[${k}]: ${e.message}`);
        err.document = k;
        err.index = e.index;
        throw err;
      }
      b = utf8Encoder.encode(doc);
    } else if (doc instanceof Uint8Array) b = doc;
    else throw new TypeError(`texts[${k}] is ${doc === null ? "null" : typeof doc}, not a string or a Uint8Array`);
    parts.push(b);
    size += b.length;
    k++;
    if (size >= TRAIN_BATCH_BYTES || parts.length >= TRAIN_BATCH_DOCS) yield flush();
  }
  if (parts.length) yield flush();
}

/** Count a batch into counter (st_counter_add_documents); invalid UTF-8 is a SupertokError
 * naming the document (`document`: its index in texts). */
function countBatch(counter, { bytes, ends, first }) {
  const tp = putBytes(IN, bytes);
  const ep = block(OUT, 4 * ends.length + 4);
  mem32().set(ends, ep >>> 2);
  const st = rt.ex.st_counter_add_documents(counter, tp, ep, ends.length, rt.err);
  if (st !== C.ST_OK) {
    const r = readError();
    const e = coreError(st, `texts[${first + r.input}]`, r);
    e.document = first + r.input;
    throw e;
  }
}

/** specials (strings) joined as UTF-8 in block OUT2 with their ends in block OUT: [text, ends, n]. */
function putSpecials(specials) {
  const parts = specials.map((t) => utf8Encoder.encode(t));
  const total = parts.reduce((a, b) => a + b.length, 0);
  const tp = block(OUT2, total + 1);
  const ep = block(OUT, 4 * parts.length + 4);
  const m = mem8(), m32 = mem32();
  let o = 0;
  parts.forEach((b, i) => { m.set(b, tp + o); o += b.length; m32[(ep >>> 2) + i] = o; });
  return [tp, ep, parts.length];
}

/** Train a byte-level (or UBE) BPE tokenizer on texts, as Python's supertok.train does on the
 * same documents (the same model file, byte for byte), and return it as an Encoding
 * (modelBytes() gives its model file). texts: an iterable of documents, each a string or
 * UTF-8 bytes (Uint8Array); superwords read them twice: an array (or any iterable whose
 * [Symbol.iterator] gives a fresh iterator) is read again, a one-shot iterator (a generator) is
 * kept in memory as UTF-8 for the second pass. options (docs/training.md): vocabSize (required),
 * mode ("paper" | "hf"), alphabet ("bytes" | "ube"), pattern, scriptAware, scripts,
 * specialTokens (strings), minFrequency, algorithm ("bpe" | "boundless" | "superbpe"),
 * supermerges (required with "superbpe"), ngramSplit, name (the model's name; default
 * "supertok-<mode or algorithm>-<alphabet>-<vocabSize>", as Python's), minCount (drop the pretokens
 * counted fewer times before training; default 1), extend (a BPE Encoding of merge rules, or a
 * model file's bytes, to extend as SuperBPE's Stage 2 does: its first seedMerges merges (default
 * all) replayed, then merges on to vocabSize, none making a token of more than four words or
 * holding ": "; with it alphabet is the model's, pattern defaults to "superbpe", minFrequency to 2
 * and minCount to 5; docs/training.md), onProgress (called with
 * {phase, documents, bytes, merges, target, supermerges, candidates, done}). Options the core
 * refuses (a vocabSize below the alphabet, superwords in hf mode, supermerges above the merges
 * vocabSize leaves) are a SupertokError. Runs on the calling thread (in a browser, in a Worker
 * for big corpora). */
export async function train(texts, options = {}) {
  await init();
  const {
    vocabSize, mode = "paper", scriptAware = false, scripts = null, specialTokens = [], algorithm = "bpe",
    supermerges = null, ngramSplit = false, name = null, onProgress = null, extend = null, seedMerges = null,
  } = options;
  if (texts == null || typeof texts === "string" || typeof texts[Symbol.iterator] !== "function") {
    throw new TypeError("texts must be an iterable (an array, a generator) of strings or Uint8Arrays");
  }
  let baseBytes = null;
  if (extend != null) {
    baseBytes = extend instanceof Uint8Array ? extend
      : typeof extend?.modelBytes === "function" ? extend.modelBytes() : null;
    if (baseBytes === null) {
      throw new TypeError("extend takes an Encoding of merge rules (train, loadModel) or a model file's bytes");
    }
    if (algorithm !== "bpe") throw new TypeError(`extend trains BPE merges after the seed merges: algorithm "${algorithm}" does not apply`);
    if (mode !== "paper") throw new TypeError(`extend trains in mode "paper", not "${mode}"`);
  } else if (seedMerges != null) {
    throw new TypeError("seedMerges applies only with extend (the model whose merges seed training)");
  }
  const pattern = options.pattern ?? (baseBytes ? "superbpe" : "o200k");
  const minFrequency = options.minFrequency ?? (baseBytes ? 2 : 0);
  const minCount = uint64Option("minCount", options.minCount ?? (baseBytes ? 5 : 1), 1);
  let alphabet = options.alphabet ?? "bytes";
  const vs = uint64Option("vocabSize", vocabSize, 1);
  const minFreq = uint64Option("minFrequency", minFrequency, 0);
  const modeId = choice("mode", mode, TRAIN_MODES);
  const algorithmId = choice("algorithm", algorithm, TRAIN_ALGORITHMS);
  if (algorithm === "superbpe" && supermerges == null) {
    throw new TypeError("supermerges is required with algorithm \"superbpe\": the number of supermerges to learn "
      + "after the first vocabSize - supermerges regular merges");
  }
  const s = supermerges == null ? 0n : uint64Option("supermerges", supermerges, 0);
  if (typeof ngramSplit !== "boolean") throw new TypeError(`ngramSplit must be true or false, not ${String(ngramSplit)}`);
  if (typeof specialTokens === "string" || typeof specialTokens?.[Symbol.iterator] !== "function") {
    throw new TypeError("specialTokens must be an array of strings");
  }
  const specials = [...specialTokens];
  specials.forEach((t, i) => {
    if (typeof t !== "string" || !t) throw new TypeError(`specialTokens[${i}] must be a non-empty string`);
    checkWellFormed(t);
  });
  const report = typeof onProgress === "function" ? onProgress : () => {};
  const pid = patternId(pattern);
  const spec = scriptsSpec(scriptAware, scripts);

  const owned = []; // [free export, pointer] of the core objects made here, freed at the end
  const take = (free) => { const p = u32at(rt.scratch); owned.push([free, p]); return p; };
  const release = (p) => {
    const i = owned.findIndex((o) => o[1] === p);
    rt.ex[owned[i][0]](p);
    owned.splice(i, 1);
  };
  try {
    // the model extended: its merges (in its parsed form, freed at the end), name and alphabet
    let base = null, nSeeds = 0;
    if (baseBytes) {
      const dp = alloc(baseBytes.length);
      owned.push(["st_free", dp]);
      mem8().set(baseBytes, dp);
      check(rt.ex.st_model_parse(dp, baseBytes.length, 0, rt.scratch, rt.err), "extend");
      base = take("st_model_free");
      const sec = putBytes(IN, utf8Encoder.encode("supermerges\0"));
      if (rt.ex.st_model_kind(base) !== C.ST_MODEL_RULES || Number(rt.ex.st_model_count(base, sec)) !== 0) {
        throw new TypeError("extend takes a BPE model of merge rules (no supermerges, not a rank file)");
      }
      const baseAlphabet = rt.ex.st_model_alphabet(base) === C.ST_ALPHABET_UBE ? "ube" : "bytes";
      if (options.alphabet != null && options.alphabet !== baseAlphabet) {
        throw new TypeError(`alphabet "${options.alphabet}" differs from the model extended, whose alphabet is "${baseAlphabet}"`);
      }
      alphabet = baseAlphabet;
      const merges = Number(rt.ex.st_model_count(base, putBytes(IN, utf8Encoder.encode("merges\0"))));
      nSeeds = seedMerges == null ? merges : Number(uint64Option("seedMerges", seedMerges, 0));
      if (nSeeds > merges) throw new RangeError(`seedMerges ${nSeeds} is more than the ${merges} merges of the model`);
    }
    const modelName = name ?? `supertok-${baseBytes ? "extend" : algorithm === "bpe" ? mode : algorithm}-${alphabet}-${vocabSize}`;
    if (typeof modelName !== "string") throw new TypeError("name must be a string");
    const alphabetId = choice("alphabet", alphabet, TRAIN_ALPHABETS);
    const newCounter = () => {
      let sp = 0, sl = 0;
      if (spec !== null) [sp, sl] = putText(IN, spec);
      check(rt.ex.st_counter_new(pid, scriptAware ? C.ST_PRETOK_SCRIPT_AWARE : 0, sp, sl, 0, rt.scratch, rt.err),
        "pre-tokenizer");
      return take("st_counter_free");
    };
    const counterStat = (c, what) => Number(rt.ex.st_counter_stat(c, what));
    // the first pass; a one-shot iterator's batches are kept for the second
    const again = texts[Symbol.iterator]() !== texts;
    const kept = algorithmId !== C.ST_ALGORITHM_BPE && !again ? [] : null;
    const counter = newCounter();
    for (const batch of trainBatches(texts)) {
      countBatch(counter, batch);
      kept?.push(batch);
      report({ phase: "count", documents: counterStat(counter, C.ST_COUNTER_DOCUMENTS),
        bytes: counterStat(counter, C.ST_COUNTER_BYTES), merges: 0, target: null, supermerges: 0, candidates: null,
        done: false });
    }
    const documents = counterStat(counter, C.ST_COUNTER_DOCUMENTS), bytes = counterStat(counter, C.ST_COUNTER_BYTES);
    report({ phase: "count", documents, bytes, merges: 0, target: null, supermerges: 0, candidates: null, done: true });
    if (minCount > 1n) check(rt.ex.st_counter_prune(counter, minCount, rt.err), "minCount");

    check(rt.ex.st_trainer_new(counter, modeId, alphabetId, vs, minFreq, specials.length, 0, rt.scratch, rt.err),
      "training options");
    const trainer = take("st_trainer_free");
    release(counter);
    if (specials.length) check(rt.ex.st_trainer_set_specials(trainer, ...putSpecials(specials), rt.err), "specialTokens");
    check(rt.ex.st_trainer_set_superwords(trainer, algorithmId, s, ngramSplit ? C.ST_SUPERWORDS_NGRAM_SPLIT : 0,
      rt.err), "superwords");
    if (base) {
      const sec = putBytes(IN, utf8Encoder.encode("merges\0"));
      rt.ex.st_model_pairs(base, sec, rt.scratch, rt.scratch + 4);
      const pairs = u32at(rt.scratch);
      const np = rt.ex.st_model_name(base, rt.scratch) >>> 0;
      const nameLen = u32at(rt.scratch);
      check(rt.ex.st_trainer_set_seed_merges(trainer, pairs, nSeeds, np, nameLen, 4, C.ST_EXTEND_COLON_SPACE,
        minCount, rt.err), "extend");
    }
    const tstat = (what) => Number(rt.ex.st_trainer_stat(trainer, what));
    const step = (n) => {
      check(rt.ex.st_trainer_step(trainer, n, rt.scratch, rt.err), "training");
      return u32at(rt.scratch);
    };
    const target = tstat(C.ST_TRAINER_TARGET);
    let made = 0, candidates = null;
    for (;;) {
      const state = tstat(C.ST_TRAINER_STATE);
      if (state === C.ST_TRAINING_DONE) break;
      if (state === C.ST_TRAINING_CANDIDATES) {
        // the texts again, into a candidates counter the trainer gives and takes back
        const k = (check(rt.ex.st_trainer_candidates_new(trainer, 0, rt.scratch, rt.err), "candidates"),
          take("st_counter_free"));
        for (const batch of kept ?? trainBatches(texts)) {
          countBatch(k, batch);
          report({ phase: "candidates", documents: counterStat(k, C.ST_COUNTER_DOCUMENTS),
            bytes: counterStat(k, C.ST_COUNTER_BYTES), merges: made, target, supermerges: 0, candidates: null,
            done: false });
        }
        if (kept) kept.length = 0;
        check(rt.ex.st_trainer_candidates_add(trainer, k, rt.err), "candidates");
        release(k);
        candidates = tstat(C.ST_TRAINER_CANDIDATES);
        report({ phase: "candidates", documents, bytes, merges: made, target, supermerges: 0, candidates, done: true });
        if (ngramSplit) report({ phase: "split", documents, bytes, merges: made, target, supermerges: 0, candidates, done: false });
        step(1); // closes the pass: the n-gram split, then phase 2 starts
        candidates = tstat(C.ST_TRAINER_CANDIDATES);
        if (ngramSplit) report({ phase: "split", documents, bytes, merges: made, target, supermerges: 0, candidates, done: true });
        continue;
      }
      // a phase of merges: phase 1, or phase 2's steps
      const phase = state === C.ST_TRAINING_MERGES ? "merge" : "supermerge";
      const want = phase === "merge" ? target : tstat(C.ST_TRAINER_STEPS);
      let n = 0;
      for (;;) {
        const k = step(TRAIN_STEP);
        n += k;
        const last = k < TRAIN_STEP;
        report({ phase, documents, bytes, merges: n, target: want, supermerges: tstat(C.ST_TRAINER_SUPERMERGES),
          candidates, done: last });
        if (last) break;
      }
      if (phase === "merge") made = n;
    }

    // the model file
    const nameBytes = utf8Encoder.encode(modelName);
    const [sp, se, ns] = putSpecials(specials);
    const np = putBytes(IN, nameBytes);
    const st = rt.ex.st_trainer_write_model(trainer, np, nameBytes.length, sp, se, ns, 0, 0, rt.scratch, rt.err);
    if (st !== C.ST_ERR_BUFFER_TOO_SMALL) check(st, "model");
    const size = u32at(rt.scratch);
    const op = alloc(size);
    owned.push(["st_free", op]);
    check(rt.ex.st_trainer_write_model(trainer, np, nameBytes.length, sp, se, ns, op, size, rt.scratch, rt.err), "model");
    const model = mem8().slice(op, op + u32at(rt.scratch));
    return makeModel(model);
  } finally {
    for (const [free, p] of owned.reverse()) rt.ex[free](p);
    done();
  }
}

// ---- loading --------------------------------------------------------------------------------

function toBytes(data, what) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (typeof data === "string") return utf8Encoder.encode(data);
  throw new TypeError(`${what} must be bytes (Uint8Array, ArrayBuffer) or a string`);
}

function base64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return btoa(s);
}

/** The special tokens {text: id} in the rank-file line format the core reads. */
function specialsText(specials) {
  return [...specials].sort((x, y) => x[1] - y[1]).map(([t, i]) => `${base64(utf8Encoder.encode(t))} ${i}\n`).join("");
}

function patternFromRegex(patStr) {
  const [pp, pl] = putText(IN, patStr);
  const st = rt.ex.st_pattern_from_regex(pp, pl, rt.scratch, rt.err);
  if (st !== C.ST_OK) {
    const e = coreError(undefined, "patStr");
    e.message = `patStr: no supertok pre-tokenizer implements this regex (supertok has a scanner for each of `
      + `tiktoken's patterns, r50k/p50k, cl100k and o200k, for SuperBPE's Stage-2 pattern and for Llama 3's, `
      + `Qwen 2's and DeepSeek V3's, and no regex engine) (${e.code})`;
    throw e;
  }
  return u32at(rt.scratch);
}

/** An Encoding from a tiktoken rank file (lines "base64(token) rank") or from a compact image
 * (.stvc, what Encoding.saveCompact() and the package's compact/ files hold): {name, ranks or
 * compact (its bytes: Uint8Array | ArrayBuffer | string for ranks, or a URL to read: http(s):,
 * or file: in Node), specialTokens ({text: id}), patStr (one of tiktoken's pat_str regexes)}.
 * Loads the wasm module first if needed (init()). */
export async function loadEncoding({ name, ranks, compact, specialTokens = {}, patStr }) {
  if ((ranks == null) === (compact == null)) throw new TypeError("loadEncoding: give ranks or compact (one of them)");
  await init();
  if (ranks instanceof URL) ranks = await readUrl(ranks);
  if (compact instanceof URL) compact = await readUrl(compact);
  return ranks != null
    ? makeEncoding({ name, ranks: toBytes(ranks, "ranks"), specialTokens, patStr })
    : makeEncoding({ name, compact: toBytes(compact, "compact"), specialTokens, patStr });
}

/** The core builds the encoding from the vocabulary's bytes: the rank file's parser
 * (st_encoding_new_tiktoken) or the compact image's (st_encoding_new_compact); this layer only
 * copies the bytes into the module. */
function makeEncoding({ name, ranks, compact, specialTokens, patStr }) {
  const specials = new Map(Object.entries(specialTokens));
  const data = ranks ?? compact;
  try {
    const pid = patternFromRegex(patStr);
    const patternName = Object.keys(PATTERNS).find((k) => PATTERNS[k] === pid);
    const split = CATALOGUE.patterns[patternName]?.split;
    if (split) {
      // tiktoken encodes only the regex's matches; this pattern's pieces are the text between them too
      throw new TypeError(`patStr splits ${split} (the text between its matches is a piece too, as HuggingFace's `
        + "Split does); tiktoken keeps only the matches, so a tiktoken vocabulary with it would not give tiktoken's "
        + "ids: use it in a model file (loadModel)");
    }
    const pt = pretokenizer(patternName, false, null);
    const rp = alloc(data.length);
    mem8().set(data, rp);
    const spec = utf8Encoder.encode(specialsText(specials));
    const sp = putBytes(IN, spec);
    const sl = spec.length;
    const make = ranks ? rt.ex.st_encoding_new_tiktoken : rt.ex.st_encoding_new_compact;
    const st = make(rp, data.length, sp, sl, pt, 0, rt.scratch, rt.err);
    rt.ex.st_free(rp);
    const what = ranks ? "rank file" : "compact vocabulary";
    if (st !== C.ST_OK) throw coreError(undefined, name === undefined ? what : `${what} of ${name}`);
    return new Encoding(u32at(rt.scratch), { name, specials, alphabet: "bytes", patternId: pid });
  } finally {
    done();
  }
}

const cache = new Map();

async function sha256Hex(bytes) {
  // Web Crypto: global in browsers, workers and Node 19+; node:crypto's in Node 18
  const subtle = globalThis.crypto?.subtle ?? (await import("node:crypto")).webcrypto.subtle;
  const d = new Uint8Array(await subtle.digest("SHA-256", bytes));
  return Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The names getEncoding takes. */
export function listEncodingNames() { return [...ENCODING_NAMES]; }

/** A shipped encoding ("o200k_base", "cl100k_base", "p50k_base", "r50k_base", "gpt2",
 * "p50k_edit", "o200k_harmony"), loaded once and only when asked for (each encoding its own
 * files). By default from the compact images (compact/<name>.stvc and compact/manifest.json,
 * beside this module: Node reads the files, a browser fetches them), checked against the
 * manifest's sha256. options.format "tiktoken": from the rank files instead (vocab/<name>.tiktoken
 * and vocab/<name>.json). options.vocab: a directory URL to read them from instead of the
 * package's (the compact format: manifest.json and <name>.stvc; tiktoken: <name>.json and
 * <name>.tiktoken). */
export function getEncoding(name, options = {}) {
  const format = options.format ?? "compact";
  if (format !== "compact" && format !== "tiktoken") {
    return Promise.reject(new RangeError(`format must be "compact" or "tiktoken", not ${JSON.stringify(format)}`));
  }
  const key = `${name}\u0000${format}\u0000${options.vocab ?? ""}`;
  let p = cache.get(key);
  if (p === undefined) {
    p = format === "compact" ? loadShippedCompact(name, options.vocab) : loadShipped(name, options.vocab);
    cache.set(key, p);
    p.catch(() => cache.delete(key));
  }
  return p;
}

/* What the catalogue says a shipped encoding is: {base (the stem of its rank file and compact
 * image), specialTokens, patStr}. */
function shippedEncoding(name) {
  if (!Object.hasOwn(CATALOGUE.encodings, name)) {
    throw new RangeError(`Unknown encoding ${name}.\nsupertok ships: ${ENCODING_NAMES.join(", ")}`);
  }
  const entry = CATALOGUE.encodings[name];
  return { base: entry.rank_file, specialTokens: catalogueSpecialTokens(entry),
    patStr: CATALOGUE.patterns[entry.pattern].pat_str };
}

const manifests = new Map(); // directory -> Promise of its manifest.json

async function loadShippedCompact(name, vocab) {
  const { base, specialTokens, patStr } = shippedEncoding(name);
  const read = vocab == null ? (f) => readAsset(`compact/${f}`) : (f) => readUrl(new URL(f, vocab));
  const mkey = vocab == null ? "" : String(vocab);
  let mp = manifests.get(mkey);
  if (mp === undefined) {
    mp = read("manifest.json").then((b) => JSON.parse(utf8Decoder.decode(b)));
    manifests.set(mkey, mp);
    mp.catch(() => manifests.delete(mkey));
  }
  const [, manifest, image] = await Promise.all([init(), mp, read(`${base}.stvc`)]);
  const meta = manifest[base];
  if (meta === undefined) throw new Error(`manifest.json lists no ${base}`);
  return makeChecked(`${base}.stvc`, image, meta.sha256,
    { name, compact: image, specialTokens, patStr });
}

async function loadShipped(name, vocab) {
  const { base, specialTokens, patStr } = shippedEncoding(name);
  const read = vocab == null ? (f) => readAsset(`vocab/${f}`) : (f) => readUrl(new URL(f, vocab));
  const [, metaBytes, ranks] = await Promise.all([init(), read(`${base}.json`), read(`${base}.tiktoken`)]);
  const meta = JSON.parse(utf8Decoder.decode(metaBytes));
  return makeChecked(`${base}.tiktoken`, ranks, meta.sha256,
    { name, ranks, specialTokens, patStr });
}

/* makeEncoding(args) from a shipped file's bytes, refused (and freed) unless the bytes' sha256 is
 * the published one. The digest runs off the main thread (Web Crypto) while the core parses. */
async function makeChecked(file, bytes, sha256, args) {
  const digest = sha256Hex(bytes);
  let enc;
  try {
    enc = makeEncoding(args);
  } finally {
    const got = await digest;
    if (got !== sha256) {
      enc?.free();
      throw new Error(`${file}: sha256 is ${got}, expected ${sha256}: the file is damaged or not the published one`);
    }
  }
  return enc;
}

/** The encoding name tiktoken 0.14 maps a model name to (exact names, then prefixes). */
export function encodingNameForModel(modelName) {
  const exact = CATALOGUE.model_to_encoding;
  let name = Object.hasOwn(exact, modelName) ? exact[modelName] : undefined;
  if (name === undefined) {
    for (const [prefix, enc] of Object.entries(CATALOGUE.model_prefix_to_encoding)) {
      if (modelName.startsWith(prefix)) { name = enc; break; }
    }
  }
  if (name === undefined) {
    throw new RangeError(`Could not automatically map ${modelName} to a tokeniser. Please use \`getEncoding\` to explicitly get the tokeniser you expect.`);
  }
  return name;
}

/** getEncoding(encodingNameForModel(modelName)). */
export function encodingForModel(modelName, options) {
  const name = encodingNameForModel(modelName);
  if (!ENCODING_NAMES.includes(name)) {
    return Promise.reject(new RangeError(`model ${modelName} uses the encoding ${name}, which supertok's JavaScript module does not ship yet (it ships ${ENCODING_NAMES.join(", ")})`));
  }
  return getEncoding(name, options);
}

/** An Encoding from a supertok model file (docs/formats/model-format.md; the .stmodel files the Python
 * package writes): its bytes, its text, or a URL to read; parsed and checked by the core: a SupertokError ST_ERR_MALFORMED_MODEL names
 * the line and the field. Returns a Promise (the module loads first if needed). */
export async function loadModel(data) {
  await init();
  if (data instanceof URL) data = await readUrl(data);
  if (data !== null && typeof data === "object" && !(data instanceof Uint8Array) && !(data instanceof ArrayBuffer)
      && !ArrayBuffer.isView(data)) return makeTokenizerJson(utf8Encoder.encode(JSON.stringify(data)), undefined);
  const bytes = toBytes(data, "model");
  let k = 0;
  while (k < bytes.length && (bytes[k] === 0x20 || bytes[k] === 0x0a || bytes[k] === 0x0d || bytes[k] === 0x09)) k++;
  // "{": a tokenizer.json; "sthfvc\0\1": its compact image (saveCompact); the core reads either
  const compactHf = bytes.length >= 8 && utf8Decoder.decode(bytes.subarray(0, 6)) === "sthfvc" && bytes[6] === 0 && bytes[7] === 1;
  return bytes[k] === 0x7b || compactHf ? makeTokenizerJson(bytes, undefined) : makeModel(bytes);
}

/** An Encoding from a HuggingFace tokenizer.json (a byte-level BPE model: Llama 3, Qwen 2/3,
 * DeepSeek V3, GPT-2 and others with the same pre-tokenizers): its bytes, its text, the parsed
 * object, or a URL to read. The core reads and checks it (st_encoding_new_tokenizer_json): a file
 * it does not implement is a SupertokError ST_ERR_MALFORMED_MODEL naming the field and its byte
 * offset. Its added tokens marked special are the encoding's special tokens (encode with
 * allowedSpecial "all" gives tokenizers' encode(text, add_special_tokens=False)); the others are
 * always matched. Returns a Promise (the module loads first if needed). */
export async function fromTokenizerJson(data, { name } = {}) {
  await init();
  if (data instanceof URL) data = await readUrl(data);
  if (data !== null && typeof data === "object" && !(data instanceof Uint8Array) && !(data instanceof ArrayBuffer)
      && !ArrayBuffer.isView(data)) data = JSON.stringify(data);
  return makeTokenizerJson(toBytes(data, "tokenizer.json"), name);
}

function makeTokenizerJson(bytes, name) {
  const dp = alloc(bytes.length);
  try {
    mem8().set(bytes, dp);
    check(rt.ex.st_encoding_new_tokenizer_json(dp, bytes.length, 0, rt.scratch, rt.err), "tokenizer.json");
    const h = u32at(rt.scratch);
    const specials = new Map();
    const n = rt.ex.st_encoding_n_special(h) >>> 0;
    for (let i = 0; i < n; i++) {
      const id = rt.ex.st_encoding_special_id(h, i) >>> 0;
      if (!(rt.ex.st_encoding_added_flags(h, id) & C.ST_ADDED_SPECIAL)) continue; // always matched: no special
      check(rt.ex.st_token_bytes(h, id, rt.scratch, rt.scratch + 4, rt.err), "tokenizer.json");
      const p = u32at(rt.scratch);
      specials.set(utf8Decoder.decode(mem8().subarray(p, p + u32at(rt.scratch + 4))), id);
    }
    const patternId = rt.ex.st_encoding_pattern(h);
    return new Encoding(h, { name: name ?? "tokenizer", specials, alphabet: "bytes", patternId, model: bytes.slice() });
  } finally {
    rt.ex.st_free(dp);
    done();
  }
}

function makeModel(bytes) {
  const dp = alloc(bytes.length);
  let m = 0;
  try {
    mem8().set(bytes, dp);
    check(rt.ex.st_model_parse(dp, bytes.length, 0, rt.scratch, rt.err), "model");
    m = u32at(rt.scratch);
    const np = rt.ex.st_model_name(m, rt.scratch) >>> 0;
    const name = utf8Decoder.decode(mem8().subarray(np, np + u32at(rt.scratch)));
    const alphabet = rt.ex.st_model_alphabet(m) === C.ST_ALPHABET_UBE ? "ube" : "bytes";
    const patternId = rt.ex.st_model_pattern(m);
    check(rt.ex.st_encoding_from_model(m, 0, rt.scratch, rt.err), "model");
    const h = u32at(rt.scratch);
    const specials = new Map();
    const n = rt.ex.st_encoding_n_special(h) >>> 0;
    for (let i = 0; i < n; i++) {
      const id = rt.ex.st_encoding_special_id(h, i) >>> 0;
      check(rt.ex.st_token_bytes(h, id, rt.scratch, rt.scratch + 4, rt.err), "model");
      const p = u32at(rt.scratch);
      specials.set(utf8Decoder.decode(mem8().subarray(p, p + u32at(rt.scratch + 4))), id);
    }
    return new Encoding(h, { name, specials, alphabet, patternId, model: bytes.slice() });
  } finally {
    if (m) rt.ex.st_model_free(m);
    rt.ex.st_free(dp);
    done();
  }
}

/** A tokenizer in a worker (a Web Worker in browsers, a worker_threads Worker in Node.js), for
 * long texts that would otherwise block the page: each method returns a Promise and the work
 * runs off the calling thread. Errors come back as SupertokError / RangeError with their fields.
 * workerUrl: where worker.mjs is (default: beside this module). */
export async function createWorker(workerUrl = new URL("./worker.mjs", import.meta.url)) {
  let w, on, post;
  if (typeof Worker !== "undefined") {
    w = new Worker(workerUrl, { type: "module" });
    on = (fn, fail) => { w.onmessage = (ev) => fn(ev.data); w.onerror = (ev) => fail(ev.error ?? new Error(ev.message)); };
    post = (m) => w.postMessage(m);
  } else {
    const { Worker: NodeWorker } = await import("node:worker_threads");
    // the worker inherits node's flags, except --input-type, which only applies to the main
    // entry (a program run with `node --input-type=module -e ...` would fail to start it)
    w = new NodeWorker(workerUrl, { execArgv: process.execArgv.filter((a) => !a.startsWith("--input-type")) });
    w.unref(); // an idle worker does not keep the process alive
    on = (fn, fail) => { w.on("message", fn); w.on("error", fail); };
    post = (m) => w.postMessage(m);
  }
  return new TokenizerWorker(w, on, post);
}

class TokenizerWorker {
  #w;
  #post;
  #pending = new Map();
  #next = 0;
  constructor(w, on, post) {
    this.#w = w;
    this.#post = post;
    on(({ id, result, error }) => {
      const p = this.#pending.get(id);
      if (p === undefined) return;
      this.#pending.delete(id);
      if (error === undefined) { p.resolve(result); return; }
      const { name, message, ...fields } = error;
      const e = name === "SupertokError" ? new SupertokError(message, fields)
        : Object.assign(new (name === "RangeError" ? RangeError : name === "TypeError" ? TypeError : Error)(message), fields);
      p.reject(e);
    }, (err) => {
      // the worker died (it could not start, or threw outside a call): every pending call fails
      for (const p of this.#pending.values()) p.reject(err);
      this.#pending.clear();
    });
  }
  #call(op, encoding, args) {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#post({ id, op, encoding, args });
    });
  }
  encode(encoding, text, options) { return this.#call("encode", encoding, [text, options]); }
  encodeOrdinary(encoding, text) { return this.#call("encodeOrdinary", encoding, [text]); }
  encodeWithOffsets(encoding, text, options) { return this.#call("encodeWithOffsets", encoding, [text, options]); }
  count(encoding, text, options) { return this.#call("count", encoding, [text, options]); }
  decode(encoding, ids, options) { return this.#call("decode", encoding, [Array.from(ids), options]); }
  /** Stop the worker (pending calls never settle). */
  terminate() { this.#w.terminate(); }
}

/** The Unicode Script property value of a code point, as the core names it ("Latin", "Han",
 * "Common", ...); null above U+10FFFF. */
export function scriptOf(codePoint) {
  need();
  const id = rt.ex.st_script_of(codePoint >>> 0);
  return id < 0 ? null : cstr(rt.ex.st_script_name(id) >>> 0);
}

/** The core's version ("0.1.0") and the Unicode version of its tables. */
export function version() { need(); return cstr(rt.ex.st_version_str() >>> 0); }
export function unicodeVersion() { need(); return cstr(rt.ex.st_unicode_version() >>> 0); }

/** Bytes of the module's linear memory (it grows, never shrinks): for tests and diagnostics. */
export function _memorySize() { need(); return rt.memory.buffer.byteLength; }
