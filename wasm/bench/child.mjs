// One measurement in a fresh process (bench.mjs starts it), printed as JSON:
//   node child.mjs load TOOL          the time to import and load o200k_base (CPU and wall), and
//                                     every file the load read (ES modules, CommonJS modules and
//                                     files read with fs), for the bundle size
//   node child.mjs patho TOOL KIND N  a pathological input of N bytes (after a warm-up on ordinary
//                                     text and a small input of the kind): a first call, then 4 more
import fs from "node:fs";
import fsp from "node:fs/promises";
import { createRequire, register, syncBuiltinESMExports } from "node:module";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TOOLS, pathological } from "./tools.mjs";

const [mode, tool, kind, n] = process.argv.slice(2);
const cpu = (c) => (c.user + c.system) / 1e6;
const files = new Set();

if (mode === "load") {
  // ES modules: a resolve hook (it runs on the loader's thread) appends each URL to a file
  const log = join(tmpdir(), `supertok-bench-${process.pid}.urls`);
  fs.writeFileSync(log, "");
  register("data:text/javascript," + encodeURIComponent(`
    import { appendFileSync } from "node:fs";
    export async function resolve(spec, ctx, next) {
      const r = await next(spec, ctx);
      if (r.url.startsWith("file:")) appendFileSync(${JSON.stringify(log)}, r.url + "\\n");
      return r;
    }`));
  // files read directly (wasm modules, vocabularies)
  const rs = fs.readFileSync, rf = fsp.readFile;
  fs.readFileSync = function (p, ...a) { if (typeof p === "string" || p instanceof URL) files.add(p instanceof URL ? fileURLToPath(p) : p); return rs.call(this, p, ...a); };
  fsp.readFile = function (p, ...a) { if (typeof p === "string" || p instanceof URL) files.add(p instanceof URL ? fileURLToPath(p) : p); return rf.call(this, p, ...a); };
  syncBuiltinESMExports();
  const w = performance.now(), c = process.cpuUsage();
  const encode = await TOOLS[tool]();
  const load = { cpu: cpu(process.cpuUsage(c)), wall: (performance.now() - w) / 1000 };
  const w2 = performance.now(), c2 = process.cpuUsage();
  encode("hello world");
  const first = { cpu: cpu(process.cpuUsage(c2)), wall: (performance.now() - w2) / 1000 };
  fs.readFileSync = rs;
  fsp.readFile = rf;
  for (const u of rs(log, "utf8").split("\n").filter(Boolean)) files.add(fileURLToPath(u));
  fs.unlinkSync(log);
  for (const f of Object.keys(createRequire(import.meta.url).cache)) files.add(f);
  const mine = new Set([fileURLToPath(new URL("./child.mjs", import.meta.url)), fileURLToPath(new URL("./tools.mjs", import.meta.url))]);
  console.log(JSON.stringify({ load, first, files: [...files].filter((f) => !mine.has(f)) }));
} else if (mode === "patho") {
  const encode = await TOOLS[tool]();
  // warm-up on ordinary text (V8 tiers the tool up; supertok builds its tables), untimed
  encode("Hello world, this is a warm-up. ".repeat(8000));
  // and on the same kind of input, small: V8 tiers up the code this input takes (on background
  // threads, whose CPU time process.cpuUsage counts) before the timed calls
  const small = pathological(kind, Math.max(1000, Math.floor(Number(n) / 50)));
  for (let k = 0; k < 3; k++) encode(small);
  const text = pathological(kind, Number(n));
  const bytes = Buffer.byteLength(text);
  const runs = [];
  for (let k = 0; k < 5; k++) {
    const w = performance.now(), c = process.cpuUsage();
    const ids = encode(text);
    runs.push({ cpu: cpu(process.cpuUsage(c)), wall: (performance.now() - w) / 1000, n: ids.length });
  }
  console.log(JSON.stringify({ bytes, runs }));
} else {
  console.error("usage: node child.mjs load TOOL | patho TOOL KIND NBYTES");
  process.exit(2);
}
