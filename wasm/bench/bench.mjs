// The JavaScript benchmark: supertok's ES module against the npm tokenizers
// (gpt-tokenizer, js-tiktoken, tiktoken's wasm build, ai-tokenizer) on o200k_base, in Node.
//
//   cd wasm/bench && npm ci && node bench.mjs --corpora <the corpora folder>
//       [--langs en,zh,...] [--bytes 500000] [--rounds 5] [--patho-bytes 100000]
//       [--patho-timeout 10] [--load-rounds 5] [--skip TOOL,...]
//
// Per language file (<lang>.txt.xz of the corpora): round r encodes slice r of the file
// (consecutive slices of --bytes bytes, cut on characters), every tool the same slice, in an
// order that rotates every round; no tool has seen the text of a timed call before (the caches
// of gpt-tokenizer, ai-tokenizer and supertok are warm only with earlier slices of the language,
// alike for all). Each call is timed by CPU time (process.cpuUsage: user + system, every thread)
// and wall time. Every timed call's ids are compared with supertok's for the same slice; a tool
// that differs is reported, with the token where it does. Cells: median MB/s (min-max over the
// rounds), MB = 10^6 bytes of UTF-8; "supertok / X": the median over rounds of X's CPU time /
// supertok's CPU time in the same round (> 1: supertok is faster).
//
// Pathological inputs (the kinds of bench/encode.py): each tool in a fresh process per input
// (child.mjs), after a warm-up (ordinary text, then the same kind of input at 1/50 of the size:
// V8 tiers up the code the input takes, on background threads that CPU time counts), a first
// call then four more (the median of those four is reported), at --patho-bytes and
// at 10x that (the 10x run only when the first call took under 1/20 of --patho-timeout; at most
// --patho-timeout seconds (10) a process: "> 10 s" otherwise); linearity is the MB/s at 10x over
// the MB/s at 1x (about 1: linear; about 0.1: quadratic).
//
// Load: each tool in a fresh process (child.mjs), --load-rounds times, interleaved: import its
// modules and load o200k_base (for supertok: the wasm module and the compact vocabulary), CPU
// and wall. Bundle: the gzipped size (level 9, each file on its own) of every file that load
// read: the tool's modules, its wasm, its vocabulary.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { relative } from "node:path";
import { TOOLS, PATHOLOGICAL } from "./tools.mjs";

const argv = process.argv.slice(2);
const args = {};
for (let i = 0; i < argv.length; i++) {
  if (!argv[i].startsWith("--")) continue;
  const k = argv[i].slice(2);
  args[k] = argv[i + 1] !== undefined && !argv[i + 1].startsWith("--") ? argv[++i] : true;
}
const corpora = args.corpora ?? process.env.SUPERTOK_CORPORA;
if (!corpora) { console.error("give --corpora DIR (or SUPERTOK_CORPORA)"); process.exit(2); }
const langs = (args.langs ?? "en,zh,ja,ar,ru,el,hi,code").split(",");
const nbytes = Number(args.bytes ?? 500000);
const rounds = Number(args.rounds ?? 5);
const pbytes = Number(args["patho-bytes"] ?? 100000);
const ptimeout = Number(args["patho-timeout"] ?? 10); // seconds a process
const loadRounds = Number(args["load-rounds"] ?? 5);
const skip = new Set(String(args.skip ?? "").split(",").filter(Boolean));
const names = Object.keys(TOOLS).filter((n) => !skip.has(n));
const here = (p) => fileURLToPath(new URL(p, import.meta.url));

