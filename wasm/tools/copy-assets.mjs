// Copies the files the npm package ships beside supertok.mjs from where the repository keeps
// them: the wasm module from the core (core_c/supertok.wasm, which core_c/build_wasm.py writes),
// the catalogue and rank files from the Python package (py/supertok/catalogue.json and
// py/supertok/vocab/*.tiktoken, *.json), so there is one source of each and the package cannot
// carry a different build or catalogue: `npm pack` runs this (prepack); test/api.test.mjs checks
// copies byte for byte. The copies are not committed (.gitignore). Usage: node tools/copy-assets.mjs [OUT_DIR] (default: wasm/).
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const core = fileURLToPath(new URL("../../core_c/", import.meta.url));
const src = fileURLToPath(new URL("../../py/supertok/", import.meta.url));
const out = process.argv[2] ?? fileURLToPath(new URL("../", import.meta.url));
export const VOCABS = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"];
// each asset and the folder of the repository it is copied from
export const ASSETS = { "supertok.wasm": core, "catalogue.json": src };

mkdirSync(`${out}/vocab`, { recursive: true });
for (const [f, from] of Object.entries(ASSETS)) copyFileSync(`${from}${f}`, `${out}/${f}`);
for (const f of readdirSync(`${src}vocab`)) {
  const stem = f.replace(/\.(tiktoken|json)$/, "");
  if (stem !== f && VOCABS.includes(stem)) copyFileSync(`${src}vocab/${f}`, `${out}/vocab/${f}`);
}
console.log(`supertok: copied supertok.wasm from ${core}, catalogue.json and vocab/ from ${src}, to ${out}`);
