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

/** Positions best first: score descending, then `tieRank` ascending (Python's `top_k`). The k best
 *  are kept in a heap (worst of them at the root), so a query costs O(n log k), not a sort of n. */
export function topK(scores, k, tieRank, positiveOnly = true) {
  const better = (a, b) => scores[a] > scores[b] || (scores[a] === scores[b] && tieRank[a] < tieRank[b]);
  const keep = (i) => !positiveOnly || scores[i] > 0;
  let cand = [];
  if (k == null) {
    for (let i = 0; i < scores.length; i++) if (keep(i)) cand.push(i);
  } else if (k > 0) {
    const heap = cand;
    const down = (j) => {
      for (;;) {
        const l = 2 * j + 1, r = l + 1;
        let w = j;
        if (l < heap.length && better(heap[w], heap[l])) w = l;
        if (r < heap.length && better(heap[w], heap[r])) w = r;
        if (w === j) return;
        [heap[j], heap[w]] = [heap[w], heap[j]];
        j = w;
      }
    };
    for (let i = 0; i < scores.length; i++) {
      if (!keep(i)) continue;
      if (heap.length < k) {
        heap.push(i);
        for (let j = heap.length - 1; j > 0 && better(heap[(j - 1) >> 1], heap[j]);) {
          const up = (j - 1) >> 1;
          [heap[j], heap[up]] = [heap[up], heap[j]];
          j = up;
        }
      } else if (better(i, heap[0])) {
        heap[0] = i;
        down(0);
      }
    }
  }
  cand.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));
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
