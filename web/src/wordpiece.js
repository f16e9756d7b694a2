/**
 * A dependency-free BERT WordPiece tokenizer that reproduces, id for id, what the Rust
 * `tokenizers` library (Python `tokenizers.Tokenizer.from_file`) produces for a BERT-style
 * tokenizer.json (all-MiniLM-L6-v2): added-token split -> BertNormalizer -> BertPreTokenizer
 * -> WordPiece -> TemplateProcessing `[CLS] $A [SEP]`, truncated like `enable_truncation`.
 *
 * Plain ES module with no imports: runs in a browser Web Worker and in Node >= 20.
 * Everything works on Unicode scalar values (code points), never on UTF-16 units, because
 * Rust counts and slices `char`s.
 */

/** Builds a regex character class body from "hex hex-hex ..." code point ranges. */
const charClass = (spec) =>
  spec.trim().split(/\s+/).map((r) => r.split("-").map((h) => `\\u{${h}}`).join("-")).join("");

// Rust's categories come from the `unicode_categories` crate, whose tables are old (about
// Unicode 8) and hold no unassigned (Cn) code points. These code points are ordinary word
// characters there (not Cf, Mn or P) although newer Unicode (the JS engine's) says otherwise.
// Measured against tokenizers 0.23 over every code point; engines with an older Unicode
// agree too (to them most of these are unassigned, which is what Rust sees).
const RUST_PLAIN = new RegExp(`[${charClass(`
  61d 7fd 890-891 897-89f 8ca-8e2 9fd-9fe a76 afa-aff b55 c04 c3c c77 c84 d00 d3b-d3c d81 eba ece
  180f 1885-1886 1abf-1add 1ae0-1aeb 1b4e-1b4f 1b7d-1b7f 1df6-1dfb 2e43-2e4f 2e52-2e5d a82c a8c5
  a8ff a9bd 10d24-10d27 10d69-10d6e 10eab-10ead 10ed0 10efa-10eff 10f46-10f50 10f55-10f59
  10f82-10f89 11070 11073-11074 110c2 110cd 111c9 111cf 1123e 11241 1133b 113bb-113c0 113ce 113d0
  113d2 113d4-113d5 113d7-113d8 113e1-113e2 11438-1143f 11442-11444 11446 1144b-1144f 1145a-1145b
  1145d-1145e 11660-1166c 116b9 1182f-11837 11839-1183b 1193b-1193c 1193e 11943-11946 119d4-119d7
  119da-119db 119e0 119e2 11a01-11a0a 11a33-11a38 11a3b-11a47 11a51-11a56 11a59-11a5b 11a8a-11a96
  11a98-11a9c 11a9e-11aa2 11b00-11b09 11b60 11b62-11b64 11b66 11be1 11c30-11c36 11c38-11c3d 11c3f
  11c41-11c45 11c70-11c71 11c92-11ca7 11caa-11cb0 11cb2-11cb3 11cb5-11cb6 11d31-11d36 11d3a
  11d3c-11d3d 11d3f-11d45 11d47 11d90-11d91 11d95 11d97 11ef3-11ef4 11ef7-11ef8 11f00-11f01
  11f36-11f3a 11f40 11f42-11f4f 11f5a 11fff 12ff1-12ff2 13430-13440 13447-13455 1611e-16129
  1612d-1612f 16d6d-16d6f 16e97-16e9a 16f4f 16fe2 16fe4 1cf00-1cf2d 1cf30-1cf46 1e000-1e006
  1e008-1e018 1e01b-1e021 1e023-1e024 1e026-1e02a 1e08f 1e130-1e136 1e2ae 1e2ec-1e2ef 1e4ec-1e4ef
  1e5ee-1e5ef 1e5ff 1e6e3 1e6e6 1e6ee-1e6ef 1e6f5 1e944-1e94a 1e95e-1e95f
`)}]`, "u");
// ...and the other way round: old categories that newer Unicode changed.
const RUST_MN = /[\u{1734}\u{1171e}]/u; // Mn in Rust's tables, Mc now
const RUST_PUNCT = /[\u{166d}\u{111c9}]/u; // Po in Rust's tables, So / Mn now

