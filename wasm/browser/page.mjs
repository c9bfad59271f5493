// A sample of the golden vectors through wasm/supertok.mjs inside a real page: the module and the
// rank files are fetched over HTTP relative to the module (as a web page loads them), nothing of
// Node's is used. Record i of each file runs when i % STRIDE === 0. The checks are those of
// wasm/test/vectors.test.mjs: ids, UTF-16 starts, counts, decoded text, incremental decoding,
// pieces, UBE symbols; and createWorker's Web Worker on a long text. The report goes to window.supertokReport: {ran: {file: n}, failures: []}.
import * as st from "../supertok.mjs";

const STRIDE = 7;
const root = new URL("../../", import.meta.url);
const report = { ran: {}, failures: [], userAgent: navigator.userAgent };

async function records(rel) {
  const res = await fetch(new URL(rel, root));
  if (!res.ok) throw new Error(`${rel}: HTTP ${res.status}`);
  const lines = (await res.text()).split("\n").slice(1, -1);
  const out = [];
  lines.forEach((l, i) => { if (i % STRIDE === 0) out.push([i, JSON.parse(l)]); });
  report.ran[rel] = out.length;
  return out;
}

const same = (a, b) => a.length === b.length && Array.from(a).every((x, k) => x === b[k]);
function cpToUtf16(text) {
  const out = [];
  let u = 0;
  for (const ch of text) { out.push(u); u += ch.length; }
  out.push(u);
  return out;
}
function recordText(r) {
  if ("text" in r) return r.text;
  if ("text_runs" in r) return r.text_runs.map(([u, n]) => u.repeat(n)).join("");
  let s = "";
  for (let i = 0; i < r.text_utf16_hex.length; i += 4) {
    const h = r.text_utf16_hex;
    s += String.fromCharCode(parseInt(h.slice(i + 2, i + 4) + h.slice(i, i + 2), 16));
  }
  return s;
}
function recordIds(r) {
  if ("ids" in r) return r.ids;
  const out = [];
  for (const [unit, n] of r.ids_runs) for (let k = 0; k < n; k++) out.push(...unit);
  return out;
}
function fail(file, i, what) { report.failures.push(`${file} record ${i}: ${what}`); }

async function run() {
  for (const name of ["o200k_base", "cl100k_base"]) {
    const enc = await st.getEncoding(name);
    const file = `vectors/encode/${name}.jsonl`;
    for (const [i, r] of await records(file)) {
      const text = recordText(r);
      const opts = { allowedSpecial: r.allowed_special, disallowedSpecial: r.disallowed_special };
      if ("error" in r) {
        try { enc.encode(text, opts); fail(file, i, "no error"); } catch (e) { if (e.code !== "ST_ERR_DISALLOWED_SPECIAL") fail(file, i, e.message); }
        continue;
      }
      const want = recordIds(r);
      const { ids, starts } = enc.encodeWithOffsets(text, opts);
      if (!same(ids, want)) fail(file, i, "ids differ");
      if ("starts" in r) { const m = cpToUtf16(r.text); if (!same(starts, r.starts.map((s) => m[s]))) fail(file, i, "starts differ"); }
      if (enc.count(text, opts) !== want.length) fail(file, i, "count differs");
    }
    const dfile = `vectors/decode/${name}.jsonl`;
    for (const [i, r] of await records(dfile)) {
      try {
        if (r.kind === "bytes") {
          if (enc.decode(r.ids) !== r.text_replace) fail(dfile, i, "decode differs");
          const hex = Array.from(enc.decodeBytes(r.ids), (b) => b.toString(16).padStart(2, "0")).join("");
          if (hex !== r.bytes_hex) fail(dfile, i, "decodeBytes differs");
        } else if (r.kind === "incremental") {
          const d = enc.incrementalDecoder();
          const chunks = r.splits.map((s) => d.add(s));
          const final = d.flush();
          d.free();
          if (!same(chunks, r.chunks) || final !== r.final) fail(dfile, i, "incremental differs");
        } else if (r.kind === "error") {
          let code = "no error";
          try { enc.decode(r.ids); } catch (e) { code = e.code ?? e.constructor.name; }
          if (code !== { KeyError: "ST_ERR_INVALID_TOKEN", OverflowError: "RangeError" }[r.error]) fail(dfile, i, `error ${code}`);
        }
      } catch (e) { fail(dfile, i, e.message); }
    }
  }
  for (const f of ["o200k", "cl100k", "gpt2", "script_aware"]) {
    const file = `vectors/pretokenize/${f}.jsonl`;
    for (const [i, r] of await records(file)) {
      const pieces = st.pretokenize(r.text, { pattern: r.pattern, scriptAware: r.script_aware, scripts: r.scripts });
      if (!same(pieces, r.pieces)) fail(file, i, "pieces differ");
    }
  }
  for (const [i, r] of await records("vectors/ube/routing.jsonl")) {
    if (!same(st.ubeEncodeSymbols(r.text), r.symbols) || st.ubeDecodeSymbols(r.symbols) !== r.text) fail("ube/routing", i, "differs");
  }
  for (const [i, r] of await records("vectors/ube/stream.jsonl")) {
    const b = [0, ...r.splits, r.symbols.length];
    const d = new st.UbeStreamDecoder();
    const outs = b.slice(1).map((e, k) => d.add(r.symbols.slice(b[k], e)));
    if (!same(outs, r.outputs) || d.flush() !== r.flush) fail("ube/stream", i, "differs");
    d.free();
  }
  const models = {};
  for (const n of ["ube_small", "bytes_small", "super_bytes_small", "super_ube_small"]) {
    models[n] = await st.loadModel(new URL(`vectors/models/${n}.stmodel`, root));
  }
  for (const [i, r] of await records("vectors/models/encode.jsonl")) {
    const { ids, starts } = models[r.model].encodeWithOffsets(r.text, { allowedSpecial: r.allowed, disallowedSpecial: [] });
    const m = cpToUtf16(r.text);
    if (!same(ids, r.ids) || !same(starts, r.starts.map((s) => m[s]))) fail("models/encode", i, "differs");
  }
  for (const [i, r] of await records("vectors/models/decode.jsonl")) {
    const enc = models[r.model];
    const d = enc.incrementalDecoder();
    const stream = r.ids.map((t) => d.add(t));
    if (enc.decode(r.ids) !== r.text || !same(stream, r.stream) || d.flush() !== r.flush) fail("models/decode", i, "differs");
    d.free();
  }
  // a Web Worker (createWorker) gives the page's ids for a long text
  const w = await st.createWorker();
  const text = "héllo 😀 中文 <|endoftext|> ".repeat(5000);
  const ids = await w.encode("o200k_base", text, { allowedSpecial: "all" });
  const o200k = await st.getEncoding("o200k_base");
  if (!same(ids, o200k.encode(text, { allowedSpecial: "all" }))) fail("worker", 0, "ids differ");
  let code = null;
  try { await w.encode("o200k_base", "x <|endoftext|>"); } catch (e) { code = e.code; }
  if (code !== "ST_ERR_DISALLOWED_SPECIAL") fail("worker", 1, `error ${code}`);
  w.terminate();
  report.ran["createWorker"] = 2;
}

run().then(
  () => { report.done = true; },
  (e) => { report.done = true; report.failures.push(`raised: ${e && e.stack || e}`); },
).finally(() => {
  window.supertokReport = report;
  const n = Object.values(report.ran).reduce((a, b) => a + b, 0);
  document.getElementById("out").textContent = `${n} records, ${report.failures.length} failures\n${report.failures.slice(0, 20).join("\n")}`;
});
