// The JavaScript side of bench/hf_encode.py: transformers.js, its tokenizer package and
// @lenml/tokenizers (and supertok's fromTokenizerJson, once the module has it) on HuggingFace
// tokenizer.json files, on the slices the Python driver wrote, with tokenizers' ids to check.
//
//   cd wasm/bench/hf && npm ci --ignore-scripts     # pinned in package.json / package-lock.json
//   python bench/hf_encode.py                        # runs this script and merges its tables
//   node hf_bench.mjs --work DIR                     # DIR: a manifest.json written by hf_encode.py --keep-work
//   node hf_bench.mjs --load-worker TOOL MODEL_DIR   # one load, in this fresh process: prints JSON
//
// Tools (a column each):
// - transformers.js: `new PreTrainedTokenizer(tokenizerJSON, tokenizerConfig)` of
//   @huggingface/transformers, `encode(text, { add_special_tokens: false })`.
// - hf-tokenizers.js: `new Tokenizer(tokenizerJSON, tokenizerConfig)` of @huggingface/tokenizers
//   (the package transformers.js 4 tokenizes with), `encode(text, { add_special_tokens: false }).ids`.
// - lenml: `TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig })` of @lenml/tokenizers
//   (a tokenizer-only fork of transformers.js 3), `encode(text, { add_special_tokens: false })`.
// - supertok-js: `fromTokenizerJson(bytes)` of wasm/supertok.mjs (--supertok PATH), `encode(text,
//   { allowedSpecial: "all" })`; skipped with a note while the module has no fromTokenizerJson.
//
// For each model and language: a warm-up call on the language's warm-up text (never a timed
// slice), then --rounds rounds; round r: every tool, in an order rotating round by round, encodes
// slice r (fresh: text it has not seen) and then the same slice again (warm). Each call: CPU time
// (process.cpuUsage, user + system of every thread: GC included) and wall time. Every timed
// call's ids are compared with tokenizers' ids for the slice (from the manifest); the first
// difference is reported. Prints one JSON object on standard output; progress on standard error.
import { readFileSync, existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { join } from "node:path";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const log = (...a) => console.error(...a);
const cpu = (c) => (c.user + c.system) / 1e6;
const argv = process.argv.slice(2);
const args = {};
for (let i = 0; i < argv.length; i++) {
  if (!argv[i].startsWith("--")) continue;
  const k = argv[i].slice(2);
  args[k] = argv[i + 1] !== undefined && !argv[i + 1].startsWith("--") ? argv[++i] : true;
}
const SUPERTOK = args.supertok ?? here("../../supertok.mjs");
const TOOL_NAMES = ["transformers.js", "hf-tokenizers.js", "lenml", "supertok-js"];

function readModel(dir) {
  return {
    json: JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")),
    config: JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8")),
    bytes: readFileSync(join(dir, "tokenizer.json")),
  };
}

// Each tool: { version, load(model) -> encode function (text -> array of ids) }; or { skip: reason }.
async function tool(name) {
  const pkgVersion = (p) => JSON.parse(readFileSync(here(`node_modules/${p}/package.json`), "utf8")).version;
  try {
    if (name === "transformers.js") {
      const T = await import("@huggingface/transformers");
      return {
        version: `@huggingface/transformers ${pkgVersion("@huggingface/transformers")}`,
        load: (m) => { const t = new T.PreTrainedTokenizer(m.json, m.config); return (s) => t.encode(s, { add_special_tokens: false }); },
      };
    }
    if (name === "hf-tokenizers.js") {
      const { Tokenizer } = await import("@huggingface/tokenizers");
      return {
        version: `@huggingface/tokenizers ${pkgVersion("@huggingface/tokenizers")}`,
        load: (m) => { const t = new Tokenizer(m.json, m.config); return (s) => t.encode(s, { add_special_tokens: false }).ids; },
      };
    }
    if (name === "lenml") {
      const { TokenizerLoader } = await import("@lenml/tokenizers");
      return {
        version: `@lenml/tokenizers ${pkgVersion("@lenml/tokenizers")}`,
        load: (m) => {
          const t = TokenizerLoader.fromPreTrained({ tokenizerJSON: m.json, tokenizerConfig: m.config });
          return (s) => t.encode(s, { add_special_tokens: false });
        },
      };
    }
    if (name === "supertok-js") {
      if (!existsSync(SUPERTOK)) return { skip: `${SUPERTOK} is absent` };
      const st = await import(pathToFileURL(SUPERTOK).href);
      if (typeof st.fromTokenizerJson !== "function") {
        return { skip: "wasm/supertok.mjs has no fromTokenizerJson yet (the tokenizer.json loader is being wired)" };
      }
      await st.init();
      return {
        version: `supertok.mjs ${st.version()}`,
        load: async (m) => { const e = await st.fromTokenizerJson(m.bytes); return (s) => e.encode(s, { allowedSpecial: "all" }); },
      };
    }
  } catch (e) {
    return { skip: `could not load: ${String(e.message ?? e).split("\n")[0]}` };
  }
  return { skip: "unknown tool" };
}

function firstDiff(got, want) {
  const n = Math.min(got.length, want.length);
  for (let i = 0; i < n; i++) if (got[i] !== want[i]) return i;
  return got.length === want.length ? -1 : n;
}

function readIds(path) {
  const b = readFileSync(path);
  return new Uint32Array(b.buffer, b.byteOffset, b.byteLength / 4);
}

// ---- one load in a fresh process: import, then read the files and build the tokenizer ----------
if (args["load-worker"]) {
  const name = args["load-worker"];
  const dir = argv[argv.indexOf("--load-worker") + 2];
  const t = await tool(name);
  if (t.skip) { console.log(JSON.stringify({ skip: t.skip })); process.exit(0); }
  const rss0 = process.memoryUsage().rss;
  const c0 = process.cpuUsage(); const w0 = performance.now();
  const enc = await t.load(readModel(dir));
  const c1 = process.cpuUsage(); const w1 = performance.now();
  enc("warm up");
  const rss1 = process.memoryUsage().rss;
  console.log(JSON.stringify({ cpu: cpu(c1) - cpu(c0), wall: (w1 - w0) / 1000, rss_before: rss0, rss_after: rss1,
    max_rss: process.resourceUsage().maxRSS * 1024 }));
  process.exit(0);
}

// ---- the timed rounds ---------------------------------------------------------------------------
if (!args.work) { log("give --work DIR (a manifest.json from python bench/hf_encode.py --keep-work)"); process.exit(2); }
const work = args.work;
const man = JSON.parse(readFileSync(join(work, "manifest.json"), "utf8"));
const skipTools = new Set(String(args.skip ?? "").split(",").filter(Boolean));
const out = { node: process.version, tools: {}, notes: [], results: {}, load: {} };
const tools = {};
for (const n of TOOL_NAMES) {
  if (skipTools.has(n)) continue;
  const t = await tool(n);
  if (t.skip) { out.notes.push(`${n}: skipped: ${t.skip}`); log(`${n}: skipped: ${t.skip}`); continue; }
  tools[n] = t; out.tools[n] = t.version;
}
const names = Object.keys(tools);
const texts = {};
for (const lang of man.langs) {
  texts[lang] = { warm: readFileSync(join(work, man.warmup[lang]), "utf8"), slices: man.slices[lang].map((f) => readFileSync(join(work, f), "utf8")) };
}
for (const [model, info] of Object.entries(man.models)) {
  const m = readModel(info.dir);
  const enc = {};
  out.results[model] = {};
  for (const n of names) {
    try {
      enc[n] = await tools[n].load(m);
      out.results[model][n] = {};
    } catch (e) {
      out.notes.push(`${n} on ${model}: load failed: ${String(e.message ?? e).split("\n")[0]}`);
    }
  }
  const live = names.filter((n) => enc[n]);
  // the special-token probe (the model's added tokens between words), before any timing
  const probe = man.probe?.[model];
  const probeBad = {};
  if (probe) {
    const text = readFileSync(join(work, probe.text), "utf8");
    const want = readIds(join(work, probe.ids));
    for (const n of live) {
      const ids = enc[n](text);
      const i = firstDiff(Array.from(ids), want);
      if (i >= 0) probeBad[n] = `special-token probe: id #${i} is ${ids[i]}, tokenizers ${want[i]} (${ids.length} ids against ${want.length})`;
    }
  }
  for (const lang of man.langs) {
    const T = texts[lang];
    for (const n of live) enc[n](T.warm);
    const rec = {};
    for (const n of live) rec[n] = { fresh: [], warm: [], exact: probeBad[n] ?? true, ids: 0 };
    for (let r = 0; r < T.slices.length; r++) {
      const text = T.slices[r];
      const want = readIds(join(work, man.expected[model][lang][r]));
      const order = live.slice(r % live.length).concat(live.slice(0, r % live.length));
      for (const n of order) {
        for (const mode of man.modes ?? ["fresh", "warm"]) {
          const c0 = process.cpuUsage(); const w0 = performance.now();
          const ids = enc[n](text);
          const w1 = performance.now(); const c1 = process.cpuUsage();
          rec[n][mode].push({ cpu: cpu(c1) - cpu(c0), wall: (w1 - w0) / 1000, bytes: Buffer.byteLength(text) });
          if (rec[n].exact === true) {
            const i = firstDiff(Array.from(ids), want);
            if (i >= 0) {
              rec[n].exact = `${mode} round ${r + 1}: id #${i} is ${ids[i]}, tokenizers ${want[i]} (${ids.length} ids against ${want.length})`;
            }
          }
          rec[n].ids += ids.length;
        }
      }
    }
    for (const n of live) out.results[model][n][lang] = rec[n];
    log(`node ${model} ${lang}: ${live.map((n) => `${n} ${rec[n].exact === true ? "exact" : "NOT EXACT"}`).join(", ")}`);
  }
}
// load time and memory: each tool and model in a fresh process, --load-rounds times, interleaved
const loadRounds = Number(args["load-rounds"] ?? 0);
for (const [model, info] of Object.entries(man.models)) {
  out.load[model] = {};
  for (let r = 0; r < loadRounds; r++) {
    for (const n of names) {
      const p = spawnSync(process.execPath, [here("hf_bench.mjs"), "--supertok", SUPERTOK, "--load-worker", n, info.dir], { encoding: "utf8", maxBuffer: 1 << 20 });
      let res;
      try { res = JSON.parse(p.stdout.trim().split("\n").pop()); } catch { res = { error: (p.stderr || "").trim().split("\n").pop() }; }
      (out.load[model][n] ??= []).push(res);
    }
  }
}
console.log(JSON.stringify(out));
