// createWorker: the module in a worker_threads Worker gives the main thread's results, and its
// errors come back with their fields.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as st from "../supertok.mjs";

test("a worker encodes, counts and decodes as the main thread does; errors keep their fields", async () => {
  const w = await st.createWorker();
  try {
    const enc = await st.getEncoding("o200k_base");
    const text = "héllo 😀 中文 <|endoftext|> ".repeat(20000);
    const ids = await w.encode("o200k_base", text, { allowedSpecial: "all" });
    assert.ok(ids instanceof Uint32Array);
    assert.deepEqual(ids, enc.encode(text, { allowedSpecial: "all" }));
    assert.equal(await w.count("o200k_base", text, { disallowedSpecial: [] }), enc.count(text, { disallowedSpecial: [] }));
    const { starts } = await w.encodeWithOffsets("o200k_base", "a😀b");
    assert.deepEqual(starts, enc.encodeWithOffsets("a😀b").starts);
    assert.equal(await w.decode("o200k_base", ids), text);
    await assert.rejects(w.encode("o200k_base", "x <|endoftext|>"), (e) => e instanceof st.SupertokError
      && e.code === "ST_ERR_DISALLOWED_SPECIAL" && e.offset === 2);
    await assert.rejects(w.decode("o200k_base", [-1]), (e) => e instanceof RangeError && e.index === 0);
    await assert.rejects(w.encode("o300k", "x"), /Unknown encoding/);
  } finally {
    w.terminate();
  }
});
