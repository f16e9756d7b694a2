"""A TopK sparse autoencoder in numpy: chunk vectors -> a few active markers out of `width`.

Model (Gao et al. 2024, "Scaling and evaluating sparse autoencoders")::

    pre  = (x - b_dec) @ W_enc + b_enc          (width,)
    z    = ReLU(TopK_k(pre))                     k non-zeros at most
    x'   = z @ W_dec + b_dec                     W_dec rows (one per marker) have unit norm

Training: Adam on the summed squared error, mini-batches in a seeded order, b_dec started at the
data mean, W_enc started as W_dec^T (untied by default; ``tied=True`` keeps W_enc = W_dec^T).
Decoder rows are renormalised after each step and the gradient component along each row removed
first. Dead features (no activation over the last epoch) are resampled during the first
``resample_until`` fraction of training: the decoder row becomes the unit residual of a high-error
input drawn with probability proportional to its squared error, the encoder column a scaled copy,
and the feature's Adam moments are reset. The whole run is deterministic for a given seed, data
and CPU (BLAS runs on one thread; see `one_blas_thread`).

Reported: fraction of variance explained (FVE = 1 - SSE / SST over the data), dead features (never
active when encoding the whole data at the end) and training time.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    import scipy.sparse as sp

from ..errors import InputError
from ..progress import progress_bar

# The SAE's default seed: an arbitrary fixed value (no specification names one), kept because the
# trained markers -- and so every certificate built on them -- depend on it.
SAE_SEED = 17


@dataclass(frozen=True)
class SAEConfig:
    width: int = 16384  # order 10^4 markers, as the seed document's 17,281
    k: int = 32
    epochs: int = 20
    batch_size: int = 512
    lr: float = 2e-3
    tied: bool = False
    seed: int = SAE_SEED
    resample_until: float = 0.6  # fraction of epochs during which dead features are resampled
    resample_scale: float = 0.2

    def __post_init__(self) -> None:
        if self.width < 2 or not (1 <= self.k <= self.width) or self.epochs < 1 or self.batch_size < 1:
            raise InputError(f"SAE needs width >= 2, 1 <= k <= width, epochs, batch_size >= 1; got {self}")


@dataclass
class SAE:
    W_enc: np.ndarray  # (d, width)
    b_enc: np.ndarray  # (width,)
    W_dec: np.ndarray  # (width, d), unit rows
    b_dec: np.ndarray  # (d,)
    k: int
    stats: dict = field(default_factory=dict)

    @property
    def width(self) -> int:
        return self.W_dec.shape[0]

    def topk(self, x: np.ndarray, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(idx, vals), each (n, k): the k largest pre-activations per row, descending, ReLU'd."""
        k = self.k if k is None else k
        pre = (np.asarray(x, np.float32) - self.b_dec) @ self.W_enc + self.b_enc
        idx = np.argpartition(-pre, k - 1, axis=1)[:, :k]
        vals = np.take_along_axis(pre, idx, axis=1)
        order = np.argsort(-vals, axis=1, kind="stable")
        idx = np.take_along_axis(idx, order, axis=1)
        vals = np.maximum(np.take_along_axis(vals, order, axis=1), 0.0)
        return idx, vals

    def decode(self, idx: np.ndarray, vals: np.ndarray) -> np.ndarray:
        return np.einsum("nk,nkd->nd", vals, self.W_dec[idx]) + self.b_dec

    def sha256(self) -> str:
        """sha256 of the weights (W_enc, b_enc, W_dec, b_dec as float32 bytes, then k): what pins the markers."""
        h = hashlib.sha256()
        for a in (self.W_enc, self.b_enc, self.W_dec, self.b_dec):
            a = np.ascontiguousarray(a, dtype=np.float32)
            h.update(str(a.shape).encode())
            h.update(a.tobytes())
        h.update(str(int(self.k)).encode())
        return h.hexdigest()

    def encode(self, x: np.ndarray, k: int | None = None, batch: int = 2048) -> sp.csr_matrix:
        """Sparse codes (n, width), float32, zero activations dropped; BLAS on one thread, as in
        training, so the codes do not depend on the machine's thread pool."""
        with one_blas_thread():
            return self._encode(x, k, batch)

    def _encode(self, x: np.ndarray, k: int | None, batch: int) -> sp.csr_matrix:
        import scipy.sparse as sp
        x = np.asarray(x, np.float32)
        rows, cols, data = [], [], []
        for s in range(0, len(x), batch):
            idx, vals = self.topk(x[s:s + batch], k)
            r = np.repeat(np.arange(s, s + len(idx)), idx.shape[1])
            rows.append(r)
            cols.append(idx.ravel())
            data.append(vals.ravel())
        if not rows:
            return sp.csr_matrix((len(x), self.width), dtype=np.float32)
        m = sp.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(len(x), self.width), dtype=np.float32)
        m.eliminate_zeros()
        m.sort_indices()
        return m

    def fve(self, x: np.ndarray, batch: int = 2048) -> float:
        x = np.asarray(x, np.float32)
        sse = 0.0
        for s in range(0, len(x), batch):
            xb = x[s:s + batch]
            idx, vals = self.topk(xb)
            sse += float(((self.decode(idx, vals) - xb) ** 2).sum())
        sst = float(((x - x.mean(axis=0)) ** 2).sum())
        return 1.0 - sse / max(sst, 1e-12)

    # ---- persistence ---------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        np.savez(folder / "sae.npz", W_enc=self.W_enc, b_enc=self.b_enc, W_dec=self.W_dec, b_dec=self.b_dec,
                 k=np.int64(self.k))

    @classmethod
    def load(cls, folder: Path, stats: dict | None = None) -> "SAE":
        z = np.load(folder / "sae.npz")
        return cls(z["W_enc"], z["b_enc"], z["W_dec"], z["b_dec"], int(z["k"]), stats or {})


