// The relation lane in the page: `methods.relation.relation_rank` and `graph.relation.activate`
// ported line by line (anchors named in the question, relation cues, spreading activation with
// local competition, the query-aware sum of parts, credited edge paths).

import { pairwiseSum, scaled, topK } from "./numeric.js";

const TOKEN = /[a-z0-9]+/g;
const PARTS = ["graph", "hop", "type", "context", "text", "dense", "anchor", "seed"];

export const nameTokens = (text) => text.toLowerCase().match(TOKEN) || [];

/** The token without a plural -s (not -ss, -us, -is). */
export function dropS(t) {
  return t.length > 3 && t.endsWith("s") && !/(ss|us|is)$/.test(t) ? t.slice(0, -1) : t;
}

/** A crude English singular, as `structures.names.singular`. */
export function singular(t) {
  if (t.length <= 3 || t.endsWith("ecies")) return t;
  if (t.length > 4 && t.endsWith("ies")) return t.slice(0, -3) + "y";
  if (/(sses|xes|zes|ches|shes)$/.test(t)) return t.slice(0, -2);
  return dropS(t);
}

/** Record names in a text, leftmost-longest, non-overlapping (`NameMatcher.find`). */
export class Names {
  constructor(owners) {
    this.owners = new Map(Object.entries(owners));
    this.maxLen = 0;
    for (const key of this.owners.keys()) this.maxLen = Math.max(this.maxLen, key.split(" ").length);
  }

  find(text, skip = new Set()) {
    const toks = nameTokens(text);
    if (!this.owners.size || !toks.length) return [];
    const found = new Map();
    for (const v of [toks, toks.map(singular), toks.map(dropS)]) {
      for (let s = 0; s < v.length; s++) {
        for (let len = 1; len <= this.maxLen && s + len <= v.length; len++) {
          const key = v.slice(s, s + len).join(" "), span = `${s},${s + len}`;
          const positions = this.owners.get(key);
          if (!positions || found.has(span)) continue;
          let skipped = false;
          for (let i = s; i < s + len; i++) if (skip.has(i)) skipped = true;
          if (!skipped) found.set(span, { start: s, end: s + len, name: key, positions });
        }
      }
    }
    const chosen = [], taken = new Set();
    for (const m of [...found.values()].sort((a, b) => a.start - b.start || (b.end - b.start) - (a.end - a.start))) {
      let free = true;
      for (let i = m.start; i < m.end; i++) if (taken.has(i)) free = false;
      if (free) {
        chosen.push(m);
        for (let i = m.start; i < m.end; i++) taken.add(i);
      }
    }
    return chosen;
  }
}

export class Relation {
  constructor(engine) {
    this.e = engine;
    const r = engine.m.relation;
    this.cues = r.cues;
    this.questionWords = new Set(r.question_words);
    this.residualStop = new Set(r.residual_stop);
    this.phrases = r.cues.cues.map((c) => [c.phrase.split(" "), c]).sort((a, b) => b[0].length - a[0].length);
    this.names = new Names(engine.t.names);
    this.typeNames = r.type_names;
    this._contexts = null;
  }

  /** Every relation cue in `tokens`, left to right (a longer phrase wins where two start). */
  findCues(tokens) {
    const out = [], taken = new Set();
    for (let i = 0; i < tokens.length; i++) {
      for (const [phrase, cue] of this.phrases) {
        const span = phrase.map((_, j) => i + j);
        if (phrase.every((w, j) => tokens[i + j] === w) && !span.some((s) => taken.has(s))) {
          out.push([{ ...cue, phrase: phrase.join(" "), start: i, end: i + phrase.length }, new Set(span)]);
          span.forEach((s) => taken.add(s));
          break;
        }
      }
    }
    return out;
  }

