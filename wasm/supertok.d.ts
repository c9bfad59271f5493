// TypeScript declarations of supertok.mjs. test/api.test.mjs checks that every export of the
// module and every public method of its classes is declared here, and that every core function
// the module calls is in core_c/wasm_exports.txt and declared in core_c/include/supertok.h.

/** "all", or the special tokens (their texts) an option names. */
export type SpecialSet = "all" | Iterable<string>;

export interface EncodeOptions {
  /** Special tokens recognised in the text (default: none). */
  allowedSpecial?: SpecialSet;
  /** Special tokens whose presence is an error (default "all": every one not allowed). */
  disallowedSpecial?: SpecialSet;
}

export interface DecodeOptions {
  /** "replace" (default): malformed text becomes U+FFFD; "strict": a SupertokError. */
  errors?: "replace" | "strict";
}

export interface PretokenizeOptions {
  /** "o200k" (default), "cl100k", "gpt2" (= "r50k", "p50k"), "superbpe" (SuperBPE's Stage 2),
   * "llama3", "qwen2" (= "qwen3"), "deepseek_v3" (those models' pre-tokenizers, as HuggingFace
   * tokenizers splits with them), or an encoding name. */
  pattern?: string;
  /** Split into single-script chunks first. */
  scriptAware?: boolean;
  /** With scriptAware: the scripts split one letter per piece (default DEFAULT_SCRIPTS). */
  scripts?: string | Iterable<string> | null;
}

/** A failure the C core reported (its st_error). */
export declare class SupertokError extends Error {
  /** The status's name in supertok.h, e.g. "ST_ERR_INVALID_UTF8". */
  code: string;
  /** The status number (pinned). */
  status: number;
  /** What was wrong beyond the status: the st_error_kind's name in supertok.h, e.g.
   * "ST_KIND_DISALLOWED_SPECIAL" or "ST_KIND_ID_REPEATED"; "ST_KIND_NONE" when the status says it. */
  kind: string;
  /** Where it went wrong, in `unit`; null when no position applies. */
  offset: number | null;
  /** The length, in `unit`, of what starts at `offset` (a disallowed special's); 0 if not known. */
  length: number;
  unit: "none" | "byte" | "codepoint" | "utf16" | "index" | string;
  /** 1-based line in a text input (model file, rank file), or null. */
  line: number | null;
  /** The token id concerned, or null. */
  token: number | null;
  /** Which input of the call: 0 the main one, 1 the special tokens, ... */
  input: number;
  /** The core's message, for people (code reads the fields above). */
  detail: string;
  /** ST_KIND_DISALLOWED_SPECIAL: the special token's text found at `offset`. */
  special?: string;
}

/** A core object owned by a JS object: free() now, or let the garbage collector do it. */
declare class Handle {
  /** True once free() ran. */
  readonly freed: boolean;
  /** Free the core object now (idempotent); the object must not be used after. */
  free(): void;
  [Symbol.dispose](): void;
}

export declare class Encoding extends Handle {
  readonly name: string;
  /** "bytes" (tiktoken vocabularies, byte-level models) or "ube" (UBE models). */
  readonly alphabet: "bytes" | "ube";
  /** The core's st_pattern of the pre-tokenizer (1 gpt2, 2 cl100k, 3 o200k, 4 superbpe, 5 llama3, 6 qwen2,
   * 7 deepseek_v3). */
  readonly patternId: number;
  /** Max id + 1. */
  readonly nVocab: number;
  readonly maxTokenValue: number;
  /** {text: id} of the special tokens. */
  readonly specialTokens: Record<string, number>;
  readonly specialTokensSet: Set<string>;
  readonly eotToken: number | undefined;
  isSpecialToken(id: number): boolean;
  /** The model file this encoding was made from (loadModel, train): a copy of its bytes, which
   * loadModel loads again (in Node, write it to a .stmodel file); null for tiktoken vocabularies. */
  modelBytes(): Uint8Array | null;
  toString(): string;
  /** The ids of text. Lone surrogates encode as U+FFFD (tiktoken's repair). A disallowed special
   * token in the text: SupertokError ST_ERR_DISALLOWED_SPECIAL (offset: its UTF-16 index). */
  encode(text: string, options?: EncodeOptions): Uint32Array;
  /** encode() as a plain array. */
  encodeToArray(text: string, options?: EncodeOptions): number[];
  /** The ids of text with no special token recognised or refused. */
  encodeOrdinary(text: string): Uint32Array;
  /** tiktoken's encode_with_unstable: the ids of a prefix of text more text cannot change, and the
   * ways text's last (unstable) bytes could be tokenized once more text follows, each once, sorted
   * (computed by the core). Byte-level encodings without supermerges only. */
  encodeWithUnstable(text: string, options?: EncodeOptions): { stable: number[]; completions: number[][] };
  /** ids and, for each, the UTF-16 index in text where its token starts. */
  encodeWithOffsets(text: string, options?: EncodeOptions): { ids: Uint32Array; starts: Uint32Array };
  /** The number of tokens encode() would give. */
  count(text: string, options?: EncodeOptions): number;
  /** The text of ids (SupertokError ST_ERR_INVALID_TOKEN for an id that is no token; with
   * errors "strict", ST_ERR_INVALID_UTF8 at the index of the id where malformed text starts). */
  decode(ids: ArrayLike<number>, options?: DecodeOptions): string;
  /** The bytes of ids (a UBE model: the UTF-8 of decode(ids)). */
  decodeBytes(ids: ArrayLike<number>): Uint8Array;
  /** The bytes of one token (a UBE model's ordinary token: its symbols, 2 bytes each). */
  decodeSingleTokenBytes(id: number): Uint8Array;
  incrementalDecoder(options?: DecodeOptions): IncrementalDecoder;
  /** The compact image of the ordinary tokens (st_encoding_save_compact), for
   * loadEncoding({compact}); rank vocabularies only. */
  saveCompact(): Uint8Array;
}