class _Adam:
    def __init__(self, shapes: dict, lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
        self.m = {n: np.zeros(s, np.float32) for n, s in shapes.items()}
        self.v = {n: np.zeros(s, np.float32) for n, s in shapes.items()}
        self.lr, self.b1, self.b2, self.eps, self.t = lr, b1, b2, eps, 0

    def step(self, params: dict, grads: dict) -> None:
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        for n, g in grads.items():
            m, v = self.m[n], self.v[n]
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            params[n] -= (self.lr * (m / c1) / (np.sqrt(v / c2) + self.eps)).astype(np.float32)


def one_blas_thread():
    """A context in which BLAS (numpy's OpenBLAS) runs on one thread."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def train_sae(x: np.ndarray, config: SAEConfig = SAEConfig(), progress: bool = False) -> SAE:
    """Train a TopK SAE on the rows of `x` (n, d); deterministic for a seed.

    BLAS runs on one thread, always: a pool's size is the machine's, and the markers must not be
    (on a shared 2-core machine one thread is also several times faster than an oversubscribed pool)."""
    with one_blas_thread():
        return _train(x, config, progress)


def _train(x: np.ndarray, config: SAEConfig, progress: bool) -> SAE:
    import scipy.sparse as sp
    t0 = time.perf_counter()
    x = np.ascontiguousarray(x, dtype=np.float32)
    n, d = x.shape
    if n < 2:
        raise InputError(f"an SAE needs at least 2 training rows, got {n}")
    m, k = config.width, config.k
    rng = np.random.default_rng(config.seed)
    W_dec = rng.standard_normal((m, d)).astype(np.float32)
    W_dec /= np.linalg.norm(W_dec, axis=1, keepdims=True)
    p = {"W_dec": W_dec, "b_dec": x.mean(axis=0).astype(np.float32), "b_enc": np.zeros(m, np.float32)}
    if not config.tied:
        p["W_enc"] = np.ascontiguousarray(W_dec.T.copy())
    adam = _Adam({name: a.shape for name, a in p.items()}, config.lr)
    bs = min(config.batch_size, n)
    steps_per_epoch = (n + bs - 1) // bs
    last_fired = np.zeros(m, np.int64)
    losses = []
    resampled = 0
    with progress_bar(config.epochs * steps_per_epoch, f"training SAE ({m} markers, k={k})", progress) as advance:
        for epoch in range(config.epochs):
            order = rng.permutation(n)
            ep_loss = 0.0
            for s in range(0, n, bs):
                xb = x[order[s:s + bs]]
                B = len(xb)
                W_enc = p["W_dec"].T if config.tied else p["W_enc"]
                xc = xb - p["b_dec"]
                pre = xc @ W_enc + p["b_enc"]
                idx = np.argpartition(-pre, k - 1, axis=1)[:, :k]
                vals = np.take_along_axis(pre, idx, axis=1)
                active = vals > 0
                vals = np.where(active, vals, 0.0).astype(np.float32)
                recon = np.einsum("bk,bkd->bd", vals, p["W_dec"][idx]) + p["b_dec"]
                err = recon - xb
                ep_loss += float((err ** 2).sum())
                g = (2.0 / B) * err  # dL/drecon
                rows = np.repeat(np.arange(B), k)
                Z = sp.csr_matrix((vals.ravel(), (rows, idx.ravel())), shape=(B, m))
                dvals = np.einsum("bd,bkd->bk", g, p["W_dec"][idx]) * active
                dP = sp.csr_matrix((dvals.ravel().astype(np.float32), (rows, idx.ravel())), shape=(B, m))
                dW_dec = np.asarray((Z.T @ g), dtype=np.float32)
                dW_enc_T = np.asarray(dP.T @ xc, dtype=np.float32)  # (m, d)
                dxc = np.asarray(dP @ W_enc.T, dtype=np.float32)
                grads = {"b_enc": np.asarray(dP.sum(axis=0), np.float32).ravel(),
                         "b_dec": (g.sum(axis=0) - dxc.sum(axis=0)).astype(np.float32)}
                if config.tied:
                    dW_dec = dW_dec + dW_enc_T
                else:
                    grads["W_enc"] = np.ascontiguousarray(dW_enc_T.T)
                dW_dec -= (dW_dec * p["W_dec"]).sum(axis=1, keepdims=True) * p["W_dec"]
                grads["W_dec"] = dW_dec
                adam.step(p, grads)
                p["W_dec"] /= np.maximum(np.linalg.norm(p["W_dec"], axis=1, keepdims=True), 1e-12)
                fired = np.unique(idx[active])
                last_fired[fired] = epoch + 1
                advance(1)
            losses.append(ep_loss / n)
            dead = np.flatnonzero(last_fired < epoch + 1)
            if dead.size and epoch + 1 < config.epochs * config.resample_until:
                resampled += int(dead.size)
                _resample(p, adam, dead, x, config, rng)
    W_enc = p["W_dec"].T.copy() if config.tied else p["W_enc"]
    sae = SAE(np.ascontiguousarray(W_enc), p["b_enc"], p["W_dec"], p["b_dec"], k)
    codes = sae.encode(x)
    fired_any = np.zeros(m, bool)
    fired_any[codes.indices] = True
    sae.stats = {"width": m, "k": k, "epochs": config.epochs, "batch_size": bs, "lr": config.lr,
                 "tied": config.tied, "seed": config.seed, "rows": n, "dim": d,
                 "fve": sae.fve(x), "dead": int(m - fired_any.sum()), "resampled": resampled,
                 "loss_per_epoch": [round(v, 6) for v in losses],
                 "train_seconds": round(time.perf_counter() - t0, 2)}
    return sae


def _resample(p: dict, adam: _Adam, dead: np.ndarray, x: np.ndarray, config: SAEConfig, rng) -> None:
    """Point dead markers at the residuals of inputs the model reconstructs worst."""
    probe = x[rng.choice(len(x), size=min(len(x), 4096), replace=False)]
    W_enc = p["W_dec"].T if config.tied else p["W_enc"]
    sae = SAE(W_enc, p["b_enc"], p["W_dec"], p["b_dec"], config.k)
    idx, vals = sae.topk(probe)
    resid = probe - sae.decode(idx, vals)
    e2 = (resid ** 2).sum(axis=1).astype(np.float64)
    prob = e2 / e2.sum() if e2.sum() > 0 else None
    pick = rng.choice(len(probe), size=len(dead), replace=len(dead) > len(probe), p=prob)
    dirs = resid[pick]
    dirs /= np.maximum(np.linalg.norm(dirs, axis=1, keepdims=True), 1e-12)
    p["W_dec"][dead] = dirs
    p["b_enc"][dead] = 0.0
    if not config.tied:
        alive = np.setdiff1d(np.arange(p["W_enc"].shape[1]), dead)
        scale = float(np.linalg.norm(p["W_enc"][:, alive], axis=0).mean()) if alive.size else 1.0
        p["W_enc"][:, dead] = (dirs * scale * config.resample_scale).T
    for name in ("W_dec", "b_enc"):
        adam.m[name][dead] = 0
        adam.v[name][dead] = 0
    if not config.tied:
        adam.m["W_enc"][:, dead] = 0
        adam.v["W_enc"][:, dead] = 0


def top_k_codes(codes: sp.csr_matrix, k: int) -> sp.csr_matrix:
    """Keep the k largest activations of each row (a coarser resolution of the same SAE)."""
    codes = codes.tocsr()
    out = codes.copy()
    for r in range(codes.shape[0]):
        a, b = codes.indptr[r], codes.indptr[r + 1]
        if b - a > k:
            seg = out.data[a:b]
            cut = np.argsort(-seg, kind="stable")[k:]
            seg[cut] = 0
    out.eliminate_zeros()
    return out
