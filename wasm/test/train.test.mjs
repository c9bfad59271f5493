// train(): JavaScript training gives the model file Python's supertok.train gives, byte for byte
// (test/fixtures/train_models.json, written by `python wasm/tools/train_fixture.py`: BPE in
// both modes and alphabets with special tokens, BoundlessBPE, SuperBPE, each with and without
// the n-gram split), whatever form the texts take (an array of strings, a one-shot generator,
// UTF-8 bytes); every case of the training vectors (vectors/train/merges.jsonl, as
// tests/test_train_vectors.py runs them) gives the expected merges and supermerges; and its
// errors: the core's refusals as SupertokError, bad texts naming the document.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as st from "../supertok.mjs";
import { ROOT, loadVectors } from "../tools/test-helpers.mjs";

const fixture = JSON.parse(readFileSync(ROOT + "wasm/test/fixtures/train_models.json", "utf8"));
const utf8 = new TextEncoder();
const text = new TextDecoder();

/** Python's train() options in the JavaScript names. */
function jsOptions(o) {
  const names = { vocab_size: "vocabSize", special_tokens: "specialTokens", min_frequency: "minFrequency",
    ngram_split: "ngramSplit" };
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [names[k] ?? k, v]));
}

test("the fixture: its generator's command and every algorithm", () => {
  assert.equal(fixture.generated_by, "python wasm/tools/train_fixture.py");
  const algorithms = new Set(fixture.cases.map((c) => `${c.options.algorithm ?? "bpe"}${c.options.ngram_split ? "+split" : ""}`));
  for (const a of ["bpe", "boundless", "superbpe", "boundless+split", "superbpe+split"]) assert.ok(algorithms.has(a), a);
  for (const c of fixture.cases) {
    if (c.options.algorithm) assert.ok(c.supermerges_made > 0, `${c.case}: the case makes supermerges`);
  }
});

for (const c of fixture.cases) {
  test(`train() reproduces Python's model: ${c.case}`, async () => {
    const docs = fixture.corpora[c.corpus];
    const options = jsOptions(c.options);
    const records = [];
    const enc = await st.train(docs, { ...options, onProgress: (r) => records.push(r) });
    try {
      assert.equal(text.decode(enc.modelBytes()), c.model);
      assert.ok(enc.name.startsWith("supertok-"));
      for (const t of c.options.special_tokens ?? []) assert.ok(enc.specialTokensSet.has(t), t);
      // the model encodes and round-trips at once
      const sample = docs.slice(0, 5).join("");
      assert.equal(enc.decode(enc.encodeOrdinary(sample)), sample);
    } finally {
      enc.free();
    }
    // progress: the phases in order, each ending with a done record
    const phases = [...new Set(records.map((r) => r.phase))];
    const want = ["count", "merge"];
    if (c.options.algorithm) want.push("candidates", ...(c.options.ngram_split ? ["split"] : []), "supermerge");
    assert.deepEqual(phases, want);
    for (const p of want) assert.ok(records.some((r) => r.phase === p && r.done), `${p} ends`);
    const counted = records.filter((r) => r.phase === "count" && r.done)[0];
    assert.equal(counted.documents, docs.length);
    assert.equal(counted.bytes, docs.reduce((a, d) => a + utf8.encode(d).length, 0));

    // the texts as a one-shot generator of UTF-8 bytes (kept for the second pass): the same model
    const again = await st.train((function* () { for (const d of docs) yield utf8.encode(d); })(), options);
    try {
      assert.equal(text.decode(again.modelBytes()), c.model);
    } finally {
      again.free();
    }
  });
}

test("the trained model loads again with loadModel", async () => {
  const c = fixture.cases.find((x) => x.case === "boundless");
  const enc = await st.train(fixture.corpora[c.corpus], jsOptions(c.options));
  const loaded = await st.loadModel(enc.modelBytes());
  try {
    const sample = fixture.corpora[c.corpus].join("");
    assert.deepEqual(loaded.encodeOrdinary(sample), enc.encodeOrdinary(sample));
    assert.equal(text.decode(loaded.modelBytes()), c.model);
  } finally {
    enc.free();
    loaded.free();
  }
});