  /** The name a cue speaks of and the edge types it asks for (`_attach`). */
  attach(cue, matches, tokens) {
    const gap = this.cues.gap;
    const after = matches.filter((m) => m.start - cue.end >= 0 && m.start - cue.end <= gap);
    const before = matches.filter((m) => cue.start - m.end >= 0 && cue.start - m.end <= gap);
    const asksNext = tokens.slice(cue.end, cue.end + gap).some((t) => this.questionWords.has(t));
    if (after.length && !(asksNext && before.length)) {
      return [after.reduce((a, m) => (m.start < a.start ? m : a)), cue.before];
    }
    if (before.length) return [before.reduce((a, m) => (m.end > a.end ? m : a)), cue.after];
    return [null, []];
  }

  /** (name anchors, the cue, its edge types, the residual question), as `_anchors`. */
  anchors(query, maxAnchors, prior) {
    const tokens = nameTokens(query);
    const cues = this.findCues(tokens);
    let cueTokens = new Set(cues.flatMap(([, span]) => [...span]));
    const skip = new Set(cueTokens);
    tokens.forEach((t, i) => { if (this.questionWords.has(t)) skip.add(i); });
    const matches = this.names.find(query, skip);
    const preferred = cues.map((c, i) => [c, i])
      .sort((x, y) => (x[0][1].size === 1) - (y[0][1].size === 1) || x[0][0].start - y[0][0].start || x[1] - y[1])
      .map(([c]) => c);
    let cue = null, cued = null, types = [];
    for (const [c, span] of preferred) {
      [cued, types] = this.attach(c, matches, tokens);
      if (cued) { cue = c; cueTokens = span; break; }
    }
    if (!cue && preferred.length) [cue, cueTokens] = preferred[0];
    const used = new Set(cueTokens);
    if (cued) for (let i = cued.start; i < cued.end; i++) used.add(i);
    const residual = tokens.filter((t, i) => !used.has(i) && !this.residualStop.has(t)).join(" ");
    const ranked = [];
    for (const m of matches) for (const p of m.positions) ranked.push([-prior[p], this.e.idRank[p], p, m]);
    ranked.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    const out = [], seen = new Set();
    for (const [, , p, m] of ranked) {
      if (!seen.has(p) && out.length < maxAnchors) {
        seen.add(p);
        out.push({ position: p, why: "name", name: m.name, cue: m === cued ? cue.phrase : "" });
      }
    }
    const cueOut = cue ? { phrase: cue.phrase, anchor: cued ? cued.name : null, types } : null;
    return { anchors: out, cue: cueOut, types, residual };
  }

  /** Spreading activation from `seeds` along out-edges (`graph.relation.activate`). */
  activate(seeds, hops, decay, share) {
    const { rel_ptr: ptr, rel_idx: idx } = this.e.a, tr = this.e.idRank;
    const uniq = [...new Set(seeds)], runs = [], parts = [];
    uniq.forEach((s, run) => {
      const layers = [{ nodes: [s], act: [1.0], best: [1.0], backSlot: [-1], backIdx: [-1] }];
      for (let h = 1; h <= hops; h++) {
        const nxt = this._expand(layers[layers.length - 1], ptr, idx, share, decay);
        if (!nxt) break;
        layers.push(nxt);
        nxt.nodes.forEach((node, i) => {
          if (node !== s) parts.push({ node, act: nxt.act[i], best: nxt.best[i], hop: h, seedTr: tr[s], run, i,
                                       slot: nxt.backSlot[i] });
        });
      }
      runs.push(layers);
    });
    const total = new Map(), credit = new Map();
    for (const q of parts) {
      total.set(q.node, (total.get(q.node) ?? 0.0) + q.act);
      const c = credit.get(q.node);
      if (!c || q.best > c.best || (q.best === c.best && (q.hop < c.hop || (q.hop === c.hop && q.seedTr < c.seedTr)))) {
        credit.set(q.node, q);
      }
    }
    const nodes = [...total.keys()].filter((v) => total.get(v) > 0).sort((a, b) => a - b);
    return { nodes, activation: nodes.map((v) => total.get(v)), credit: nodes.map((v) => credit.get(v)),
             isSeed: nodes.map((v) => uniq.includes(v)), runs };
  }

