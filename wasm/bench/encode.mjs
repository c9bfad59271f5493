// A first look (issue 13, not yet the full benchmark): supertok's ES module against the npm
// tokenizers on o200k_base, side by side in one process, interleaved rounds (the order of the
// tokenizers rotates every round), CPU time (process.cpuUsage: every thread) beside wall time.
//
//   cd wasm/bench && npm ci && node encode.mjs --corpora DIR [--langs en,zh] [--bytes 1048576] [--rounds 5] [--skip NAME,...]
//
// DIR holds the shared corpora (<lang>.txt.xz; the first --bytes of each are read with xz -dc).
// Every tokenizer's ids are compared with supertok's on every text; a mismatch is reported.
// gpt-tokenizer and ai-tokenizer keep a cache of merged pieces across calls, which repeated
// encodes of one text fill: their numbers here are warm-cache numbers.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const corpora = args.corpora ?? process.env.SUPERTOK_CORPORA;
if (!corpora) { console.error("give --corpora DIR (or SUPERTOK_CORPORA)"); process.exit(2); }
const langs = (args.langs ?? "en,zh").split(",");
const nbytes = Number(args.bytes ?? 1 << 20);
const rounds = Number(args.rounds ?? 5);

const cpu = (c) => (c.user + c.system) / 1e6;
function timed(fn) {
  const w = performance.now(), c = process.cpuUsage();
  const r = fn();
  return { r, cpu: cpu(process.cpuUsage(c)), wall: (performance.now() - w) / 1000 };
}
async function timedAsync(fn) {
  const w = performance.now(), c = process.cpuUsage();
  const r = await fn();
  return { r, cpu: cpu(process.cpuUsage(c)), wall: (performance.now() - w) / 1000 };
}

const texts = {};
for (const lang of langs) {
  const p = spawnSync("sh", ["-c", `xz -dc "${corpora}/${lang}.txt.xz" | head -c ${nbytes}`], { maxBuffer: nbytes + 1024 });
  texts[lang] = new TextDecoder().decode(p.stdout).replace(/\uFFFD+$/, ""); // cut on a character
}

const skip = new Set((args.skip ?? "").split(",").filter(Boolean)); // e.g. --skip js-tiktoken (slow on CJK)
const peers = {};
const loads = {};
async function add(name, load) {
  if (skip.has(name)) return;
  const t = await timedAsync(load);
  peers[name] = t.r;
  loads[name] = t;
}
await add("supertok", async () => {
  const st = await import("../supertok.mjs");
  const enc = await st.getEncoding("o200k_base");
  return (s) => enc.encodeOrdinary(s);
});
await add("gpt-tokenizer", async () => {
  const m = await import("gpt-tokenizer/encoding/o200k_base");
  return (s) => m.encode(s, { disallowedSpecial: new Set() });
});
await add("js-tiktoken", async () => {
  const { Tiktoken } = await import("js-tiktoken/lite");
  const ranks = (await import("js-tiktoken/ranks/o200k_base")).default;
  const enc = new Tiktoken(ranks);
  return (s) => enc.encode(s, [], []);
});
await add("tiktoken (wasm)", async () => {
  const { get_encoding } = await import("tiktoken");
  const enc = get_encoding("o200k_base");
  return (s) => enc.encode_ordinary(s);
});
await add("ai-tokenizer", async () => {
  const Tokenizer = (await import("ai-tokenizer")).default;
  const o200k = await import("ai-tokenizer/encoding/o200k_base");
  const tok = new Tokenizer(o200k);
  return (s) => tok.encode(s, [], []);
});

const names = Object.keys(peers);
const same = {};
for (const lang of langs) {
  const want = Array.from(peers.supertok(texts[lang]));
  for (const n of names) {
    const got = Array.from(peers[n](texts[lang])); // also a warm-up call
    let k = 0;
    while (k < want.length && want[k] === got[k]) k++;
    same[`${n}/${lang}`] = k === want.length && got.length === want.length ? "same ids" : `differs at token ${k}`;
  }
}
const res = {};
for (let r = 0; r < rounds; r++) {
  const order = names.slice(r % names.length).concat(names.slice(0, r % names.length));
  for (const lang of langs) {
    for (const n of order) {
      const t = timed(() => peers[n](texts[lang]));
      (res[`${n}/${lang}`] ??= []).push(t);
    }
  }
}
const med = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
const fmt = (xs) => `${med(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)})`;
console.log(`node ${process.version}, ${rounds} rounds, o200k_base, encode without special tokens, MB/s (1 MB = 10^6 bytes)`);
for (const lang of langs) {
  const mb = Buffer.byteLength(texts[lang]) / 1e6;
  console.log(`\n${lang}: ${mb.toFixed(2)} MB\n`);
  console.log("| tokenizer | MB/s (CPU) | MB/s (wall) | supertok / it (CPU, median) | ids |");
  console.log("|---|---|---|---|---|");
  const st = med(res[`supertok/${lang}`].map((t) => mb / t.cpu));
  for (const n of names) {
    const c = res[`${n}/${lang}`].map((t) => mb / t.cpu), w = res[`${n}/${lang}`].map((t) => mb / t.wall);
    console.log(`| ${n} | ${fmt(c)} | ${fmt(w)} | ${n === "supertok" ? "" : (st / med(c)).toFixed(2)} | ${same[`${n}/${lang}`]} |`);
  }
}
console.log("\nload (first use in this process, o200k_base; ms CPU / wall):",
  names.map((n) => `${n} ${(loads[n].cpu * 1000).toFixed(0)} / ${(loads[n].wall * 1000).toFixed(0)}`).join(", "));
const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const gz = (p) => gzipSync(readFileSync(p), { level: 9 }).length;
const stBytes = gz(here("../supertok.mjs")) + gz(here("../models.mjs")) + gz(here("../../py/supertok/supertok.wasm")) + gz(here("../../py/supertok/vocab/o200k_base.tiktoken"));
console.log(`supertok gzipped (supertok.mjs + models.mjs + supertok.wasm + o200k_base.tiktoken): ${(stBytes / 1e6).toFixed(2)} MB`);
