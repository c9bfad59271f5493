// The module takes its encodings, patterns, special tokens, default scripts and model tables from
// the encoding catalogue, py/supertok/catalogue.json (the file the Python package and the vector
// generators read; the npm package ships a copy beside the module), and holds no copy of its own:
// - its encoding names, default scripts, pattern names and model-to-encoding answers are the file's;
// - every shipped encoding loads with the file's special tokens, in the file's order (o200k_harmony's
//   reserved range included);
// - a copy of the module beside an altered catalogue answers from the altered file.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as st from "../supertok.mjs";
import { ROOT } from "../tools/test-helpers.mjs";

const CATALOGUE = JSON.parse(readFileSync(ROOT + "py/supertok/catalogue.json", "utf8"));

function specialTokens(entry) {
  const out = Object.entries(entry.special_tokens);
  for (const r of entry.special_token_ranges ?? []) {
    for (let i = r.first; i <= r.last; i++) out.push([r.template.replace("{id}", String(i)), i]);
  }
  return out;
}

test("encoding names, default scripts and pattern names are the catalogue's", async () => {
  await st.init();
  assert.deepEqual(st.listEncodingNames(), Object.keys(CATALOGUE.encodings));
  assert.deepEqual(st.DEFAULT_SCRIPTS, CATALOGUE.default_scripts);
  for (const [name, p] of Object.entries(CATALOGUE.patterns)) {
    const pieces = st.pretokenize("Hello world's 12345", { pattern: name });
    for (const alias of p.aliases) assert.deepEqual(st.pretokenize("Hello world's 12345", { pattern: alias }), pieces, alias);
  }
  // names the catalogue lacks are refused, inherited object keys included
  for (const bad of ["p50k_edit", "toString", "__proto__"]) {
    assert.throws(() => st.pretokenize("x", { pattern: bad }), RangeError, bad);
  }
});

test("model names map to encodings as the catalogue's tables say", () => {
  const exact = CATALOGUE.model_to_encoding;
  const prefixes = Object.entries(CATALOGUE.model_prefix_to_encoding);
  assert.ok(Object.keys(exact).length > 40 && prefixes.length > 10, "the catalogue's model tables are nearly empty");
  for (const [model, enc] of Object.entries(exact)) assert.equal(st.encodingNameForModel(model), enc, model);
  for (const [prefix] of prefixes) {
    const model = prefix + "x";
    const want = Object.hasOwn(exact, model) ? exact[model] : prefixes.find(([p]) => model.startsWith(p))[1];
    assert.equal(st.encodingNameForModel(model), want, model);
  }
  assert.throws(() => st.encodingNameForModel("no-such-model"), RangeError);
});

test("every shipped encoding has the catalogue's special tokens, in order", async () => {
  for (const [name, entry] of Object.entries(CATALOGUE.encodings)) {
    const enc = await st.getEncoding(name);
    try {
      assert.deepEqual(Object.entries(enc.specialTokens), specialTokens(entry), name);
    } finally {
      enc.free();
    }
  }
  const harmony = CATALOGUE.encodings.o200k_harmony;
  assert.ok(harmony.special_token_ranges.length > 0 && specialTokens(harmony).length > 1000,
    "o200k_harmony's reserved range is not in the catalogue");
});

test("a copy of the module beside an altered catalogue answers from that file", () => {
  const dir = mkdtempSync(join(tmpdir(), "supertok-catalogue-"));
  try {
    copyFileSync(ROOT + "wasm/supertok.mjs", join(dir, "supertok.mjs"));
    const altered = structuredClone(CATALOGUE);
    altered.model_to_encoding = { "catalogue-probe": "p50k_edit", ...altered.model_to_encoding };
    altered.default_scripts = ["Thai"];
    altered.encodings = { p50k_edit: altered.encodings.p50k_edit };
    writeFileSync(join(dir, "catalogue.json"), JSON.stringify(altered));
    // the probe is a module file run by this runtime's own binary (node, or deno under `deno test`)
    const probe = join(dir, "probe.mjs");
    writeFileSync(probe, `import * as st from "./supertok.mjs";
       console.log(JSON.stringify([st.encodingNameForModel("catalogue-probe"), st.DEFAULT_SCRIPTS, st.listEncodingNames()]));`);
    const args = typeof globalThis.Deno !== "undefined" ? ["run", "--allow-read", probe] : [probe];
    const out = execFileSync(process.execPath, args, { encoding: "utf8" });
    assert.deepEqual(JSON.parse(out), ["p50k_edit", ["Thai"], ["p50k_edit"]]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