test("options the core refuses are SupertokErrors; bad options and texts are TypeErrors or RangeErrors", async () => {
  const docs = ["the cat sat on the mat", "the dog sat on the cat"];
  await assert.rejects(st.train(docs, { vocabSize: 100 }), (e) => e instanceof st.SupertokError && e.code === "ST_ERR_INVALID_ARGUMENT");
  await assert.rejects(st.train(docs, { vocabSize: 300, mode: "hf", algorithm: "boundless" }),
    (e) => e instanceof st.SupertokError && e.code === "ST_ERR_INVALID_ARGUMENT" && /hf/.test(e.detail));
  await assert.rejects(st.train(docs, { vocabSize: 300, algorithm: "superbpe", supermerges: 100 }),
    (e) => e instanceof st.SupertokError && e.code === "ST_ERR_INVALID_ARGUMENT");
  await assert.rejects(st.train(docs, { vocabSize: 300, algorithm: "boundless", supermerges: 3 }),
    (e) => e instanceof st.SupertokError && e.code === "ST_ERR_INVALID_ARGUMENT");
  await assert.rejects(st.train(docs, { vocabSize: 300, ngramSplit: true }),
    (e) => e instanceof st.SupertokError && e.code === "ST_ERR_INVALID_ARGUMENT");
  await assert.rejects(st.train(docs, { vocabSize: 300, algorithm: "superbpe" }), TypeError);
  await assert.rejects(st.train(docs, { vocabSize: 300, algorithm: "super" }), RangeError);
  await assert.rejects(st.train(docs, { vocabSize: 300, mode: "fast" }), RangeError);
  await assert.rejects(st.train(docs, { vocabSize: -1 }), RangeError);
  await assert.rejects(st.train(docs, {}), RangeError);
  await assert.rejects(st.train("the cat", { vocabSize: 300 }), TypeError);
  await assert.rejects(st.train(["ok", 7], { vocabSize: 300 }), (e) => e instanceof TypeError && /texts\[1\]/.test(e.message));
  await assert.rejects(st.train(["ok", "a\uD800b"], { vocabSize: 300 }),
    (e) => e instanceof RangeError && e.document === 1 && e.index === 1);
  await assert.rejects(st.train(["ok", "fine", new Uint8Array([0x61, 0xFF])], { vocabSize: 300 }),
    (e) => e instanceof st.SupertokError && e.code === "ST_ERR_INVALID_UTF8" && e.document === 2 && e.offset === 1);
  // after the errors the module trains as before
  const enc = await st.train(docs, { vocabSize: 250 });
  assert.equal(enc.decode(enc.encodeOrdinary(docs[0])), docs[0]);
  enc.free();
});

/** The [left, right, count] triples of a model file's section ("merges" or "supermerges"). */
function section(model, name) {
  const lines = model.split("\n");
  const k = lines.findIndex((l) => l.startsWith(`${name} `));
  if (k < 0) return [];
  const n = Number(lines[k].split(" ")[1]);
  return lines.slice(k + 1, k + 1 + n).map((l) => l.split(" ").map(Number));
}

test("every case of vectors/train/merges.jsonl: the expected merges and supermerges", async () => {
  const corpora = Object.fromEntries(loadVectors("vectors/train/corpora.jsonl").records.map((r) => [r.corpus, r.documents]));
  const { records } = loadVectors("vectors/train/merges.jsonl");
  assert.ok(records.length > 500);
  const failures = [];
  for (const c of records) {
    const options = { vocabSize: c.vocab_size, mode: c.mode, alphabet: c.alphabet, pattern: c.pattern,
      scriptAware: c.script_aware, scripts: c.scripts, specialTokens: c.special_tokens, minFrequency: c.min_frequency,
      algorithm: c.algorithm, ngramSplit: c.ngram_split, supermerges: c.supermerges_arg };
    const enc = await st.train(corpora[c.corpus], options);
    const model = text.decode(enc.modelBytes());
    enc.free();
    const merges = section(model, "merges"), supermerges = section(model, "supermerges");
    if (JSON.stringify(merges) !== JSON.stringify(c.merges) || JSON.stringify(supermerges) !== JSON.stringify(c.supermerges)) {
      failures.push(`${c.case}: ${merges.length} merges, ${supermerges.length} supermerges (expected ${c.merges.length}, `
        + `${c.supermerges.length})`);
    }
  }
  assert.deepEqual(failures, []);
});

