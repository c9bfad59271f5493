// The module in a real browser: headless Chromium (Debian's chromium, driven by puppeteer-core)
// opens wasm/browser/index.html from a static server on 127.0.0.1 that serves the repository,
// and page.mjs runs a sample of the golden vectors through wasm/supertok.mjs there.
//   cd wasm/browser && npm ci && node --test browser.test.mjs
// CHROMIUM names the browser binary (default /usr/bin/chromium). .ci/run installs both.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readFile } from "node:fs/promises";
import { extname, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TYPES = { ".html": "text/html", ".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
  ".json": "application/json", ".jsonl": "text/plain; charset=utf-8", ".tiktoken": "text/plain", ".stmodel": "text/plain; charset=utf-8" };

function serve() {
  const server = createServer(async (req, res) => {
    const path = normalize(ROOT + decodeURIComponent(new URL(req.url, "http://x").pathname));
    if (req.method !== "GET" || !path.startsWith(ROOT) || path.split(sep).includes("node_modules")) { res.writeHead(403).end(); return; }
    try {
      const body = await readFile(path);
      res.writeHead(200, { "content-type": TYPES[extname(path)] ?? "application/octet-stream" }).end(body);
    } catch { res.writeHead(404).end(); }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

// Runs fn(browser, port) with the static server and Chromium started, and always stops both,
// whatever fails (a missing browser, a launch error, an assertion): a server left listening
// keeps node's event loop alive, so a failing test would otherwise never end.
async function withBrowser(fn) {
  const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
  assert.ok(existsSync(executablePath), `no browser at ${executablePath}: install Debian's chromium (or set CHROMIUM)`);
  let server, browser;
  try {
    const puppeteer = (await import("puppeteer-core")).default;
    server = await serve();
    browser = await puppeteer.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
    return await fn(browser, server.address().port);
  } finally {
    if (browser) await browser.close().catch(() => {});
    if (server) {
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(() => resolve()));
    }
  }
}

test("a sample of the golden vectors in headless Chromium", { timeout: 240_000 }, async () => {
  await withBrowser(async (browser, port) => {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`http://127.0.0.1:${port}/wasm/browser/index.html`);
    await page.waitForFunction(() => window.supertokReport?.done === true, { timeout: 200_000 });
    const report = await page.evaluate(() => window.supertokReport);
    const ran = Object.values(report.ran).reduce((a, b) => a + b, 0);
    console.log(`${report.userAgent}: ${ran} records`, JSON.stringify(report.ran));
    assert.deepEqual(errors, []);
    assert.deepEqual(report.failures, []);
    assert.equal(Object.keys(report.ran).length, 13, "every sampled file ran, and the worker");
    assert.ok(ran > 2000, `only ${ran} records ran`);
  });
});

test("the playground renders a vector's text with the vector's ids, and a screenshot", { timeout: 120_000 }, async () => {
  const recs = readFileSync(ROOT + "vectors/encode/o200k_base.jsonl", "utf8").split("\n").slice(1, -1).map((l) => JSON.parse(l));
  const pick = (allowed) => recs.filter((r) => "text" in r && "ids" in r && JSON.stringify(r.allowed_special) === JSON.stringify(allowed)
    && r.disallowed_special === "all" && r.text.length <= 500 && /[^\x00-\x7f]/.test(r.text)).sort((a, b) => b.text.length - a.text.length)[0]
    ?? assert.fail(`no record for allowed ${JSON.stringify(allowed)}`);
  // special tokens allowed, then a multi-script text without them (the screenshot shows the last)
  const cases = [[recs.filter((r) => r.allowed_special === "all" && r.disallowed_special === "all" && "ids" in r && "text" in r)
    .sort((a, b) => b.text.length - a.text.length)[0], "1"], [pick([]), "0"]];
  await withBrowser(async (browser, port) => {
    const page = await browser.newPage();
    await page.setViewport({ width: 1000, height: 900 });
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    for (const [r, specials] of cases) {
      const q = new URLSearchParams({ text: r.text, encoding: "o200k_base", specials });
      await page.goto(`http://127.0.0.1:${port}/wasm/demo/index.html?${q}`);
      await page.waitForFunction(() => window.supertokDemo !== undefined, { timeout: 60_000 });
      const demo = await page.evaluate(() => window.supertokDemo);
      assert.equal(demo.error, undefined);
      assert.deepEqual(demo.ids, r.ids);
      const shown = await page.evaluate(() => ({
        tokens: Number(document.getElementById("n-tokens").textContent),
        chars: Number(document.getElementById("n-chars").textContent),
        bytes: Number(document.getElementById("n-bytes").textContent),
        ids: [...document.querySelectorAll("#tokens span")].map((s) => Number(s.dataset.id)),
        text: [...document.querySelectorAll("#tokens span")].map((s) => s.textContent).join(""),
        scripts: document.querySelectorAll("#scripts tbody tr").length,
      }));
      assert.equal(shown.tokens, r.ids.length);
      assert.deepEqual(shown.ids, r.ids);
      assert.equal(shown.text, r.text, "the token spans spell the text");
      assert.equal(shown.chars, [...r.text].length);
      assert.equal(shown.bytes, Buffer.byteLength(r.text));
      assert.ok(shown.scripts >= 1);
    }
    const shot = join(process.env.SUPERTOK_SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), "supertok-demo-")), "playground.png");
    await page.screenshot({ path: shot, fullPage: true });
    const png = readFileSync(shot);
    assert.ok(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) && statSync(shot).size > 20_000,
      "the screenshot is a PNG with something drawn");
    console.log(`playground screenshot: ${shot}`);
    assert.deepEqual(errors, []);
  });
});
