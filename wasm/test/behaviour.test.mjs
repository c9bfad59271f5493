// What the vectors do not pin: lone surrogates (handled as the Python API handles them), the
// errors (SupertokError carrying the core's status name, message and position), offsets in
// UTF-16 units, handles (free, Symbol.dispose, the FinalizationRegistry) and views onto a
// memory that grows.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import * as st from "../supertok.mjs";
import { ROOT } from "../tools/test-helpers.mjs";

const o200k = await st.getEncoding("o200k_base");
const cl100k = await st.getEncoding("cl100k_base");
const harmony = await st.getEncoding("o200k_harmony");
const ubeModel = await st.loadModel(readFileSync(ROOT + "vectors/models/ube_small.stmodel"));

test("lone surrogates encode as tiktoken repairs them: U+FFFD each, a pair is its character", () => {
  for (const enc of [o200k, cl100k]) {
    assert.deepEqual(enc.encode("a\uD800b"), enc.encode("a\uFFFDb"));
    assert.deepEqual(enc.encode("\uDC00x\uD83D"), enc.encode("\uFFFDx\uFFFD"));
    assert.deepEqual(enc.encode("\uD83D\uDE00"), enc.encode("😀"));
    assert.equal(enc.count("\uD800\uD800"), enc.count("\uFFFD\uFFFD"));
    assert.deepEqual(enc.encodeOrdinary("x\uDFFF"), enc.encodeOrdinary("x\uFFFD"));
  }
  // offsets index the caller's string: the repair keeps every UTF-16 length
  const text = "ab\uD800cd😀\uDC00e";
  const { ids, starts } = o200k.encodeWithOffsets(text);
  const fixed = o200k.encodeWithOffsets(text.replace(/[\uD800-\uDFFF](?![\uDC00-\uDFFF])/gu, "\uFFFD"));
  assert.deepEqual(ids, fixed.ids);
  assert.deepEqual(starts, fixed.starts);
});

test("pretokenize and ubeEncodeSymbols refuse a lone surrogate, naming its index (as Python's API)", () => {
  for (const fn of [() => st.pretokenize("ab\uD800c"), () => st.pretokenizeSpans("ab\uD800c"), () => st.ubeEncodeSymbols("ab\uD800c")]) {
    assert.throws(fn, (e) => e instanceof RangeError && e.index === 2 && /U\+D800 at index 2/.test(e.message));
  }
  assert.throws(() => st.ubeEncodeSymbols("😀\uDE00"), (e) => e.index === 2);
  assert.deepEqual(st.pretokenize("😀 x"), ["😀", " x"]);
});

test("offsets are UTF-16 indexes: astral characters count 2, a token inside a character gets its start", () => {
  const text = "😀😀 héllo 𝔘𝔫𝔦";
  const { ids, starts } = o200k.encodeWithOffsets(text);
  assert.equal(ids.length, starts.length);
  // every start is a character boundary of the JS string, and decoding each token's prefix
  // lands on or before its start
  for (const s of starts) assert.ok(s === 0 || !(text.charCodeAt(s) >= 0xDC00 && text.charCodeAt(s) <= 0xDFFF), `start ${s} inside a pair`);
  let prefix = "";
  for (let k = 0; k < ids.length; k++) {
    assert.ok(starts[k] <= prefix.length || k === 0, `token ${k}`);
    prefix = o200k.decode(ids.subarray(0, k + 1));
  }
  assert.equal(starts[0], 0);
  assert.deepEqual(Array.from(o200k.encodeWithOffsets("ab😀c").starts).slice(-1)[0] <= 4, true);
  assert.deepEqual(st.pretokenizeSpans("a😀 b"), [[0, 1], [1, 3], [3, 5]]);
});