  _expand(prev, ptr, idx, share, decay) {
    const sums = new Map(), best = new Map();
    prev.nodes.forEach((u, i) => {
      for (let slot = ptr[u]; slot < ptr[u + 1]; slot++) {
        const f = share[slot] * decay;
        if (!(f > 0)) continue;
        const v = idx[slot], act = prev.act[i] * f, b = prev.best[i] * f;
        sums.set(v, (sums.get(v) ?? 0.0) + act);
        const c = best.get(v);
        if (!c || b > c.best) best.set(v, { best: b, slot, owner: i });  // slots ascend: the first of a tie wins
      }
    });
    if (!sums.size) return null;
    const nodes = [...sums.keys()].sort((a, b) => a - b);
    return { nodes, act: nodes.map((v) => sums.get(v)), best: nodes.map((v) => best.get(v).best),
             backSlot: nodes.map((v) => best.get(v).slot), backIdx: nodes.map((v) => best.get(v).owner) };
  }

  /** The credited path of a reached node: CSR slots from its seed to it. */
  path(act, j) {
    const c = act.credit[j], layers = act.runs[c.run], slots = [];
    let i = c.i;
    for (let h = c.hop; h > 0; h--) {
      slots.push(layers[h].backSlot[i]);
      i = layers[h].backIdx[i];
    }
    return slots.reverse();
  }