// Rust `is_control` = `is_other()`: Cc, Cf, Co; tab, LF, CR count as whitespace. (Lone
// surrogates, Cs, cannot reach Rust at all; here they are dropped like controls.)
const CONTROL = /[\p{Cc}\p{Cf}\p{Co}\p{Cs}]/u;
// Rust `char::is_whitespace()` is the Unicode White_Space property.
const WHITESPACE = /\p{White_Space}/u;
const NONSPACING_MARK = /\p{Mn}/u;
// `is_bert_punc`: `char::is_ascii_punctuation() || is_punctuation()` (Unicode P*).
// ASCII punctuation is 33-47, 58-64, 91-96, 123-126 (so $ + < = > ^ ` | ~ split too).
const PUNCT = /[\p{P}!-\/:-@\[-`{-~]/u;

/** BERT's "Chinese character" ranges, exactly as in tokenizers' normalizers/bert.rs. */
const CJK_RANGES = [
  [0x4e00, 0x9fff], [0x3400, 0x4dbf], [0x20000, 0x2a6df], [0x2a700, 0x2b73f],
  [0x2b740, 0x2b81f], [0x2b920, 0x2ceaf], [0xf900, 0xfaff], [0x2f800, 0x2fa1f],
];
const isChinese = (cp) => CJK_RANGES.some(([lo, hi]) => cp >= lo && cp <= hi);

const isControl = (c) =>
  c !== "\t" && c !== "\n" && c !== "\r" && CONTROL.test(c) && !RUST_PLAIN.test(c);
const isMark = (c) => !RUST_PLAIN.test(c) && (NONSPACING_MARK.test(c) || RUST_MN.test(c));
const isPunct = (c) => RUST_PUNCT.test(c) || (PUNCT.test(c) && !RUST_PLAIN.test(c));
const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export class WordPiece {
  /**
   * @param {object} tokenizerJson the parsed tokenizer.json. Only the configuration this
   *   class implements is accepted; anything else throws rather than silently diverging.
   */
  constructor(tokenizerJson) {
    const expected = { normalizer: "BertNormalizer", pre_tokenizer: "BertPreTokenizer",
      model: "WordPiece", post_processor: "TemplateProcessing" };
    for (const [key, type] of Object.entries(expected)) {
      if (tokenizerJson[key]?.type !== type) throw new Error(`unsupported ${key}: need ${type}`);
    }
    const { normalizer: norm, model, post_processor: post } = tokenizerJson;

    this.cleanText = !!norm.clean_text;
    this.handleChinese = !!norm.handle_chinese_chars;
    this.lowercase = !!norm.lowercase;
    this.stripAccents = norm.strip_accents ?? this.lowercase; // null means "follow lowercase"

    this.vocab = new Map(Object.entries(model.vocab));
    this.prefix = model.continuing_subword_prefix ?? "##";
    this.maxChars = model.max_input_chars_per_word ?? 100;
    this.unkId = this.vocab.get(model.unk_token);
    if (this.unkId === undefined) throw new Error(`unk token ${model.unk_token} not in vocab`);

    // Single-sequence template: special tokens before and after $A (e.g. [CLS] $A [SEP]).
    const idsOf = (item) => post.special_tokens[item.SpecialToken.id].ids;
    const at = post.single.findIndex((item) => item.Sequence);
    this.before = post.single.slice(0, at).flatMap(idsOf);
    this.after = post.single.slice(at + 1).flatMap(idsOf);

    // Added tokens ("[MASK]", "[SEP]", ...) typed in the raw text are matched before
    // normalization (they are `normalized: false`), leftmost-longest, straight to their ids.
    const added = tokenizerJson.added_tokens ?? [];
    for (const t of added) {
      if (t.normalized || t.lstrip || t.rstrip || t.single_word) {
        throw new Error(`unsupported added token options for ${t.content}`);
      }
    }
    this.addedIds = new Map(added.map((t) => [t.content, t.id]));
    const longestFirst = added.map((t) => t.content).sort((a, b) => b.length - a.length);
    this.addedRe = added.length
      ? new RegExp(`(${longestFirst.map(escapeRegExp).join("|")})`, "u") : null;
  }

  /** BertNormalizer: clean text, space out CJK, NFD + drop Mn, per-char lowercase. */
  normalize(text) {
    let chars = [...text];
    if (this.cleanText) {
      chars = chars
        .filter((c) => c !== "\u0000" && c !== "\ufffd" && !isControl(c))
        .map((c) => (WHITESPACE.test(c) ? " " : c));
    }
    if (this.handleChinese) chars = chars.map((c) => (isChinese(c.codePointAt(0)) ? ` ${c} ` : c));
    let s = chars.join("");
    if (this.stripAccents) {
      // (Canonical decompositions newer than Rust's only split characters that are not in the
      // vocab, so their word is [UNK] either way.)
      s = [...s.normalize("NFD")].filter((c) => !isMark(c)).join("");
    }
    // Rust lowercases char by char (`char::to_lowercase`): no context-dependent final sigma,
    // which `String.prototype.toLowerCase` on the whole string would apply.
    if (this.lowercase) s = [...s].map((c) => c.toLowerCase()).join("");
    return s;
  }

  /** BertPreTokenizer: split on whitespace (removed), then isolate each punctuation char. */
  preTokenize(s) {
    const words = [];
    let cur = "";
    for (const c of s) {
      const space = WHITESPACE.test(c);
      if (space || isPunct(c)) {
        if (cur) words.push(cur);
        if (!space) words.push(c);
        cur = "";
      } else {
        cur += c;
      }
    }
    if (cur) words.push(cur);
    return words;
  }

  /** WordPiece: greedy longest-match-first; a word with any unmatchable piece is [UNK]. */
  wordIds(word) {
    const chars = [...word];
    if (chars.length > this.maxChars) return [this.unkId];
    const ids = [];
    for (let start = 0; start < chars.length; ) {
      let end = chars.length;
      let id;
      for (; end > start; end--) {
        id = this.vocab.get((start > 0 ? this.prefix : "") + chars.slice(start, end).join(""));
        if (id !== undefined) break;
      }
      if (id === undefined) return [this.unkId];
      ids.push(id);
      start = end;
    }
    return ids;
  }

  /**
   * Encode one text as model input ids, special tokens included, total length <= maxLength
   * (content tokens are dropped from the end, then the template tokens are added).
   * The attention mask is implicitly all ones (no padding).
   * @returns {{ids: Int32Array}}
   */
  encode(text, maxLength = 256) {
    const content = [];
    const parts = this.addedRe ? text.split(this.addedRe) : [text];
    parts.forEach((part, i) => {
      // A capturing split puts the matched added tokens at the odd indices.
      if (i % 2 === 1) content.push(this.addedIds.get(part));
      else for (const w of this.preTokenize(this.normalize(part))) content.push(...this.wordIds(w));
    });
    const room = Math.max(0, maxLength - this.before.length - this.after.length);
    return { ids: Int32Array.from([...this.before, ...content.slice(0, room), ...this.after]) };
  }
}
