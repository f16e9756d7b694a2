// Float helpers that reproduce numpy exactly where sidelight's Python sums with numpy.

/** numpy's pairwise sum (loops_utils.h) of `get(i)` for i in [lo, lo+n): what `a[idx].sum()` adds. */
export function pairwiseSum(get, lo, n) {
  if (n < 8) {
    let res = 0.0;
    for (let i = 0; i < n; i++) res += get(lo + i);
    return res;
  }
  if (n <= 128) {
    const r = [0, 1, 2, 3, 4, 5, 6, 7].map((j) => get(lo + j));
    let i = 8;
    const m = n - (n % 8);
    for (; i < m; i += 8) for (let j = 0; j < 8; j++) r[j] += get(lo + i + j);
    let res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) res += get(lo + i);
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(get, lo, n2) + pairwiseSum(get, lo + n2, n - n2);
}

/** Positions best first: score descending, then `tieRank` ascending (Python's `top_k`). */
export function topK(scores, k, tieRank, positiveOnly = true) {
  const cand = [];
  for (let i = 0; i < scores.length; i++) if (!positiveOnly || scores[i] > 0) cand.push(i);
  cand.sort((a, b) => scores[b] - scores[a] || tieRank[a] - tieRank[b]);
  if (k != null && cand.length > k) cand.length = Math.max(k, 0);
  return { positions: cand, scores: cand.map((i) => scores[i]) };
}

/** x scaled to [0, 1] by its largest value (min-max with `minmax`); zeros when constant. */
export function scaled(x, minmax = false) {
  let lo = minmax && x.length ? Infinity : 0.0, hi = x.length ? -Infinity : 0.0;
  for (const v of x) {
    if (v > hi) hi = v;
    if (minmax && v < lo) lo = v;
  }
  return Array.from(x, (v) => (hi > lo ? (v - lo) / (hi - lo) : 0.0));
}
