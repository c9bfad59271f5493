// Every golden vector of vectors/ through the JavaScript module: the records the Python backends
// run (tests/test_vectors.py, test_encode_vectors.py, test_ube_vectors.py, test_models.py), each
// interpreted as those tests interpret it, with JavaScript's types: ids as Uint32Array, offsets
// in UTF-16 units (the vectors' code point offsets are converted through the record's text),
// Python's exceptions as the JS errors the module throws (ValueError for a disallowed special
// and KeyError for an id that is no token: SupertokError with the core's status name;
// OverflowError for an id outside uint32: RangeError).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import * as st from "../supertok.mjs";
import { ROOT, cpToUtf16, diff, loadVectors, report, same, short } from "../tools/test-helpers.mjs";

const ENCODINGS = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"];

function recordText(r) {
  if ("text" in r) return r.text;
  if ("text_runs" in r) return r.text_runs.map(([u, n]) => u.repeat(n)).join("");
  const h = r.text_utf16_hex;
  let s = "";
  for (let i = 0; i < h.length; i += 4) s += String.fromCharCode(parseInt(h.slice(i + 2, i + 4) + h.slice(i, i + 2), 16));
  return s;
}

function recordIds(r) {
  if ("ids" in r) return r.ids;
  if ("ids_runs" in r) {
    const out = [];
    for (const [unit, n] of r.ids_runs) for (let k = 0; k < n; k++) out.push(...unit);
    return out;
  }
  return null;
}

function throwsCode(fn, code) {
  try {
    const got = fn();
    return `returned ${short(Array.from(got?.ids ?? got ?? []))}, expected ${code}`;
  } catch (e) {
    const c = e instanceof st.SupertokError ? e.code : e.constructor.name;
    return c === code ? null : `raised ${c} (${e.message.split("\n")[0]}), expected ${code}`;
  }
}

function checkEncodeRecord(enc, r) {
  const text = recordText(r);
  const opts = { allowedSpecial: r.allowed_special, disallowedSpecial: r.disallowed_special };
  const problems = [];
  const calls = {
    encode: () => enc.encode(text, opts),
    count: () => enc.count(text, opts),
    encodeWithOffsets: () => enc.encodeWithOffsets(text, opts),
  };
  if ("error" in r) {
    assert.equal(r.error, "ValueError");
    for (const [what, call] of Object.entries(calls)) {
      const p = throwsCode(call, "ST_ERR_DISALLOWED_SPECIAL");
      if (p) problems.push(`${what} ${p}`);
    }
    return problems;
  }
  const want = recordIds(r);
  const results = {};
  for (const [what, call] of Object.entries(calls)) {
    try { results[what] = call(); } catch (e) { problems.push(`${what} raised ${e.message.split("\n")[0]}`); }
  }
  if (results.encode !== undefined) {
    if (!(results.encode instanceof Uint32Array)) problems.push("encode did not return a Uint32Array");
    const d = diff(want, results.encode);
    if (d) problems.push(`encode: ${d}`);
  }
  if (results.count !== undefined && results.count !== want.length) problems.push(`count: expected ${want.length}, got ${results.count}`);
  if (results.encodeWithOffsets !== undefined) {
    const { ids, starts } = results.encodeWithOffsets;
    const d = diff(want, ids);
    if (d) problems.push(`encodeWithOffsets ids: ${d}`);
    else if ("starts" in r) {
      const map = cpToUtf16(r.text);
      const d2 = diff(r.starts.map((s) => map[s]), starts);
      if (d2) problems.push(`encodeWithOffsets starts (UTF-16): ${d2}`);
    } else if (starts.length !== ids.length) problems.push(`${starts.length} starts for ${ids.length} ids`);
  }
  const specials = enc.specialTokensSet;
  const allowedHere = r.allowed_special === "all" ? specials.size : r.allowed_special.filter((t) => specials.has(t)).length;
  if (!allowedHere) {
    try {
      const d = diff(want, enc.encodeOrdinary(text));
      if (d) problems.push(`encodeOrdinary: ${d}`);
    } catch (e) { problems.push(`encodeOrdinary raised ${e.message}`); }
  }
  return problems;
}