const cpu = (c) => (c.user + c.system) / 1e6;
const med = (xs) => { const s = xs.slice().sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const range = (xs, d = 1) => `${med(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}-${Math.max(...xs).toFixed(d)})`;
const log = (...a) => console.error(...a);

// ---- texts: rounds + 1 consecutive slices per language (slice 0: warm-up, never timed) -------
function slices(lang) {
  const need = (rounds + 1) * nbytes + 8;
  const p = spawnSync("sh", ["-c", `xz -dc "${corpora}/${lang}.txt.xz" | head -c ${need}`], { maxBuffer: need + 1024 });
  if (p.status !== 0) throw new Error(`${corpora}/${lang}.txt.xz: ${p.stderr}`);
  const buf = p.stdout, out = [];
  // a file shorter than rounds + 1 slices (hi.txt.xz holds 0.48 MB) is cut into that many
  const size = Math.min(nbytes, Math.floor(buf.length / (rounds + 1)));
  let a = 0;
  for (let r = 0; r <= rounds; r++) {
    let b = Math.min(a + size, buf.length);
    while (b < buf.length && (buf[b] & 0xC0) === 0x80) b--; // cut on a character
    out.push(buf.subarray(a, b).toString("utf8"));
    a = b;
  }
  return out;
}

// ---- in-process throughput ----------------------------------------------------------------------
const enc = {};
for (const n of names) enc[n] = await TOOLS[n]();
const res = {}; // `${tool}/${lang}` -> [{cpu, wall, bytes}]
const exact = {}; // `${tool}/${lang}` -> "same ids" | "differs ..."
for (const lang of langs) {
  const sl = slices(lang);
  for (const n of names) enc[n](sl[0]); // warm-up: V8 tiers each tool up
  for (let r = 1; r <= rounds; r++) {
    const text = sl[r], bytes = Buffer.byteLength(text);
    const want = enc.supertok ? Array.from(enc.supertok(text)) : null;
    const order = names.slice(r % names.length).concat(names.slice(0, r % names.length));
    for (const n of order) {
      const w = performance.now(), c = process.cpuUsage();
      const ids = enc[n](text);
      const t = { cpu: cpu(process.cpuUsage(c)), wall: (performance.now() - w) / 1000, bytes };
      (res[`${n}/${lang}`] ??= []).push(t);
      if (want && exact[`${n}/${lang}`] === undefined) {
        const got = Array.from(ids);
        let k = 0;
        while (k < want.length && want[k] === got[k]) k++;
        if (k !== want.length || got.length !== want.length) exact[`${n}/${lang}`] = `differs at token ${k} (round ${r})`;
      }
    }
    log(`${lang} round ${r}/${rounds}`);
  }
  for (const n of names) exact[`${n}/${lang}`] ??= "same ids";
}

// ---- pathological inputs, one process each ------------------------------------------------------
function child(argsList, timeoutMs) {
  const p = spawnSync(process.execPath, [here("./child.mjs"), ...argsList], { encoding: "utf8", timeout: timeoutMs, maxBuffer: 1 << 26 });
  if (p.error?.code === "ETIMEDOUT" || p.signal) return { timeout: true };
  if (p.status !== 0) return { error: (p.stderr || "").trim().split("\n").slice(-1)[0] };
  return JSON.parse(p.stdout);
}
const patho = {}; // `${tool}/${kind}` -> {small, large}
const mbps = (r) => r.bytes / 1e6 / med(r.runs.slice(1).map((x) => x.cpu));
for (const kind of PATHOLOGICAL) {
  for (const n of names) {
    const small = child(["patho", n, kind, String(pbytes)], 1000 * ptimeout);
    let large = null;
    if (small.runs && small.runs[0].cpu < ptimeout / 20) large = child(["patho", n, kind, String(10 * pbytes)], 1000 * ptimeout);
    patho[`${n}/${kind}`] = { small, large };
    log(`patho ${kind} ${n}`);
  }
}

// ---- load and bundle, fresh processes, interleaved ----------------------------------------------
const loads = {}, bundles = {};
for (let r = 0; r < loadRounds; r++) {
  for (const n of names.slice(r % names.length).concat(names.slice(0, r % names.length))) {
    const out = child(["load", n], 120000);
    if (!out.load) { loads[n] = out; continue; }
    (loads[n] ??= []).push(out.load);
    if (!bundles[n]) {
      const files = out.files.filter((f) => existsSync(f)).sort();
      bundles[n] = { gz: files.reduce((s, f) => s + gzipSync(readFileSync(f), { level: 9 }).length, 0), files };
    }
  }
  log(`load round ${r + 1}/${loadRounds}`);
}

// ---- the tables -----------------------------------------------------------------------------------
const out = [];
const p = (s = "") => out.push(s);
p(`node ${process.version}, ${process.platform}/${process.arch}; o200k_base, ordinary text (no special tokens); ${rounds} rounds of ${nbytes} bytes per language, fresh slices; MB = 10^6 bytes`);
p(`command: cd wasm/bench && npm ci && node bench.mjs ${argv.join(" ")}`);
p();
p("Throughput, MB/s of CPU time, median (min-max) over the rounds; supertok / X: X's CPU time over supertok's, median of the rounds; every tool's ids compared with supertok's on every timed call");
p();
p(`| language (bytes a round) | ${names.join(" | ")} |`);
p(`|---|${names.map(() => "---").join("|")}|`);
for (const lang of langs) {
  const cells = names.map((n) => {
    const t = res[`${n}/${lang}`];
    if (exact[`${n}/${lang}`] !== "same ids") return `not exact: ${exact[`${n}/${lang}`]}`;
    const c = range(t.map((x) => x.bytes / 1e6 / x.cpu));
    if (n === "supertok") return `**${c}**`;
    const ratio = med(t.map((x, i) => x.cpu / res[`supertok/${lang}`][i].cpu));
    return `${c}; ${ratio.toFixed(1)}x`;
  });
  p(`| ${lang} (${res[`${names[0]}/${lang}`][0].bytes}) | ${cells.join(" | ")} |`);
}
p();
p("Wall time, MB/s median (min-max) (the machine is shared: CPU time above is the steadier measure)");
p();
p(`| language | ${names.join(" | ")} |`);
p(`|---|${names.map(() => "---").join("|")}|`);
for (const lang of langs) p(`| ${lang} | ${names.map((n) => range(res[`${n}/${lang}`].map((x) => x.bytes / 1e6 / x.wall))).join(" | ")} |`);
p();
p(`Pathological inputs (bench/encode.py's kinds), ${pbytes} bytes / ${10 * pbytes} bytes: MB/s of CPU time (median of calls 2-5, a fresh process each, after a warm-up); (xN): MB/s at ${10 * pbytes} over MB/s at ${pbytes} (1: linear, 0.1: quadratic); "> ${ptimeout} s": the process did not finish in ${ptimeout} s`);
p();
p(`| input | ${names.join(" | ")} |`);
p(`|---|${names.map(() => "---").join("|")}|`);
for (const kind of PATHOLOGICAL) {
  p(`| ${kind} | ${names.map((n) => {
    const { small, large } = patho[`${n}/${kind}`];
    if (small.timeout) return `> ${ptimeout} s`;
    if (small.error) return `failed: ${small.error.slice(0, 60)}`;
    const a = mbps(small);
    let s = `${a.toFixed(2)}`;
    if (large?.runs) s += ` / ${mbps(large).toFixed(2)} (x${(mbps(large) / a).toFixed(2)})`;
    else if (large?.timeout) s += ` / > ${ptimeout} s`;
    else s += ` (first call ${small.runs[0].cpu.toFixed(1)} s: no 10x run)`;
    return s;
  }).join(" | ")} |`);
}
p();
p(`Load o200k_base in a fresh process (import + vocabulary; for supertok the wasm module and compact/o200k_base.stvc), ms, median (min-max) of ${loadRounds}; bundle: the files the load read, each gzipped at level 9`);
p();
p("| tool | load CPU ms | load wall ms | bundle gzipped | files |");
p("|---|---|---|---|---|");
const root = here("../../");
for (const n of names) {
  const l = loads[n];
  if (!Array.isArray(l)) { p(`| ${n} | failed | | | |`); continue; }
  const b = bundles[n];
  p(`| ${n} | ${range(l.map((x) => 1000 * x.cpu), 0)} | ${range(l.map((x) => 1000 * x.wall), 0)} | ${(b.gz / 1e6).toFixed(3)} MB | ${b.files.length}: ${b.files.map((f) => relative(root, f).replace(/^wasm\/bench\/node_modules\//, "")).slice(0, 4).join(", ")}${b.files.length > 4 ? ", ..." : ""} |`);
}
console.log(out.join("\n"));