/** Streaming decoding of ids: each add() returns the characters completed so far. */
export declare class IncrementalDecoder extends Handle {
  constructor(encoding: Encoding, options?: DecodeOptions);
  readonly encoding: Encoding;
  add(ids: number | ArrayLike<number>): string;
  /** The end of the stream: what is pending decodes as U+FFFD (or raises under "strict"). */
  flush(): string;
  /** Back to a fresh stream. */
  reset(): void;
}

/** Streaming decoding of UBE base symbols (0-511). */
export declare class UbeStreamDecoder extends Handle {
  constructor(options?: DecodeOptions);
  add(symbols: number | ArrayLike<number>): string;
  /** A special token in a token stream: flushes what is pending. */
  special(): string;
  flush(): string;
}

export declare const DEFAULT_SCRIPTS: readonly string[];
/** The header constants the module uses (internal; checked against supertok.h by the tests). */
export declare const _C: Readonly<Record<string, number>>;

/** Load the wasm module (once). source: its bytes, a compiled module or a URL; default: the
 * packaged supertok.wasm. The other loaders call it. */
export declare function init(source?: BufferSource | WebAssembly.Module | URL | string): Promise<unknown>;
/** Where getEncoding reads a shipped encoding from. format "compact" (default): the compact
 * image <name>.stvc and manifest.json (the package's compact/); "tiktoken": <name>.tiktoken and
 * <name>.json (the package's vocab/). vocab: a directory URL holding them instead. */
export interface GetEncodingOptions {
  vocab?: string | URL;
  format?: "compact" | "tiktoken";
}
/** A shipped encoding, loaded once, when first asked for: "o200k_base", "cl100k_base",
 * "p50k_base", "r50k_base", "gpt2", "p50k_edit", "o200k_harmony". */
export declare function getEncoding(name: string, options?: GetEncodingOptions): Promise<Encoding>;
/** An encoding from a tiktoken rank file's bytes or a compact image's (give one of ranks and
 * compact); a URL is fetched (file: URLs read in Node). */
export declare function loadEncoding(spec: {
  name?: string;
  ranks?: BufferSource | string | URL;
  compact?: BufferSource | URL;
  specialTokens?: Record<string, number>;
  patStr: string;
}): Promise<Encoding>;
/** An encoding from a supertok model file (.stmodel) or a HuggingFace tokenizer.json (its bytes,
 * text or parsed object: a text starting with "{" is read as a tokenizer.json). */
export declare function loadModel(data: Uint8Array | BufferSource | string | URL | object): Promise<Encoding>;
/** An encoding from a HuggingFace tokenizer.json (byte-level BPE: Llama 3, Qwen 2/3, DeepSeek V3,
 * GPT-2): its bytes, text, parsed object or a URL. Its special added tokens are the encoding's
 * special tokens; encode(text, { allowedSpecial: "all" }) gives tokenizers' ids. */
export declare function fromTokenizerJson(data: Uint8Array | BufferSource | string | URL | object,
  options?: { name?: string }): Promise<Encoding>;