// o200k_harmony has encode vectors only (its ordinary tokens are o200k_base's): one special id
// with two strings, each allowed, disallowed or neither on its own (vectors/generate_encode.py)
// Every encoding vector runs on both ways of loading a shipped encoding: the compact image (the
// default, what a browser downloads) and the rank file.
const FORMATS = ["compact", "tiktoken"];
for (const format of FORMATS) for (const name of [...ENCODINGS, "o200k_harmony"]) {
  test(`vectors/encode/${name}.jsonl (${format})`, async () => {
    const { meta, records } = loadVectors(`vectors/encode/${name}.jsonl`);
    assert.equal(meta.records, records.length);
    const enc = await st.getEncoding(name, { format });
    assert.equal(enc.nVocab, meta.n_vocab);
    const failures = [];
    records.forEach((r, i) => {
      const p = checkEncodeRecord(enc, r);
      if (p.length) failures.push(`record ${i}: text=${short(recordText(r))} allowed=${JSON.stringify(r.allowed_special)} disallowed=${JSON.stringify(r.disallowed_special)}\n    ${p.join("\n    ")}`);
    });
    report(`vectors/encode/${name}.jsonl`, failures, records.length);
  });
}

for (const format of FORMATS) test(`o200k_harmony (${format}): its special tokens are tiktoken's, both strings of 200018 are that id, decoding gives the first`, async () => {
  const { meta } = loadVectors("vectors/encode/o200k_harmony.jsonl");
  const enc = await st.getEncoding("o200k_harmony", { format });
  assert.deepEqual(enc.specialTokens, meta.special_tokens);
  for (const t of ["<|endofprompt|>", "<|reserved_200018|>"]) assert.deepEqual([...enc.encode(t, { allowedSpecial: [t] })], [200018]);
  assert.equal(enc.decode([200018]), meta.decode_200018);
});

for (const format of FORMATS) for (const name of ENCODINGS) {

  test(`vectors/decode/${name}.jsonl (${format})`, async () => {
    const { meta, records } = loadVectors(`vectors/decode/${name}.jsonl`);
    assert.equal(meta.records, records.length);
    const enc = await st.getEncoding(name, { format });
    const failures = [];
    records.forEach((r, i) => {
      const problems = [];
      try {
        if (r.kind === "bytes") {
          const want = Buffer.from(r.bytes_hex, "hex");
          const got = enc.decodeBytes(r.ids);
          if (!(got instanceof Uint8Array) || !want.equals(got)) problems.push(`decodeBytes: expected ${r.bytes_hex.slice(0, 80)}, got ${Buffer.from(got).toString("hex").slice(0, 80)}`);
          const text = enc.decode(r.ids);
          if (text !== r.text_replace) problems.push(`decode: expected ${short(r.text_replace)}, got ${short(text)}`);
          const joined = Buffer.concat(r.ids.map((t) => enc.decodeSingleTokenBytes(t)));
          if (!want.equals(joined)) problems.push("decodeSingleTokenBytes joined differ");
        } else if (r.kind === "incremental") {
          const dec = enc.incrementalDecoder();
          const chunks = r.splits.map((s) => dec.add(s));
          const final = dec.flush();
          dec.free();
          if (!same(r.chunks, chunks) || final !== r.final) {
            problems.push(`incremental: expected ${short(r.chunks)} + ${short(r.final)}, got ${short(chunks)} + ${short(final)}`);
          }
        } else if (r.kind === "error") {
          const code = { KeyError: "ST_ERR_INVALID_TOKEN", OverflowError: "RangeError" }[r.error];
          for (const [what, call] of [["decodeBytes", () => enc.decodeBytes(r.ids)], ["decode", () => enc.decode(r.ids)]]) {
            const p = throwsCode(call, code);
            if (p) problems.push(`${what} ${p}`);
          }
        } else problems.push(`unknown kind ${r.kind}`);
      } catch (e) { problems.push(`raised ${e.message}`); }
      if (problems.length) failures.push(`record ${i} (${r.kind}) ids=${short(r.ids)}\n    ${problems.join("\n    ")}`);
    });
    report(`vectors/decode/${name}.jsonl`, failures, records.length);
  });
}

const PRETOK = ["cl100k.jsonl", "deepseek_v3.jsonl", "gpt2.jsonl", "llama3.jsonl", "o200k.jsonl", "qwen2.jsonl",
                "script_aware.jsonl", "superbpe.jsonl"];
