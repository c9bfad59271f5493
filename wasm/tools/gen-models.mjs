// Writes wasm/models.mjs, the model name -> encoding table of encodingForModel, from the Python
// package's generated py/supertok/_models.py (tiktoken 0.14's table, made by
// core_c/tools/gen_model_table.py), so both packages map models alike. test/api.test.mjs checks
// the committed file is what this writes. Usage: node tools/gen-models.mjs [--check]
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const OUT = fileURLToPath(new URL("../models.mjs", import.meta.url));

export function render() {
  const py = readFileSync(fileURLToPath(new URL("../../py/supertok/_models.py", import.meta.url)), "utf8");
  const table = (name) => {
    const m = py.match(new RegExp(`^${name} = \\{([^}]*)\\}`, "m"));
    if (!m) throw new Error(`py/supertok/_models.py has no ${name}`);
    const pairs = [...m[1].matchAll(/'([^'\\]*)': '([^'\\]*)'/g)].map((p) => [p[1], p[2]]);
    if (pairs.length !== m[1].split("': '").length - 1) throw new Error(`${name}: an entry this reader does not parse`);
    return pairs;
  };
  const obj = (pairs) => "{\n" + pairs.map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)},`).join("\n") + "\n}";
  return "// GENERATED FILE - DO NOT EDIT. Made by: node wasm/tools/gen-models.mjs, from py/supertok/_models.py\n"
    + "// (tiktoken 0.14's model name -> encoding name: exact names, then prefixes in this order).\n"
    + `export const MODEL_TO_ENCODING = ${obj(table("MODEL_TO_ENCODING"))};\n`
    + `export const MODEL_PREFIX_TO_ENCODING = ${obj(table("MODEL_PREFIX_TO_ENCODING"))};\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = render();
  if (process.argv.includes("--check")) {
    if (readFileSync(OUT, "utf8") !== text) { console.error("wasm/models.mjs is stale: run node wasm/tools/gen-models.mjs"); process.exit(1); }
  } else writeFileSync(OUT, text);
}
