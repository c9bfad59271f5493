// Shared by the tests: the repository's paths and the golden-vector files (vectors/*/*.jsonl),
// read exactly as tests/conftest.py's load_vectors reads them (first line the _meta header).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const SHOWN = 12;

export function loadVectors(rel) {
  const text = readFileSync(ROOT + rel, "utf8");
  const lines = text.split("\n");
  if (lines.at(-1) !== "") throw new Error(`${rel} does not end with a newline`);
  const rows = lines.slice(0, -1).map((l) => JSON.parse(l));
  return { meta: rows[0]._meta, records: rows.slice(1) };
}

/** A short description of how two id lists differ (tests/test_encode_vectors.py's _diff). */
export function diff(want, got) {
  got = Array.from(got);
  for (let k = 0; k < Math.min(want.length, got.length); k++) {
    if (want[k] !== got[k]) return `first difference at ${k}: expected ${JSON.stringify(want.slice(k, k + 8))}, got ${JSON.stringify(got.slice(k, k + 8))}`;
  }
  if (want.length !== got.length) return `expected ${want.length} items, got ${got.length}`;
  return null;
}

export function same(want, got) { return diff(want, got) === null; }

export function report(what, failures, ran) {
  if (failures.length) {
    throw new Error(`${what}: ${failures.length} of ${ran} records fail\n${failures.slice(0, SHOWN).join("\n")}`
      + (failures.length > SHOWN ? `\n... and ${failures.length - SHOWN} more` : ""));
  }
}

/** UTF-16 index of each code point index of text, plus one past the end. */
export function cpToUtf16(text) {
  const out = [];
  let u = 0;
  for (const ch of text) { out.push(u); u += ch.length; }
  out.push(u);
  return out;
}

export function short(s, n = 80) {
  s = JSON.stringify(s);
  return s.length > n ? s.slice(0, n) + `... (${s.length} chars)` : s;
}
