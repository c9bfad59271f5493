// Compiled by types.test.mjs with tsc --strict: uses every part of supertok.d.ts as a program would
// (imported without the extension, so tsc reads supertok.d.ts, as package.json's "types" gives it).
import { getEncoding, loadEncoding, loadModel, createWorker, pretokenize, SupertokError, Encoding, ubeEncodeSymbols, UbeStreamDecoder, encodingForModel } from "../supertok";
import { train, type TrainOptions, type TrainProgress } from "../supertok";
async function main(): Promise<void> {
  const enc: Encoding = await getEncoding("o200k_base");
  const image: Uint8Array = enc.saveCompact();
  const fromImage: Encoding = await loadEncoding({ compact: image.buffer as ArrayBuffer, specialTokens: { "<|endoftext|>": 199999 }, patStr: "x" });
  const fromRanks: Encoding = await getEncoding("cl100k_base", { format: "tiktoken", vocab: new URL("https://example.com/v/") });
  void fromImage; void fromRanks;
  const ids: Uint32Array = enc.encode("hi", { allowedSpecial: "all", disallowedSpecial: new Set(["x"]) });
  const n: number = enc.count("hi");
  const { ids: i2, starts } = enc.encodeWithOffsets("hi");
  const s: string = enc.decode(ids, { errors: "strict" });
  const b: Uint8Array = enc.decodeBytes([1, 2]);
  const d = enc.incrementalDecoder();
  const t: string = d.add(5) + d.add([1, 2]) + d.flush();
  d[Symbol.dispose]();
  enc.free();
  const m = await loadModel(new Uint8Array(3));
  const w = await createWorker();
  const i3: Uint32Array = await w.encode("o200k_base", "x");
  w.terminate();
  const p: string[] = pretokenize("x", { pattern: "o200k", scriptAware: true, scripts: ["Han"] });
  const u: Uint16Array = ubeEncodeSymbols("x");
  const ud = new UbeStreamDecoder({ errors: "replace" });
  try { enc.encode("x"); } catch (e) { if (e instanceof SupertokError) { const c: string = e.code; const o: number | null = e.offset; } }
  const e4 = await encodingForModel("gpt-4o");
  void [n, i2, starts, s, b, t, m, i3, p, u, ud, e4];
}
void main;

// training: train() and its options, progress records and the model file
async function trainUsage(): Promise<void> {
  const seen: string[] = [];
  const trained: Encoding = await train(["the cat sat", new Uint8Array([0x61, 0x62])], {
    vocabSize: 300, algorithm: "superbpe", supermerges: 10, ngramSplit: true, minFrequency: 0n,
    specialTokens: ["<|endoftext|>"], onProgress: (r: TrainProgress) => { seen.push(r.phase); },
  });
  const model: Uint8Array | null = trained.modelBytes();
  const options: TrainOptions = { vocabSize: 1000, mode: "hf", alphabet: "bytes" };
  (await train((function* () { yield "text"; })(), options)).free();
  if (model) await loadModel(model);
}
void trainUsage;