/** What train() has done so far, given to onProgress (Python's TrainProgress without elapsed). */
export interface TrainProgress {
  /** In order: "count" (the texts), "merge" (phase 1), and for superwords "candidates" (the texts
   * again), "split" (with ngramSplit) and "supermerge" (phase 2). */
  phase: "count" | "merge" | "candidates" | "split" | "supermerge";
  /** Documents and bytes counted so far in this pass (the first pass's totals later). */
  documents: number;
  bytes: number;
  /** Merges made (phase 2: steps made) and the number wanted (null while counting). */
  merges: number;
  target: number | null;
  /** Supermerges made so far. */
  supermerges: number;
  /** Distinct supermerge candidates once counted (after the split in "split"'s last record). */
  candidates: number | null;
  /** True on the phase's last record. */
  done: boolean;
}

/** The options of train(): Python's supertok.train options in camelCase (docs/training.md). */
export interface TrainOptions {
  /** Every id that can occur: the alphabet, the merges (and supermerges) and the special tokens. */
  vocabSize: number | bigint;
  /** "paper" (default: the Faster Superword paper's reference) or "hf" (HuggingFace's BpeTrainer). */
  mode?: "paper" | "hf";
  /** "bytes" (default) or "ube". */
  alphabet?: "bytes" | "ube";
  /** The pre-tokenizer, as pretokenize takes it (default "o200k"). */
  pattern?: string;
  scriptAware?: boolean;
  scripts?: string | Iterable<string> | null;
  /** Texts that take the ids after the merges. */
  specialTokens?: Iterable<string>;
  /** Stop when the best pair occurs fewer times (default 0). */
  minFrequency?: number | bigint;
  /** "bpe" (default), "boundless" (BoundlessBPE) or "superbpe" (SuperBPE; needs supermerges). */
  algorithm?: "bpe" | "boundless" | "superbpe";
  /** SuperBPE: the supermerges to learn after the first vocabSize - supermerges regular merges. */
  supermerges?: number | bigint | null;
  /** Split the supermerge candidates by Appendix B's Apriori n-grams before phase 2. */
  ngramSplit?: boolean;
  /** The model's name (default "supertok-<mode, or the algorithm>-<alphabet>-<vocabSize>", as Python's). */
  name?: string | null;
  onProgress?: ((record: TrainProgress) => void) | null;
}

/** Train a tokenizer on texts (documents: strings or UTF-8 bytes; read twice for superwords, a
 * one-shot iterator kept in memory for that) and return it as an Encoding; the model file is the
 * one Python's supertok.train writes for the same documents and options, byte for byte
 * (modelBytes()). The core's refusals are SupertokErrors; a document that is not UTF-8 names its
 * index in `document`. */
export declare function train(texts: Iterable<string | Uint8Array>, options: TrainOptions): Promise<Encoding>;
export declare function listEncodingNames(): string[];
/** The encoding name tiktoken 0.14 maps a model name to (RangeError if none). */
export declare function encodingNameForModel(modelName: string): string;
/** getEncoding(encodingNameForModel(modelName)). */
export declare function encodingForModel(modelName: string, options?: GetEncodingOptions): Promise<Encoding>;
/** Pieces of text (a lone surrogate: RangeError). */
export declare function pretokenize(text: string, options?: PretokenizeOptions): string[];
/** [start, end) UTF-16 offsets of the pieces of text. */
export declare function pretokenizeSpans(text: string, options?: PretokenizeOptions): Array<[number, number]>;
/** The UBE base symbols of text (a lone surrogate: RangeError). */
export declare function ubeEncodeSymbols(text: string): Uint16Array;
/** The text of UBE base symbols. */
export declare function ubeDecodeSymbols(symbols: ArrayLike<number>, options?: DecodeOptions): string;
/** A tokenizer running in a worker (Web Worker / worker_threads): each call returns a Promise. */
export interface TokenizerWorker {
  encode(encoding: string, text: string, options?: EncodeOptions): Promise<Uint32Array>;
  encodeOrdinary(encoding: string, text: string): Promise<Uint32Array>;
  encodeWithOffsets(encoding: string, text: string, options?: EncodeOptions): Promise<{ ids: Uint32Array; starts: Uint32Array }>;
  count(encoding: string, text: string, options?: EncodeOptions): Promise<number>;
  decode(encoding: string, ids: ArrayLike<number>, options?: DecodeOptions): Promise<string>;
  terminate(): void;
}
/** Start a worker running the module (worker.mjs beside this module by default). */
export declare function createWorker(workerUrl?: string | URL): Promise<TokenizerWorker>;
/** The Unicode Script of a code point as the core names it ("Latin", "Han", ...), null above U+10FFFF. */
export declare function scriptOf(codePoint: number): string | null;
export declare function version(): string;
export declare function unicodeVersion(): string;
/** Bytes of the module's linear memory (diagnostics). */
export declare function _memorySize(): number;