test("vectors/pretokenize holds the files this test reads", () => {
  assert.deepEqual(readdirSync(ROOT + "vectors/pretokenize").filter((n) => n.endsWith(".jsonl")).sort(), PRETOK);
});
for (const file of PRETOK) {
  test(`vectors/pretokenize/${file}`, async () => {
    await st.init();
    const { meta, records } = loadVectors(`vectors/pretokenize/${file}`);
    assert.equal(meta.records, records.length);
    const failures = [];
    records.forEach((r, i) => {
      const opts = { pattern: r.pattern, scriptAware: r.script_aware, scripts: r.scripts };
      try {
        const pieces = st.pretokenize(r.text, opts);
        const spans = st.pretokenizeSpans(r.text, opts);
        const problems = [];
        if (!same(r.pieces, pieces)) problems.push(`pieces: expected ${short(r.pieces)}, got ${short(pieces)}`);
        let pos = 0, bad = false;
        for (const [a, b] of spans) { if (a !== pos || b <= a) bad = true; pos = b; }
        if (bad || pos !== r.text.length) problems.push(`spans ${short(spans)} are not contiguous non-empty spans covering the text`);
        else if (!same(r.pieces, spans.map(([a, b]) => r.text.slice(a, b)))) problems.push("span slices differ from the pieces");
        if (problems.length) failures.push(`record ${i}: ${short(r.text)} ${JSON.stringify(opts)}\n    ${problems.join("\n    ")}`);
      } catch (e) { failures.push(`record ${i}: raised ${e.message}`); }
    });
    report(`vectors/pretokenize/${file}`, failures, records.length);
  });
}

function errorIndex(fn) {
  try { fn(); return "no error"; } catch (e) { return e.offset ?? e.index ?? `no index (${e.message})`; }
}

test("vectors/ube/routing.jsonl", async () => {
  await st.init();
  const { records } = loadVectors("vectors/ube/routing.jsonl");
  const failures = [];
  records.forEach((r, i) => {
    try {
      const got = st.ubeEncodeSymbols(r.text);
      if (!(got instanceof Uint16Array) || !same(r.symbols, got)) { failures.push(`record ${i} ${short(r.text)}: ${diff(r.symbols, got)}`); return; }
      for (const errors of ["replace", "strict"]) {
        const back = st.ubeDecodeSymbols(r.symbols, { errors });
        if (back !== r.text) failures.push(`record ${i}: decodes (${errors}) to ${short(back)}`);
      }
    } catch (e) { failures.push(`record ${i}: raised ${e.message}`); }
  });
  report("vectors/ube/routing.jsonl", failures, records.length);
});

test("vectors/ube/decode.jsonl", async () => {
  await st.init();
  const { records } = loadVectors("vectors/ube/decode.jsonl");
  const failures = [];
  records.forEach((r, i) => {
    const where = `record ${i} (${r.note}) symbols ${short(r.symbols)}`;
    if (r.invalid_symbol_index !== null) {
      for (const errors of ["replace", "strict"]) {
        const at = errorIndex(() => st.ubeDecodeSymbols(r.symbols, { errors }));
        if (at !== r.invalid_symbol_index) failures.push(`${where}: ${errors}: expected invalid symbol at ${r.invalid_symbol_index}, got ${at}`);
      }
      return;
    }
    const got = st.ubeDecodeSymbols(r.symbols);
    if (got !== r.text_replace) failures.push(`${where}: expected ${short(r.text_replace)}, got ${short(got)}`);
    if (r.strict_error_index === null) {
      const s = st.ubeDecodeSymbols(r.symbols, { errors: "strict" });
      if (s !== r.text_replace) failures.push(`${where}: strict gave ${short(s)}`);
    } else {
      const at = errorIndex(() => st.ubeDecodeSymbols(r.symbols, { errors: "strict" }));
      if (at !== r.strict_error_index) failures.push(`${where}: strict error at ${at}, expected ${r.strict_error_index}`);
    }
  });
  report("vectors/ube/decode.jsonl", failures, records.length);
});

test("vectors/ube/stream.jsonl", async () => {
  await st.init();
  const { records } = loadVectors("vectors/ube/stream.jsonl");
  const failures = [];
  records.forEach((r, i) => {
    const bounds = [0, ...r.splits, r.symbols.length];
    const d = new st.UbeStreamDecoder();
    const outs = [];
    for (let k = 0; k + 1 < bounds.length; k++) outs.push(d.add(r.symbols.slice(bounds[k], bounds[k + 1])));
    const fl = d.flush();
    d.free();
    if (!same(r.outputs, outs) || fl !== r.flush) {
      failures.push(`record ${i} (${r.note}) splits ${JSON.stringify(r.splits)}: expected ${short(r.outputs)} + ${short(r.flush)}, got ${short(outs)} + ${short(fl)}`);
    }
  });
  report("vectors/ube/stream.jsonl", failures, records.length);
});

const MODELS = ["ube_small", "bytes_small", "super_bytes_small", "super_ube_small"];
const models = new Map();
async function model(name) {
  if (!models.has(name)) models.set(name, await st.loadModel(readFileSync(`${ROOT}vectors/models/${name}.stmodel`)));
  return models.get(name);
}