test("a disallowed special token is a SupertokError naming it and its UTF-16 index", () => {
  const text = "😀 hi <|endoftext|>";
  assert.throws(() => o200k.encode(text), (e) => {
    assert.ok(e instanceof st.SupertokError && e instanceof Error);
    assert.equal(e.code, "ST_ERR_DISALLOWED_SPECIAL");
    assert.equal(e.status, 10);
    assert.equal(e.offset, 6);
    assert.equal(e.unit, "utf16");
    assert.equal(e.kind, "ST_KIND_DISALLOWED_SPECIAL");
    assert.equal(e.token, 199999);
    assert.equal(e.special, "<|endoftext|>");
    assert.equal(e.length, 13);
    assert.match(e.message, /disallowed special token "<\|endoftext\|>" at index 6/);
    return true;
  });
  for (const call of [() => o200k.count(text), () => o200k.encodeWithOffsets(text)]) assert.throws(call, { code: "ST_ERR_DISALLOWED_SPECIAL" });
  assert.deepEqual(Array.from(o200k.encode(text, { allowedSpecial: "all" })).at(-1), 199999);
  assert.deepEqual(Array.from(o200k.encode(text, { allowedSpecial: new Set(["<|endoftext|>"]) })).at(-1), 199999);
  assert.equal(o200k.encode(text, { disallowedSpecial: [] }).includes(199999), false);
  assert.deepEqual(o200k.encodeOrdinary(text), o200k.encode(text, { disallowedSpecial: [] }));
  // an id with two strings (o200k_harmony's 200018): the string found is named, from the report's
  // offset and length into the text
  const harmonyText = "é <|reserved_200018|> <|endofprompt|>";
  assert.throws(() => harmony.encode(harmonyText), { kind: "ST_KIND_DISALLOWED_SPECIAL", token: 200018,
    special: "<|reserved_200018|>", offset: 2 });
  assert.throws(() => harmony.encode(harmonyText, { allowedSpecial: ["<|reserved_200018|>"] }),
    { token: 200018, special: "<|endofprompt|>", offset: 22 });
  // a string that is no special token of the encoding, disallowed: found in the text (tiktoken)
  assert.throws(() => o200k.encode("x <|im_start|>", { disallowedSpecial: ["<|im_start|>"] }), { code: "ST_ERR_DISALLOWED_SPECIAL", offset: 2 });
  // the earliest of a special and an unknown string, the unknown one with no id; counted too
  const both = ["<|endoftext|>", "é z"];
  assert.throws(() => o200k.encode("aé z <|endoftext|>", { disallowedSpecial: both }),
    { kind: "ST_KIND_DISALLOWED_SPECIAL", token: null, special: "é z", offset: 1, length: 3 });
  assert.throws(() => o200k.count("a <|endoftext|> é z", { disallowedSpecial: both }),
    { token: 199999, special: "<|endoftext|>", offset: 2 });
  // allowed and disallowed by name: refused; an allowed string that is no special is ignored
  assert.throws(() => o200k.encode(text, { allowedSpecial: "all", disallowedSpecial: ["<|endoftext|>"] }), { token: 199999 });
  assert.deepEqual(o200k.encode(text, { allowedSpecial: ["<|nothing|>"], disallowedSpecial: [] }), o200k.encodeOrdinary(text));
  // an empty disallowed string is found at the start of any text (tiktoken's regex finds it there)
  assert.throws(() => o200k.encode("abc", { disallowedSpecial: [""] }), { offset: 0, length: 0, special: "" });
  assert.throws(() => o200k.encode("x", { allowedSpecial: "<|endoftext|>" }), TypeError);
});

test("core errors carry the status name, the core's message and the position", () => {
  assert.throws(() => o200k.decode([24912, 300000, 1]), (e) => e instanceof st.SupertokError
    && e.code === "ST_ERR_INVALID_TOKEN" && e.offset === 1 && e.unit === "index" && e.token === 300000
    && /ST_ERR_INVALID_TOKEN/.test(e.message));
  assert.throws(() => o200k.decode([-1]), (e) => e instanceof RangeError && e.index === 0);
  assert.throws(() => o200k.decode([1, 2 ** 32]), (e) => e instanceof RangeError && e.index === 1);
  assert.throws(() => o200k.decode([1.5]), RangeError);
  // strict decoding: the index of the id where malformed text starts (ids of single bytes)
  const byteId = (b) => [...Array(256).keys()].find((i) => {
    const t = o200k.decodeSingleTokenBytes(i);
    return t.length === 1 && t[0] === b;
  });
  const bytesIds = Array.from(Buffer.from([0x61, 0xE4, 0xB8, 0x61]), byteId);
  assert.equal(o200k.decode(bytesIds), "a\uFFFDa");
  assert.throws(() => o200k.decode(bytesIds, { errors: "strict" }), { code: "ST_ERR_INVALID_UTF8", offset: 1, unit: "index" });
  assert.throws(() => o200k.decode([1], { errors: "ignore" }), RangeError);
  // a malformed model: the line and the field
  const model = readFileSync(ROOT + "vectors/models/bytes_small.stmodel", "utf8").replace("merges 40\n97 98\n", "merges 40\n97 x\n");
  return st.loadModel(model).then(() => assert.fail("loaded"), (e) => {
    assert.equal(e.code, "ST_ERR_MALFORMED_MODEL");
    assert.equal(e.line, 9);
    assert.ok(e.detail.length > 0);
    assert.match(e.message, /line 9/);
  });
});

