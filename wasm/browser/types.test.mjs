// supertok.d.ts through the TypeScript compiler (pinned in package.json): the declarations
// compile under --strict, and types-usage.ts, which uses them as a program would, type-checks.
// (test/api.test.mjs checks that they declare exactly what the module exports.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL("./", import.meta.url));

test("supertok.d.ts compiles under tsc --strict, with a program using it", () => {
  const tsc = here + "node_modules/typescript/bin/tsc";
  let out = "";
  try {
    out = execFileSync(process.execPath, [tsc, "--noEmit", "--strict", "--target", "es2022", "--module", "es2022",
      "--moduleResolution", "bundler", "--allowImportingTsExtensions", "--lib", "es2022,dom,esnext.disposable",
      here + "types-usage.ts"], { encoding: "utf8" });
  } catch (e) {
    assert.fail(`tsc failed:\n${e.stdout}${e.stderr}`);
  }
  assert.equal(out.trim(), "");
});