test("vectors/models/encode.jsonl", async () => {
  const { meta, records } = loadVectors("vectors/models/encode.jsonl");
  assert.equal(meta.records, records.length);
  assert.deepEqual([...new Set(records.map((r) => r.model))].sort(), [...MODELS].sort());
  for (const n of MODELS) await model(n);
  const failures = [];
  records.forEach((r, i) => {
    const enc = models.get(r.model);
    const opts = { allowedSpecial: r.allowed, disallowedSpecial: [] };
    try {
      const { ids, starts } = enc.encodeWithOffsets(r.text, opts);
      const n = enc.count(r.text, opts);
      const plain = enc.encode(r.text, opts);
      const map = cpToUtf16(r.text);
      const d = diff(r.ids, ids) ?? diff(r.starts.map((s) => map[s]), starts) ?? diff(r.ids, plain);
      if (d || n !== r.ids.length) failures.push(`record ${i} (${r.model}, ${short(r.text, 40)}): ${d ?? `count ${n}`}`);
    } catch (e) { failures.push(`record ${i} (${r.model}): raised ${e.message}`); }
  });
  report("vectors/models/encode.jsonl", failures, records.length);
});

test("vectors/models/decode.jsonl", async () => {
  const { meta, records } = loadVectors("vectors/models/decode.jsonl");
  assert.equal(meta.records, records.length);
  for (const n of MODELS) await model(n);
  const failures = [];
  records.forEach((r, i) => {
    const enc = models.get(r.model);
    const problems = [];
    try {
      const got = enc.decode(r.ids);
      if (got !== r.text) problems.push(`decode ${short(got, 40)}, expected ${short(r.text, 40)}`);
      let strictError = null, strict = null;
      try { strict = enc.decode(r.ids, { errors: "strict" }); } catch (e) {
        if (e.code !== "ST_ERR_INVALID_UTF8") throw e;
        strictError = e.offset;
      }
      if (strictError !== r.strict_error || (strictError === null && strict !== r.text)) {
        problems.push(`strict error ${strictError}, expected ${r.strict_error}`);
      }
      const d = enc.incrementalDecoder();
      const stream = r.ids.map((t) => d.add(t));
      const flush = d.flush();
      d.free();
      if (!same(r.stream, stream) || flush !== r.flush) problems.push(`stream ${short(stream, 60)} + ${short(flush)}, expected ${short(r.stream, 60)} + ${short(r.flush)}`);
    } catch (e) { problems.push(`raised ${e.message}`); }
    if (problems.length) failures.push(`record ${i} (${r.model}, ids ${short(r.ids, 50)}): ${problems.join("; ")}`);
  });
  report("vectors/models/decode.jsonl", failures, records.length);
});

// vectors/tokenizer_json: tiny HuggingFace models (one per pre-tokenizer, NFC, ignore_merges,
// added tokens) and what tokenizers gives for each text; each model from its file and from its
// compact image (saveCompact, loaded back by loadModel).
test("vectors/tokenizer_json/cases.jsonl", async () => {
  const { meta, records } = loadVectors("vectors/tokenizer_json/cases.jsonl");
  assert.equal(meta.records, records.length);
  const encs = new Map();
  for (const name of meta.models) {
    const enc = await st.fromTokenizerJson(readFileSync(`${ROOT}vectors/tokenizer_json/${name}.json`));
    encs.set(name, [["file", enc], ["compact image", await st.loadModel(enc.saveCompact())]]);
  }
  const failures = [];
  records.forEach((r, i) => {
    const problems = [];
    for (const [how, enc] of encs.get(r.model)) {
      try {
        const all = Array.from(enc.encode(r.text, { allowedSpecial: "all" }));
        if (!same(r.ids, all)) problems.push(`${how}: ids ${diff(r.ids, all)}`);
        const asText = Array.from(enc.encodeOrdinary(r.text));
        if (!same(r.ids_specials_as_text, asText)) problems.push(`${how}: ids with specials as text ${diff(r.ids_specials_as_text, asText)}`);
        const dec = enc.decode(r.ids);
        if (dec !== r.decoded) problems.push(`${how}: decode ${short(dec, 40)}, expected ${short(r.decoded, 40)}`);
      } catch (e) { problems.push(`${how}: raised ${e.message}`); }
    }
    if (problems.length) failures.push(`record ${i} (${r.model}, ${short(r.text, 40)}): ${problems.join("; ")}`);
  });
  report("vectors/tokenizer_json/cases.jsonl", failures, records.length);
});
