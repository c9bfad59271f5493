// The JavaScript package against the C core's contract and npm's expectations:
// - every core function supertok.mjs calls is in core_c/wasm_exports.txt, declared in supertok.h and
//   exported by the built module;
// - every header constant the module copies (_C) has the header's value;
// - supertok.d.ts declares every export of the module and every public member of its classes,
//   and nothing the module lacks;
// - package.json: an ES module with an exports map onto existing files, no dependencies, no
//   install scripts; the packaged copy of the assets (tools/copy-assets.mjs) is byte-equal to
//   the repository's (the core's wasm module, the Python package's catalogue and rank files) and
//   loads on its own, outside the repository.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, mkdirSync, readFileSync, copyFileSync, rmSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as st from "../supertok.mjs";
import { ROOT } from "../tools/test-helpers.mjs";

const W = ROOT + "wasm/";
// where the repository keeps each asset the package copies: the wasm module is the core's build
const origin = (f) => ROOT + (f === "supertok.wasm" ? "core_c/" : "py/supertok/") + f;
const src = readFileSync(W + "supertok.mjs", "utf8");
const dts = readFileSync(W + "supertok.d.ts", "utf8");
const header = readFileSync(ROOT + "core_c/include/supertok.h", "utf8");
const exportsTxt = readFileSync(new URL("../../core_c/wasm_exports.txt", import.meta.url), "utf8").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));

test("every core function the module calls is exported and declared", async () => {
  const used = [...new Set([...src.matchAll(/\bex(?:\[[^\]]*\])?\.(st_[a-z0-9_]+)\s*\(/g)].map((m) => m[1]))];
  const freed = [...new Set([...src.matchAll(/"(st_[a-z0-9_]+_free|st_free)"/g)].map((m) => m[1]))];
  const all = [...new Set([...used, ...freed])].sort();
  assert.ok(all.length > 25, `found only ${all.length} calls: the pattern no longer matches the module's calls`);
  const missing = all.filter((f) => !exportsTxt.includes(f));
  assert.deepEqual(missing, [], "called but not in core_c/wasm_exports.txt");
  const undeclared = all.filter((f) => !new RegExp(`ST_API[^;]*\\b${f}\\s*\\(`).test(header));
  assert.deepEqual(undeclared, [], "called but not declared ST_API in supertok.h");
  const mod = await WebAssembly.compile(readFileSync(origin("supertok.wasm")));
  const exported = new Set(WebAssembly.Module.exports(mod).map((e) => e.name));
  assert.deepEqual(all.filter((f) => !exported.has(f)), [], "called but not exported by supertok.wasm");
  assert.deepEqual(WebAssembly.Module.imports(mod), [], "the module imports nothing");
});

