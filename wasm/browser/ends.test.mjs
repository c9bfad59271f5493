// A failing browser test still ends: browser.test.mjs run against a "browser" that cannot start
// (/bin/false) must fail both of its tests and exit, not keep node alive with its static server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL("./", import.meta.url));

test("browser.test.mjs ends, failing, when the browser cannot be launched", () => {
  // without NODE_TEST_CONTEXT, which would make the child report to this runner instead of
  // printing its own results and exit status
  const { NODE_TEST_CONTEXT, ...env } = process.env;
  const run = spawnSync(process.execPath, ["--test", here + "browser.test.mjs"], {
    env: { ...env, CHROMIUM: "/bin/false" }, encoding: "utf8", timeout: 60_000,
  });
  assert.equal(run.error, undefined, `the run did not end within 60 s (${run.error})`);
  assert.notEqual(run.status, 0, "a browser that cannot start must fail the tests");
  assert.match(run.stdout, /^# fail 2$/m, run.stdout);
});