  /** The edge in CSR slot `slot`: edge id, source and target positions, type, weight, context. */
  edge(slot) {
    const { rel_ptr: ptr, rel_idx: idx, rel_type: type, rel_weight: weight, rel_edge: id } = this.e.a;
    let lo = 0, hi = ptr.length - 2;  // the source: the last node whose slots start at or before `slot`
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ptr[mid] <= slot) lo = mid; else hi = mid - 1;
    }
    return { edge_id: id[slot], source: lo, target: idx[slot], type: this.typeNames[type[slot]], weight: weight[slot],
             context: this.e.t.contexts[id[slot]] ?? null };
  }

  /** Terms of each edge's link context (built on first use). */
  contextTerms(edge) {
    if (!this._contexts) {
      this._contexts = new Map();
      for (const [e, text] of Object.entries(this.e.t.contexts)) {
        this._contexts.set(Number(e), new Set(this.e.tokens(text).map((t) => this.e.termId.get(t)).filter((t) => t !== undefined)));
      }
    }
    return this._contexts.get(edge);
  }

  /** The relation lane's ranking of `query`: {positions, scores, hits (with paths and parts), anchors, cue}. */
  rank(query, limit, p, dense) {
    const e = this.e;
    if (!query || !query.trim()) throw new Error("empty query");
    const useDense = p.dense_seeds && dense != null;
    const share = e.a.rel_share;
    const bm25 = e.bm25Scores(query);
    let seeds = topK(bm25, p.n_seeds, e.idRank).positions.map((q) => ({ position: q, why: "bm25" }));
    if (useDense) {
      const taken = new Set(seeds.map((a) => a.position));
      for (const q of topK(dense, p.n_seeds, e.idRank).positions) if (!taken.has(q)) seeds.push({ position: q, why: "dense" });
    }
    let cue = null, types = [], residual = "";
    if (p.rank === "query-aware") {
      const got = this.anchors(query, p.max_anchors, dense ?? bm25);
      ({ cue, types, residual } = got);
      const have = new Set(got.anchors.map((a) => a.position));
      seeds = [...got.anchors, ...seeds.filter((a) => !have.has(a.position))];
    }
    const out = { positions: [], scores: [], hits: [], anchors: seeds, cue, residual };
    if (!seeds.length) return out;
    const act = this.activate(seeds.map((a) => a.position), p.hops, p.decay, share);
    if (!act.nodes.length) return out;
    const tie = act.nodes.map((v) => e.idRank[v]);
    const byScore = (score) => act.nodes.map((_, j) => j).sort((x, y) => score[y] - score[x] || tie[x] - tie[y]);
    let score, parts = null, order;
    if (p.rank === "activation") {
      score = act.activation;
      order = byScore(score).slice(0, limit ?? undefined);
    } else {
      parts = this._parts(act, p, types, seeds, residual, dense ?? bm25, dense, share);
      score = act.nodes.map((_, j) => parts.graph[j] + PARTS.slice(1).reduce((s, k) => s + p[`${k}_weight`] * parts[k][j], 0));
      const named = new Set(seeds.filter((a) => a.why === "name").map((a) => a.position));
      order = byScore(score).filter((j) => !named.has(act.nodes[j])).slice(0, limit ?? undefined);
    }
    out.positions = order.map((j) => act.nodes[j]);
    out.scores = order.map((j) => score[j]);
    out.hits = order.map((j) => {
      const path = this.path(act, j).map((slot) => this.edge(slot));
      return { position: act.nodes[j], score: score[j], seed: path[0].source, isSeed: act.isSeed[j], path,
               parts: parts ? Object.fromEntries(PARTS.map((k) => [k, parts[k][j]])) : { graph: score[j] } };
    });
    return out;
  }

  /** Per reached node: the best positive `fit` of a `sources` record with an edge straight to it, / max. */
  linkedFit(nodes, sources, fit) {
    const { rel_ptr: ptr, rel_idx: idx } = this.e.a;
    const at = new Map(nodes.map((v, j) => [v, j])), out = new Array(nodes.length).fill(0.0);
    for (const s of sources) {
      for (let k = ptr[s]; k < ptr[s + 1]; k++) {
        const j = at.get(idx[k]);
        if (j !== undefined) out[j] = Math.max(out[j], Math.max(fit[s], 0.0));
      }
    }
    return scaled(out);
  }

  _parts(act, p, types, seeds, residual, fit, dense, share) {
    const e = this.e, n = act.nodes.length;
    const parts = { graph: scaled(act.activation), hop: act.credit.map((c) => p.decay ** (c.hop - 1.0)),
                    type: new Array(n).fill(0.0), dense: new Array(n).fill(0.0) };
    const wanted = new Set(types.filter((t) => this.typeNames.includes(t)).map((t) => this.typeNames.indexOf(t)));
    const named = seeds.filter((a) => a.why === "name").map((a) => a.position);
    if (wanted.size && named.length) {
      const typed = share.map((s, slot) => (wanted.has(e.a.rel_type[slot]) ? s : 0.0));
      const reached = new Set(this.activate(named, p.hops, p.decay, typed).nodes);
      act.nodes.forEach((v, j) => { if (reached.has(v)) parts.type[j] = 1.0; });
    }
    const terms = residual ? e.queryTerms(residual) : [];
    parts.context = new Array(n).fill(0.0);
    if (terms.length && Object.keys(e.t.contexts).length) {
      const idf = terms.map((t) => e.a.bm25_idf[t]);
      const total = pairwiseSum((i) => idf[i], 0, idf.length);
      act.credit.forEach((c, j) => {
        const ctx = this.contextTerms(e.a.rel_edge[c.slot]);
        if (ctx) parts.context[j] = terms.reduce((s, t, i) => s + (ctx.has(t) ? idf[i] : 0.0), 0.0) / total;
      });
    }
    if (residual) {
      const text = e.bm25Scores(residual);
      parts.text = scaled(act.nodes.map((v) => text[v]));
    } else parts.text = new Array(n).fill(0.0);
    if (dense) parts.dense = scaled(act.nodes.map((v) => dense[v]), true);
    parts.anchor = this.linkedFit(act.nodes, named, fit);
    parts.seed = this.linkedFit(act.nodes, seeds.filter((a) => a.why !== "name").map((a) => a.position), fit);
    return parts;
  }
}