test("loading errors: unknown encodings, unsupported patterns, unknown scripts", async () => {
  await assert.rejects(st.getEncoding("o300k"), /Unknown encoding o300k/);
  await assert.rejects(st.loadEncoding({ ranks: "YQ== 0\n", patStr: "\\w+" }), { code: "ST_ERR_UNSUPPORTED_PATTERN" });
  await assert.rejects(st.loadEncoding({ ranks: "YQ== 0\nnot base64\n", patStr: JSON.parse(readFileSync(ROOT + "py/supertok/vocab/r50k_base.json", "utf8")).pat_str }),
    (e) => e.code === "ST_ERR_MALFORMED_MODEL" && e.line === 2);
  assert.throws(() => st.pretokenize("x", { pattern: "o300k" }), RangeError);
  assert.throws(() => st.pretokenize("x", { scriptAware: true, scripts: ["Han", "Klingon"] }), (e) => e.code === "ST_ERR_UNKNOWN_SCRIPT" && /Klingon/.test(e.message));
  assert.throws(() => st.pretokenize("x", { scripts: ["Han"] }), RangeError);
});

test("shipped and derived encodings, and a model's specials", async () => {
  assert.deepEqual(st.listEncodingNames(), ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]);
  const gpt2 = await st.getEncoding("gpt2");
  assert.equal(gpt2.nVocab, 50257);
  assert.equal(await st.getEncoding("o200k_base"), o200k, "loaded once");
  const edit = await st.getEncoding("p50k_edit");
  assert.deepEqual(Array.from(edit.encode("<|fim_prefix|>", { allowedSpecial: "all" })), [50281]);
  assert.equal(o200k.eotToken, 199999);
  assert.deepEqual(o200k.specialTokens, { "<|endoftext|>": 199999, "<|endofprompt|>": 200018 });
  assert.equal(ubeModel.alphabet, "ube");
  assert.equal(ubeModel.name, "ube_small");
  assert.ok(ubeModel.specialTokensSet.size === 2);
  assert.deepEqual(Array.from(o200k.decodeBytes(o200k.encode("héllo"))), Array.from(Buffer.from("héllo")));
  assert.deepEqual(o200k.encodeToArray("hello world"), [24912, 2375]);
  assert.match(st.version(), /^\d+\.\d+\.\d+$/);
  assert.deepEqual(["a", "中", "ж", " ", "😀"].map((c) => st.scriptOf(c.codePointAt(0))), ["Latin", "Han", "Cyrillic", "Common", "Common"]);
  assert.equal(st.scriptOf(0x110000), null);
  assert.match(st.unicodeVersion(), /^\d+\.\d+$/);
});

test("free() and Symbol.dispose release a handle; use after free is an error; free twice is harmless", async () => {
  const enc = await st.loadModel(readFileSync(ROOT + "vectors/models/bytes_small.stmodel"));
  const d = enc.incrementalDecoder();
  assert.equal(d.add(enc.encode("ab")), "ab");
  d[Symbol.dispose]();
  assert.equal(d.freed, true);
  assert.throws(() => d.add([1]), /used after free/);
  d.free();
  enc.encode("x", { allowedSpecial: "all" }); // a policy block owned by the encoding
  enc.free();
  assert.throws(() => enc.encode("x"), /used after free/);
  const e2 = await st.loadModel(new URL("vectors/models/bytes_small.stmodel", "file://" + ROOT)); // a URL
  const d2 = e2.incrementalDecoder();
  e2.free();
  assert.throws(() => d2.add([97]), /after its Encoding was freed/);
  d2.free();
  const ranks = new URL("py/supertok/vocab/r50k_base.tiktoken", "file://" + ROOT);
  const r50k = await st.loadEncoding({ name: "r50k", ranks, patStr: JSON.parse(readFileSync(ROOT + "py/supertok/vocab/r50k_base.json", "utf8")).pat_str });
  assert.deepEqual(r50k.encode("hello world"), (await st.getEncoding("r50k_base")).encode("hello world"));
  r50k.free();
  const u = new st.UbeStreamDecoder();
  assert.equal(u.add([0x61]), "a");
  u.free();
  assert.throws(() => u.flush(), /used after free/);
});

