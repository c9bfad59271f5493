// The tokenizers the benchmark races, each loaded the way a web page would load it for
// o200k_base: load() returns encode(text) -> ids (ordinary text: no special token recognised).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

export const TOOLS = {
  supertok: async () => {
    const st = await import("../supertok.mjs");
    const enc = await st.getEncoding("o200k_base"); // the compact image (compact/o200k_base.stvc)
    return (s) => enc.encodeOrdinary(s);
  },
  "gpt-tokenizer": async () => {
    const m = await import("gpt-tokenizer/encoding/o200k_base");
    return (s) => m.encode(s, { disallowedSpecial: new Set() });
  },
  "js-tiktoken": async () => {
    const { Tiktoken } = await import("js-tiktoken/lite");
    const ranks = (await import("js-tiktoken/ranks/o200k_base")).default;
    const enc = new Tiktoken(ranks);
    return (s) => enc.encode(s, [], []);
  },
  // tiktoken's "lite" build (one wasm module without vocabularies) with the o200k_base ranks from
  // its encoders/: the way its README loads it in a browser or an edge runtime
  "tiktoken (wasm)": async () => {
    const { Tiktoken } = await import("tiktoken/lite");
    const o = JSON.parse(readFileSync(require.resolve("tiktoken/encoders/o200k_base.json"), "utf8"));
    const enc = new Tiktoken(o.bpe_ranks, o.special_tokens, o.pat_str);
    return (s) => enc.encode_ordinary(s);
  },
  "ai-tokenizer": async () => {
    const Tokenizer = (await import("ai-tokenizer")).default;
    const o200k = await import("ai-tokenizer/encoding/o200k_base");
    const tok = new Tokenizer(o200k);
    return (s) => tok.encode(s, [], []);
  },
};

/** The pathological inputs of bench/encode.py (pathological_text), the same kinds; the random
 * ones from a seeded generator of our own (not Python's: the texts differ, their kind does not). */
export const PATHOLOGICAL = ["one_letter", "random_lower", "spaces_then_x", "newlines", "random_cjk", "digits", "punctuation"];

export function pathological(kind, nbytes) {
  let x = 1234;
  const rnd = (n) => { x = (Math.imul(x, 1103515245) + 12345) >>> 0; return (x >>> 8) % n; };
  const pick = (alphabet, n) => { let s = ""; for (let i = 0; i < n; i++) s += alphabet[rnd(alphabet.length)]; return s; };
  switch (kind) {
    case "one_letter": return "a".repeat(nbytes);
    case "random_lower": return pick("abcdefghijklmnopqrstuvwxyz", nbytes);
    case "spaces_then_x": return " ".repeat(nbytes - 1) + "x";
    case "newlines": return "\n".repeat(nbytes);
    case "random_cjk": { let s = ""; for (let i = 0; i < nbytes / 3; i++) s += String.fromCharCode(0x4E00 + rnd(0x9FFF - 0x4E00)); return s; }
    case "digits": return pick("0123456789", nbytes);
    case "punctuation": return "!".repeat(nbytes);
    default: throw new RangeError(kind);
  }
}