test("the header constants the module uses have the header's values", () => {
  const values = {};
  for (const m of header.matchAll(/#define\s+(ST_[A-Z0-9_]+)\s+(\d+)u?\b/g)) values[m[1]] = Number(m[2]);
  for (const m of header.matchAll(/\b(ST_[A-Z0-9_]+)\s*=\s*(\d+)/g)) values[m[1]] = Number(m[2]);
  for (const [k, v] of Object.entries(st._C)) assert.equal(v, values[k], `${k}: module ${v}, header ${values[k]}`);
  // the st_error layout the module reads (byte offsets 0 status ... 40 message; 160 bytes)
  assert.match(header, /0 status, 4 unit, 8 offset, 16 line, 24 token, 28 input, 32 kind, 36 length, 40 message;\s*\*\s*160 bytes/);
});

function declaredIn(block) {
  const names = new Set();
  for (const m of block.matchAll(/^\s+(?:readonly\s+|get\s+)?(\[Symbol\.dispose\]|[A-Za-z_][A-Za-z0-9_]*)\s*[(:?]/gm)) names.add(m[1]);
  return names;
}

function classBlock(name) {
  const m = dts.match(new RegExp(`declare class ${name}\\b[^{]*\\{([\\s\\S]*?)\\n\\}`));
  assert.ok(m, `supertok.d.ts declares no class ${name}`);
  return declaredIn(m[1]);
}

test("supertok.d.ts declares every export and every public member", () => {
  const declared = new Set([...dts.matchAll(/export declare (?:class|function|const)\s+([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
  assert.deepEqual(Object.keys(st).filter((k) => !declared.has(k)), [], "exported but not declared");
  assert.deepEqual([...declared].filter((k) => !(k in st)), [], "declared but not exported");
  const handle = classBlock("Handle");
  for (const cls of ["Encoding", "IncrementalDecoder", "UbeStreamDecoder", "SupertokError"]) {
    const members = new Set([...classBlock(cls), ...(cls === "SupertokError" ? [] : handle)]);
    const proto = st[cls].prototype;
    const own = [...Object.getOwnPropertyNames(proto), ...(cls === "SupertokError" ? [] : Object.getOwnPropertyNames(Object.getPrototypeOf(proto)))]
      .filter((k) => k !== "constructor" && !k.startsWith("_"));
    assert.deepEqual(own.filter((k) => !members.has(k)), [], `${cls}: public members not declared`);
    assert.ok(cls === "SupertokError" || members.has("[Symbol.dispose]"), `${cls}: [Symbol.dispose] not declared`);
    assert.ok(cls === "SupertokError" || typeof proto[Symbol.dispose] === "function", `${cls} lacks [Symbol.dispose]`);
  }
});

test("package.json is an ES module with no dependencies or install scripts", () => {
  const pkg = JSON.parse(readFileSync(W + "package.json", "utf8"));
  assert.equal(pkg.type, "module");
  for (const k of ["dependencies", "peerDependencies", "optionalDependencies", "bundleDependencies"]) assert.equal(pkg[k], undefined, k);
  for (const k of ["preinstall", "install", "postinstall", "prepare"]) assert.equal(pkg.scripts?.[k], undefined, `scripts.${k}`);
  assert.equal(pkg.exports["."].default, "./supertok.mjs");
  assert.equal(pkg.exports["."].types, "./supertok.d.ts");
  const py = readFileSync(ROOT + "pyproject.toml", "utf8");
  assert.equal(pkg.version, py.match(/^version\s*=\s*"([^"]+)"/m)[1], "the npm version is the Python package's");
  for (const f of ["supertok.mjs", "supertok.d.ts", "supertok.wasm", "catalogue.json"]) assert.ok(pkg.files.includes(f), f);
});

test("the packaged assets are the repository's bytes and load outside the repository", async () => {
  // copies left in wasm/ by an earlier `npm pack` must not have drifted
  for (const f of ["supertok.wasm", "catalogue.json", ...(existsSync(W + "vocab") ? readdirSync(W + "vocab").map((v) => "vocab/" + v) : [])]) {
    if (existsSync(W + f)) assert.ok(readFileSync(W + f).equals(readFileSync(origin(f))), `wasm/${f} differs from ${origin(f).slice(ROOT.length)}`);
  }
  const dir = mkdtempSync(join(tmpdir(), "supertok-pkg-"));
  try {
    execFileSync(process.execPath, [W + "tools/copy-assets.mjs", dir], { stdio: "pipe" });
    // the package's own files, as package.json's "files" lists them (the assets come from copy-assets)
    const pkg = JSON.parse(readFileSync(W + "package.json", "utf8"));
    const own = pkg.files.filter((f) => !f.includes("*") && f !== "supertok.wasm" && f !== "catalogue.json");
    assert.deepEqual(own.filter((f) => !existsSync(W + f)), [], "package.json lists files that do not exist");
    mkdirSync(join(dir, "compact"), { recursive: true });
    for (const f of [...own, "package.json"]) copyFileSync(W + f, join(dir, f));
    // the compact vocabularies are the package's own files (generated, committed), by pattern
    for (const f of readdirSync(W + "compact").filter((f) => f.endsWith(".stvc"))) copyFileSync(W + "compact/" + f, join(dir, "compact", f));
    for (const f of ["supertok.wasm", "catalogue.json"]) {
      assert.ok(readFileSync(join(dir, f)).equals(readFileSync(origin(f))), f);
    }
    for (const v of ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]) {
      for (const ext of [".tiktoken", ".json"]) {
        assert.ok(readFileSync(join(dir, "vocab", v + ext)).equals(readFileSync(ROOT + "py/supertok/vocab/" + v + ext)), v + ext);
      }
    }
    // a child process: a fresh module instance, which can only find the copies
    // (under Deno, process.execPath is deno: `deno eval` runs the same code as a module)
    const isDeno = typeof Deno !== "undefined";
    const out = execFileSync(process.execPath, [...(isDeno ? ["eval"] : ["--input-type=module", "-e"]),
      `import * as st from ${JSON.stringify("file://" + join(dir, "supertok.mjs"))};
       const e = await st.getEncoding("o200k_base"); const w = await st.createWorker();
       console.log(JSON.stringify([Array.from(e.encode("hello world")), Array.from(await w.encode("cl100k_base", "hello world"))]));
       w.terminate();`],
    { encoding: "utf8" });
    assert.equal(out.trim(), "[[24912,2375],[15339,1917]]");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