test("memory freed: loading and freeing models, making and freeing decoders does not grow memory", async () => {
  const bytes = readFileSync(ROOT + "vectors/models/super_ube_small.stmodel");
  const round = async () => {
    for (let k = 0; k < 50; k++) {
      const e = await st.loadModel(bytes);
      const d = e.incrementalDecoder();
      d.add(e.encode("中国人民 of the", { allowedSpecial: "all" }));
      d.free();
      e.free();
    }
  };
  await round();
  const before = st._memorySize();
  for (let r = 0; r < 4; r++) await round();
  assert.equal(st._memorySize(), before);
});

test("the FinalizationRegistry frees what the program forgot to free", async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  const bytes = readFileSync(ROOT + "vectors/models/bytes_small.stmodel");
  const settle = async () => { for (let k = 0; k < 5; k++) { gc(); await new Promise((r) => setTimeout(r, 10)); } };
  const round = async () => {
    for (let k = 0; k < 100; k++) {
      const e = await st.loadModel(bytes);
      e.incrementalDecoder().add([97]);
      new st.UbeStreamDecoder().add([97]);
    }
    await settle();
  };
  // what 100 of them take when kept alive: forgotten ones must not add up to that
  const start = st._memorySize();
  const kept = [];
  for (let k = 0; k < 100; k++) { const e = await st.loadModel(bytes); kept.push(e, e.incrementalDecoder(), new st.UbeStreamDecoder()); }
  const per100 = st._memorySize() - start;
  assert.ok(per100 > 1 << 20, `100 models take only ${per100} bytes: the test cannot tell`);
  for (const h of kept.reverse()) h.free();
  await round();
  const before = st._memorySize();
  for (let r = 0; r < 6; r++) await round();
  assert.ok(st._memorySize() - before < per100 / 4,
    `memory grew by ${st._memorySize() - before} bytes over 600 forgotten models (100 kept take ${per100}): they are not freed`);
});

test("views onto wasm memory are re-made after the memory grows", () => {
  const before = st._memorySize();
  const big = "x 中文 😀 ".repeat(400000); // ~5 MB of UTF-8
  const ids = o200k.encode(big);
  assert.ok(st._memorySize() > before, "the memory grew");
  assert.equal(o200k.decode(ids), big);
  assert.deepEqual(o200k.encode("hello world"), new Uint32Array([24912, 2375]));
  assert.equal(o200k.count(big), ids.length);
  const { starts } = o200k.encodeWithOffsets(big);
  assert.equal(starts.length, ids.length);
});

test("the incremental decoder: any split gives decode()'s text; after an error it is unchanged", () => {
  const text = "héllo 😀 中文 <|endoftext|> ok";
  const ids = Array.from(o200k.encode(text, { allowedSpecial: "all" }));
  for (let cut = 0; cut <= ids.length; cut++) {
    const d = o200k.incrementalDecoder();
    const got = d.add(ids.slice(0, cut)) + d.add(ids.slice(cut)) + d.flush();
    d.free();
    assert.equal(got, text);
  }
  const d = o200k.incrementalDecoder();
  assert.equal(d.add(ids.slice(0, 2)), o200k.decode(ids.slice(0, 2)).replace(/\uFFFD$/, ""));
  assert.throws(() => d.add([999999999]), { code: "ST_ERR_INVALID_TOKEN" });
  assert.equal(d.add(ids.slice(2)) + d.flush(), o200k.decode(ids).slice(o200k.decode(ids.slice(0, 2)).replace(/\uFFFD$/, "").length));
  d.free();
  // a UBE model decodes through the same calls
  const u = Array.from(ubeModel.encode("中文 abcd"));
  assert.equal(ubeModel.decode(u), "中文 abcd");
  assert.equal(new TextDecoder().decode(ubeModel.decodeBytes(u)), "中文 abcd");
});

test("encodingForModel maps model names as tiktoken 0.14 does", async () => {
  assert.equal(st.encodingNameForModel("gpt-4o"), "o200k_base");
  assert.equal(st.encodingNameForModel("gpt-4o-2024-08-06"), "o200k_base");
  assert.equal(st.encodingNameForModel("gpt-4-0613"), "cl100k_base");
  assert.equal(st.encodingNameForModel("text-davinci-003"), "p50k_base");
  assert.equal(st.encodingNameForModel("ft:gpt-3.5-turbo:org:x"), "cl100k_base");
  assert.throws(() => st.encodingNameForModel("no-such-model"), /Could not automatically map no-such-model/);
  assert.equal(await st.encodingForModel("gpt-4o"), o200k);
  assert.equal((await st.encodingForModel("gpt-oss-120b")).name, "o200k_harmony");
});
