// encodeWithUnstable: tiktoken's encode_with_unstable, computed by the core. The expected stable
// ids and completion counts are tiktoken 0.14's (the Python tests compare every completion).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as st from "../supertok.mjs";

const encodings = {
  cl100k_base: await st.getEncoding("cl100k_base"),
  o200k_base: await st.getEncoding("o200k_base"),
};

const CASES = [
  ["cl100k_base", "hello world", [15339], 100, [[1917], [4191, 75, 451]]],
  ["cl100k_base", "Всеобщая декларация", [16604, 2297, 1532, 55257, 36497], 1, [[7952, 15298, 3114, 17721, 56860]]],
  ["cl100k_base", "hi<|endoftext|> wor", [6151, 100257], 119, [[289, 371], [289, 683]]],
  ["o200k_base", "hello world", [24912], 6, [[2375], [17361]]],
  ["o200k_base", "Всеобщая декларация", [73136, 23415, 7184], 7, [[196817, 8045], [196817, 89702]]],
  ["o200k_base", "hi<|endoftext|> wor", [3686, 199999], 154, [[286, 819], [286, 2068]]],
];

test("encodeWithUnstable gives tiktoken's stable ids and completions", () => {
  for (const [name, text, stable, count, first] of CASES) {
    const enc = encodings[name];
    const got = enc.encodeWithUnstable(text, { allowedSpecial: "all" });
    assert.deepEqual(got.stable, stable, `${name} ${text}`);
    assert.equal(got.completions.length, count, `${name} ${text}`);
    assert.deepEqual(got.completions.slice(0, 2), first, `${name} ${text}`);
    // each completion, after the stable ids, decodes to bytes starting with the whole text
    const want = new TextEncoder().encode(text);
    for (const c of got.completions) {
      const bytes = enc.decodeBytes([...stable, ...c]);
      assert.deepEqual(bytes.subarray(0, want.length), want, `${name} ${text} ${c}`);
    }
  }
});

test("encodeWithUnstable refuses a disallowed special token as encode does", () => {
  const enc = encodings.cl100k_base;
  assert.throws(() => enc.encodeWithUnstable("a<|endoftext|>"), (e) => e.name === "SupertokError"
    && e.code === "ST_ERR_DISALLOWED_SPECIAL" && e.offset === 1 && e.token === 100257);
  assert.deepEqual(enc.encodeWithUnstable(""), { stable: [], completions: [] });
});
