// A model whose special shares a token's id (what hf training writes when a special's text is
// already a token, docs/formats/model-format.md, Specials): the JavaScript module reads the specials from
// the core, so the shared id is one id here too.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as st from "../supertok.mjs";

const model = (specials) => new TextEncoder().encode(
  "supertok-model 1\nname shared\nkind rules\nalphabet bytes\npattern o200k\nscript-aware no\n"
  + `merges 1\n97 98\nspecials ${specials.length}\n${specials.map((l) => l + "\n").join("")}end\n`);

test("a special sharing a token's id: one id, encodes and decodes", async () => {
  const enc = await st.loadModel(model(["97 a", "256 ab", "257 <|x|>"]));
  assert.equal(enc.nVocab, 258);
  assert.deepEqual(enc.specialTokens, { a: 97, ab: 256, "<|x|>": 257 });
  const ids = Array.from(enc.encode("ab a<|x|>", { allowedSpecial: "all" }));
  assert.deepEqual(ids, [256, 32, 97, 257]);
  assert.equal(enc.decode(ids), "ab a<|x|>");
  assert.deepEqual(Array.from(enc.encodeOrdinary("ab a")), [256, 32, 97]);
});

test("a special with a token's id and other bytes is refused", async () => {
  await assert.rejects(st.loadModel(model(["97 b"])), /id 97 is an ordinary token's, and the text is not its bytes/);
});