test("every case of vectors/train/extend.jsonl: extending a model gives the expected merges", async () => {
  const corpora = Object.fromEntries(loadVectors("vectors/train/corpora.jsonl").records.map((r) => [r.corpus, r.documents]));
  const { records } = loadVectors("vectors/train/extend.jsonl");
  assert.ok(records.length >= 30);
  const failures = [];
  for (const c of records) {
    // the base: a rules model of the case's merges (the model format's text, docs/formats/model-format.md)
    const base = utf8.encode(`supertok-model 1\nname base\nkind rules\nalphabet ${c.alphabet}\npattern o200k\n`
      + `script-aware no\nmerges ${c.base_merges.length}\n${c.base_merges.map((m) => m.join(" ") + "\n").join("")}`
      + "specials 0\nend\n");
    const enc = await st.train(corpora[c.corpus], { vocabSize: c.vocab_size, extend: base, seedMerges: c.seed_merges,
      pattern: c.pattern, minCount: c.min_count, minFrequency: c.min_frequency });
    const model = text.decode(enc.modelBytes());
    enc.free();
    const merges = section(model, "merges");
    if (JSON.stringify(merges) !== JSON.stringify(c.merges)) {
      failures.push(`${c.case}: ${merges.length} merges (expected ${c.merges.length})`);
    }
    if (!model.includes(`training algorithm=extend mode=paper vocab_size=${c.vocab_size} min_frequency=${c.min_frequency} `
      + `base=base seed_merges=${c.seed_merges} max_words=4 colon_space=yes min_count=${c.min_count} ngram_split=no\n`)) {
      failures.push(`${c.case}: the training line`);
    }
  }
  assert.deepEqual(failures, []);
});

test("extend: refusals name what was wrong", async () => {
  const docs = ["at the end of the day we go home\n", "Name: Alice Smith\n"];
  const base = await st.train(docs, { vocabSize: 243 + 10 });
  try {
    await assert.rejects(st.train(docs, { vocabSize: 300, extend: base, alphabet: "ube" }), /alphabet/);
    await assert.rejects(st.train(docs, { vocabSize: 300, extend: base, seedMerges: 99 }), /seedMerges/);
    await assert.rejects(st.train(docs, { vocabSize: 300, extend: base, algorithm: "boundless" }), /algorithm/);
    await assert.rejects(st.train(docs, { vocabSize: 300, seedMerges: 3 }), /extend/);
    await assert.rejects(st.train(docs, { vocabSize: 300, extend: "base" }), /extend takes/);
    const ext = await st.train(docs, { vocabSize: 300, extend: base, minCount: 1 });
    assert.ok(text.decode(ext.modelBytes()).includes("\npattern superbpe\n"));
    ext.free();
  } finally {
    base.free();
  }
});

test("a tiktoken vocabulary refuses SuperBPE's isolated pattern (tiktoken keeps only the matches)", async () => {
  const ranks = Array.from({ length: 256 }, (_, i) => `${btoa(String.fromCharCode(i))} ${i}\n`).join("");
  const catalogue = JSON.parse(readFileSync(ROOT + "py/supertok/catalogue.json", "utf8"));
  for (const name of ["superbpe", "llama3", "qwen2", "deepseek_v3"]) {
    await assert.rejects(st.loadEncoding({ name: "x", ranks, patStr: catalogue.patterns[name].pat_str }),
      /tiktoken keeps only the matches/);
  }
  const ok = await st.loadEncoding({ name: "y", ranks, patStr: catalogue.patterns.o200k.pat_str });
  assert.deepEqual([...ok.encode("ab")], [97, 98]);
  ok.free();
});
