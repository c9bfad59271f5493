// One round of the first-look benchmark (bench_vs_wasmtime.py runs it in a fresh process):
// load o200k_base, warm up, then time `reps` encodeOrdinary calls on each file. Prints JSON.
// Usage: node bench-encode.mjs REPS FILE...
import { readFileSync } from "node:fs";

const [reps, ...files] = process.argv.slice(2);
const t0 = performance.now();
const c0 = process.cpuUsage();
const st = await import("../supertok.mjs");
const enc = await st.getEncoding("o200k_base");
const cpu = (c) => (c.user + c.system) / 1e6;
const load = { wall_s: (performance.now() - t0) / 1000, cpu_s: cpu(process.cpuUsage(c0)) };
const out = { load, files: {} };
for (const f of files) {
  const text = readFileSync(f, "utf8");
  const bytes = Buffer.byteLength(text);
  let n = 0;
  for (let k = 0; k < 3; k++) n = enc.encodeOrdinary(text).length; // warm-up: V8 tiers the module up
  const wall = [], cpus = [];
  for (let k = 0; k < Number(reps); k++) {
    const w = performance.now(), c = process.cpuUsage();
    n = enc.encodeOrdinary(text).length;
    cpus.push(cpu(process.cpuUsage(c)));
    wall.push((performance.now() - w) / 1000);
  }
  out.files[f] = { bytes, ids: n, wall_s: wall, cpu_s: cpus };
}
console.log(JSON.stringify(out));
