// The page's search core: the same scores as sidelight's Python methods, from the exported arrays.
//
// BM25 weights are computed here with Python's float operations, in Python's order, from raw term
// counts, document lengths, avgdl and idf exported as float64, so they are bit-identical; a query
// adds its terms' weights in query order as Python's `_accumulate` does. TF-IDF, RRF and Carrier's
// PPR boost follow `structures.lexical`, `structures.fusion` and `graph.ppr` line by line.

import { pairwiseSum, topK } from "./numeric.js";
import { Relation, nameTokens } from "./relation.js";

/** Typed-array views of the packed index buffer (`manifest.arrays`: name -> dtype, offset, length). */
export function unpack(buffer, layout) {
  const kinds = { uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, int32: Int32Array,
                  float16: Uint16Array, float32: Float32Array, float64: Float64Array };
  const out = {};
  for (const [name, a] of Object.entries(layout)) out[name] = new kinds[a.dtype](buffer, a.offset, a.length);
  return out;
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) return f ? NaN : s * Infinity;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

export class Engine {
  constructor(manifest, buffer, tables) {
    this.m = manifest;
    this.a = unpack(buffer, manifest.arrays);
    this.t = tables;
    this.n = tables.ids.length;
    this.termId = new Map(tables.vocab.map((t, i) => [t, i]));
    this.stop = new Set(manifest.tokenizer.stopwords);
    this.idRank = this.a.id_rank;
    this._weights();
    if (manifest.dense) {
      const v = this.a.vectors;
      this.dim = manifest.dense.dim;
      this.vectors = manifest.dense.vectors === "float16" ? Float32Array.from(v, halfToFloat) : v;
    }
    this.relation = new Relation(this);
  }

  /** Every posting's BM25 and TF-IDF weight, as `LexicalIndex` derives them. */
  _weights() {
    const { post_ptr: ptr, post_doc: doc, post_tf: tf, doc_len: len, bm25_idf: idf, tfidf_idf: tidf,
            tfidf_norm: tnorm, log_tf: logTf } = this.a;
    const { k1, b, variant, avgdl } = this.m.bm25;
    const norm = new Float64Array(this.n);
    for (let d = 0; d < this.n; d++) norm[d] = avgdl > 0 ? k1 * ((1.0 - b) + (b * len[d]) / avgdl) : k1;
    this.bm25w = new Float64Array(doc.length);
    this.tfidfw = new Float64Array(doc.length);
    for (let t = 0; t + 1 < ptr.length; t++) {
      for (let j = ptr[t]; j < ptr[t + 1]; j++) {
        const d = doc[j], c = tf[j];
        let w = c / (norm[d] + c);
        if (variant !== "lucene") w *= k1 + 1.0;
        this.bm25w[j] = w * idf[t];
        this.tfidfw[j] = ((1.0 + logTf[c - 1]) * tidf[t]) / (tnorm[d] > 0 ? tnorm[d] : 1.0);
      }
    }
  }

  /** Terms of a text as the index's tokenizer yields them (lowercase ASCII alphanumeric runs). */
  tokens(text) {
    const min = this.m.tokenizer.min_length;
    return nameTokens(text).filter((t) => t.length >= min && !this.stop.has(t));
  }

  /** Distinct known term ids of a query, in order of first appearance. */
  queryTerms(query) {
    if (!query || !query.trim()) throw new Error("empty query");
    const out = [];
    for (const t of new Set(this.tokens(query))) {
      const id = this.termId.get(t);
      if (id !== undefined) out.push(id);
    }
    return out;
  }

  _accumulate(weights, terms, factors = null) {
    const { post_ptr: ptr, post_doc: doc } = this.a;
    const s = new Float64Array(this.n);
    terms.forEach((t, i) => {
      for (let j = ptr[t]; j < ptr[t + 1]; j++) s[doc[j]] += factors ? weights[j] * factors[i] : weights[j];
    });
    return s;
  }

  bm25Scores(query) { return this._accumulate(this.bm25w, this.queryTerms(query)); }

