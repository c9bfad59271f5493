// The module in a real browser: headless Chromium (Debian's chromium, driven by puppeteer-core)
// opens wasm/browser/index.html from a static server on 127.0.0.1 that serves the repository,
// and page.mjs runs a sample of the golden vectors through wasm/supertok.mjs there.
//   cd wasm/browser && npm ci && node --test browser.test.mjs
// CHROMIUM names the browser binary (default /usr/bin/chromium). .ci/run installs both.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { existsSync } from "node:fs";
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

test("a sample of the golden vectors in headless Chromium", { timeout: 240_000 }, async () => {
  const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
  assert.ok(existsSync(executablePath), `no browser at ${executablePath}: install Debian's chromium (or set CHROMIUM)`);
  const puppeteer = (await import("puppeteer-core")).default;
  const server = await serve();
  const browser = await puppeteer.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`http://127.0.0.1:${server.address().port}/wasm/browser/index.html`);
    await page.waitForFunction(() => window.supertokReport?.done === true, { timeout: 200_000 });
    const report = await page.evaluate(() => window.supertokReport);
    const ran = Object.values(report.ran).reduce((a, b) => a + b, 0);
    console.log(`${report.userAgent}: ${ran} records`, JSON.stringify(report.ran));
    assert.deepEqual(errors, []);
    assert.deepEqual(report.failures, []);
    assert.equal(Object.keys(report.ran).length, 12, "every sampled file ran");
    assert.ok(ran > 2000, `only ${ran} records ran`);
  } finally {
    await browser.close();
    server.close();
  }
});