  tfidfScores(query) {
    const terms = this.queryTerms(query);
    const q = terms.map((t) => this.a.tfidf_idf[t]);
    const qnorm = Math.sqrt(pairwiseSum((i) => q[i] * q[i], 0, q.length));
    return this._accumulate(this.tfidfw, terms, qnorm > 0 ? q.map((v) => v / qnorm) : q);
  }

  /** Cosine of a query vector with every record (the vectors are unit length). */
  denseScores(qvec) {
    if (!this.vectors) throw new Error("this page has no dense vectors");
    const v = this.vectors, dim = this.dim, s = new Float64Array(this.n), q = Float64Array.from(qvec);
    for (let i = 0, o = 0; i < this.n; i++, o += dim) {  // float32 products are exact in float64
      let acc = 0.0;
      for (let j = 0; j < dim; j++) acc += v[o + j] * q[j];
      s[i] = acc;
    }
    return s;
  }

  /** Reciprocal rank fusion: sum of w / (k + rank) over the rankings a record appears in. */
  rrf(rankings, k, weights) {
    const fused = new Float64Array(this.n);
    rankings.forEach((r, i) => r.positions.forEach((p, j) => { fused[p] += weights[i] / (k + (j + 1)); }));
    return fused;
  }

  /** Carrier's boost: (1-lam) maxnorm(text) + lam maxnorm(PPR from the top positive text scores). */
  pprBoost(t, { alpha, lam, n_seeds: nSeeds, iterations }) {
    const seeds = topK(t, nSeeds, this.idRank).positions;
    if (!seeds.length) return Float64Array.from(t);
    const total = pairwiseSum((i) => t[seeds[i]], 0, seeds.length);
    const sVals = seeds.map((s) => t[s] / total);
    const { ppr_ptr: ptr, ppr_idx: idx, ppr_val: val, ppr_dangling: dangling } = this.a;
    const beta = 1.0 - alpha;
    let p = new Float64Array(this.n), buf = new Float64Array(this.n);
    seeds.forEach((s, i) => { p[s] = sVals[i]; });
    for (let it = 0; it < iterations; it++) {
      const dm = dangling.length ? 0.0 + pairwiseSum((i) => p[dangling[i]], 0, dangling.length) : 0.0;
      for (let i = 0; i < this.n; i++) {
        let acc = 0.0;
        for (let jj = ptr[i]; jj < ptr[i + 1]; jj++) acc += val[jj] * p[idx[jj]];
        buf[i] = acc * beta;
      }
      const coef = alpha + beta * dm;
      seeds.forEach((s, i) => { buf[s] += coef * sVals[i]; });
      [p, buf] = [buf, p];
    }
    const top = (x) => x.reduce((m, v) => (v > m ? v : m), -Infinity);
    const tt = top(t), tp = top(p);
    const out = new Float64Array(this.n);
    for (let i = 0; i < this.n; i++) {
      out[i] = (1.0 - lam) * (tt > 0 ? t[i] / tt : t[i]) + lam * (tp > 0 ? p[i] / tp : p[i]);
    }
    return out;
  }

  /** A method's ranking: {positions, scores} best first (and `hits` with paths for the relation lane). */
  rank(method, query, k, qvec = null) {
    const P = this.m.params[method];
    const all = (s, positive = true) => topK(s, null, this.idRank, positive);
    switch (method) {
      case "bm25": return topK(this.bm25Scores(query), k, this.idRank);
      case "tfidf": return topK(this.tfidfScores(query), k, this.idRank);
      case "rrf-lexical":
        return topK(this.rrf([all(this.bm25Scores(query)), all(this.tfidfScores(query))], P.k_rrf, [1.0, 1.0]),
                    k, this.idRank);
      case "bm25+ppr": return topK(this.pprBoost(this.bm25Scores(query), P), k, this.idRank);
      case "dense": return topK(this.denseScores(qvec), k, this.idRank, false);
      case "rrf":
        return topK(this.rrf([all(this.bm25Scores(query)), all(this.denseScores(qvec), false)], P.k_rrf, P.weights),
                    k, this.idRank);
      case "relation": return this.relation.rank(query, k, P, qvec ? this.denseScores(qvec) : null);
      default: throw new Error(`the page does not offer method ${method}`);
    }
  }
}
