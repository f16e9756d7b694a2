"""The protocol's schema (pydantic): every field, its type and its range, checked before anything is written.

`validate_protocol(data, where)` refuses a protocol that is not whole with one line naming the first bad
field (`depth: must be an integer 1..10000, got 0`). It runs in `load_protocol`, so `lab validate`,
`freeze`, `run` and `all` see the same refusals, and a protocol that would fail later (a depth of 0 that
scores every metric 0.0, a grid value that is not a list, a selection metric that does not parse) is
never frozen. Declared method parameters are checked by their methods (`Protocol.check_methods`).

`depth` is how many ranked ids are kept per query (default 100); `dev_depth` (optional, default `depth`)
is how many are kept for the dev split, whose rankings only select settings (the grid choice, `pick`) and
are most of a grid search's bytes. It must reach the cutoff of the selection metric and of the primary
metric (an untruncated `rr` reads the whole `depth`) and may not exceed `depth`; test keeps `depth`. Dev
metrics that read deeper than `dev_depth` (recall@100 when it is 10) are left out of dev/result.json
(listed under `left_out` with the reason), never computed from the shorter rankings.
"""

from __future__ import annotations

import json

import math
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import InputError
from ..structures.lexical_store import VARIANTS
from ..text import STOPLISTS
from .metrics import parse_metric, reads_to

MAX_DEPTH = 10_000  # ranked ids kept per query
MAX_GRID_POINTS = 1_000  # settings one method's grid may expand to
MAX_TITLE_WEIGHT = 100  # times a title may be repeated (memory grows with it)
MAX_RESAMPLES = 1_000_000  # bootstrap resamples / sign flips
MAX_SEEDS = 100  # seeds of one method
MAX_SAMPLE = 1_000_000


class _Closed(BaseModel):
    """No unknown keys, no silent coercion ("5" is not 5, true is not 1)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Tokenizer(_Closed):
    min_length: int = Field(1, ge=1, le=100)
    stopwords: Literal[tuple(STOPLISTS)] | None = None  # type: ignore[valid-type]
    stem: Literal["english"] | None = None


class BM25(_Closed):
    k1: float = Field(1.2, ge=0, le=100, allow_inf_nan=False)
    b: float = Field(0.75, ge=0, le=1, allow_inf_nan=False)
    variant: Literal[VARIANTS] = "robertson"  # type: ignore[valid-type]


class Passages(_Closed):
    stride: int = Field(64, ge=1, le=512)
    title: bool = True
    sections: bool = False  # every section of a document, in windows (structures.dense.Passages)


class DenseVariant(_Closed):
    model: str = Field(min_length=1)
    passages: Passages | None = None


class IndexSpec(_Closed):
    tokenizer: Tokenizer = Tokenizer()
    bm25: BM25 = BM25()
    dense: str | None = None
    dense_note: str = ""
    dense_variants: dict[str, Union[str, DenseVariant]] = {}


class CorpusSpec(_Closed):
    source: str = Field(min_length=1)
    exclude: list[str] = Field(default_factory=list, max_length=100)  # a folder of documents: paths left out
    content_hash: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    content_hash_before_metadata: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")  # the hash before it covered metadata
    note: str = ""
    title_weight: int | None = Field(None, ge=0, le=MAX_TITLE_WEIGHT)


class DevSpec(_Closed):
    split: str = Field(min_length=1)
    seed: int
    n_fit: int = Field(ge=1, le=MAX_SAMPLE)


class SampleSpec(_Closed):
    n: int = Field(ge=1, le=MAX_SAMPLE)
    seed: int
    rule: str = "sorted-int"


class BenchmarkSpec(_Closed):
    kind: Literal["concept", "describe", "collection", "beir"]
    path: str | None = None
    folder: str | None = None
    split: str = "test"
    dev: DevSpec | None = None
    sample: SampleSpec | None = None
    sample_call: str = ""
    sample_note: str = ""
    select: dict[str, str] | None = None
    sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")

    @field_validator("select")
    @classmethod
    def _select(cls, v):
        if v is not None and not v:
            raise ValueError('must be a non-empty object of field -> string value, e.g. {"corpus": "foldoc"}')
        return v

    @model_validator(mode="after")
    def _where(self):
        if self.kind in ("concept", "describe", "collection") and not self.path:
            raise ValueError(f"a {self.kind} benchmark needs 'path' (its JSONL file)")
        if self.kind == "beir" and not self.folder:
            raise ValueError("a beir benchmark needs 'folder' (the BEIR data set folder)")
        return self


class Metrics(_Closed):
    primary: str
    secondary: list[str] = Field(default_factory=list, max_length=50)

    @field_validator("primary")
    @classmethod
    def _primary(cls, v):
        return _metric(v)

    @field_validator("secondary")
    @classmethod
    def _secondary(cls, v):
        return [_metric(m) for m in v]


class Seeds(_Closed):
    values: list[int] = Field(min_length=1, max_length=MAX_SEEDS)
    param: str = "seed"


class Method(_Closed):
    name: str = Field(min_length=1)
    method: str | None = None
    params: dict[str, Any] = {}
    grid: dict[str, list[Any]] = {}
    dense: str | None = None
    params_from: str | None = None
    seeds: Seeds | None = None
    required: bool = True
    requires: Literal["dense"] | None = None  # optional: a registered method's own declared needs decide
    exploratory: bool = False
    note: str = ""

    @field_validator("grid")
    @classmethod
    def _grid(cls, v):
        points = 1
        for key, values in v.items():
            if not values:
                raise ValueError(f"grid {key!r} has no values: give a list of at least one")
            points *= len(values)
        if points > MAX_GRID_POINTS:
            raise ValueError(f"the grid expands to {points} settings; at most {MAX_GRID_POINTS}")
        return v


class Selection(_Closed):
    split: str = "dev"
    metric: str | None = None
    tie_break: dict[str, list[list[str]]] = {}

    @field_validator("tie_break")
    @classmethod
    def _ties(cls, v):
        for name, rules in v.items():
            for rule in rules:
                if len(rule) != 2 or rule[1] not in ("asc", "desc"):
                    raise ValueError(f"tie_break of {name!r}: each rule is [PARAMETER, \"asc\" | \"desc\"], got {rule!r}")
        return v

    @field_validator("metric")
    @classmethod
    def _metric(cls, v):
        return None if v is None else _metric(v)


class GraphGate(_Closed):
    """When a graph method may be picked (`lab.pick`): `controls` maps a graph candidate's label to the
    method name of its rewired-graph controls; the paired family bootstrap interval of (graph − mean of its
    controls) on dev must have its lower bound above `margin`."""

    controls: dict[str, str] = Field(min_length=1)
    margin: float = Field(0.0, ge=0.0, lt=1.0)


class Pick(_Closed):
    name: str = Field(min_length=1)
    singles: list[str] = Field(min_length=1)
    fused: list[str] = []
    graph: GraphGate | None = None
    incumbent: str | None = Field(None, min_length=1)  # the candidate that stays unless dev's interval says otherwise


class Contrast(_Closed):
    baseline: str
    candidate: str
    note: str = ""


class Statistics(_Closed):
    seed: int = 127300
    n_resamples: int = Field(10_000, ge=1, le=MAX_RESAMPLES)
    n_flips: int = Field(10_000, ge=1, le=MAX_RESAMPLES)
    confidence: float = Field(0.95, gt=0, lt=1)


class Timing(_Closed):
    passes: int = Field(3, ge=1, le=100)
    types: list[str] | None = None


class ProtocolSpec(_Closed):
    name: str | None = None
    description: str = ""
    extends: str | None = None
    corpus: CorpusSpec
    index: IndexSpec = IndexSpec()
    benchmark: BenchmarkSpec
    depth: int = Field(100, ge=1, le=MAX_DEPTH)
    dev_depth: int | None = Field(None, ge=1, le=MAX_DEPTH)  # ranked ids kept on dev (default: depth)
    exclude_anchor: bool = True
    metrics: Metrics
    methods: list[Method] = Field(min_length=1)
    selection: Selection = Selection()
    pick: Pick | None = None
    primary_contrast: Contrast | None = None
    contrasts: list[Contrast] = []
    statistics: Statistics = Statistics()
    timing: Timing | None = None


def _metric(name: str) -> str:
    try:
        parse_metric(name)
    except InputError as exc:
        raise ValueError(str(exc)) from None
    return name


def _where(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("int", "str", "float", "bool", "list", "dict", "DenseVariant", "tuple") or "[" in str(part):
            continue  # the member of a union pydantic tried, not a key of the protocol
        else:  # a key that is not a plain word is shown quoted, so the message stays one line
            name = str(part) if str(part).isprintable() and str(part).strip() == str(part) else json.dumps(str(part))
            out += ("." if out else "") + name
    return out or "protocol"


def validate_protocol(data: Any, where: str) -> None:
    """Refuse `data` unless it is a whole protocol: an InputError naming the file, the field and the rule."""
    if not isinstance(data, dict):
        raise InputError(f"{where}: a protocol is a JSON object, got {type(data).__name__}")
    try:
        ProtocolSpec.model_validate(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        got = e.get("input")
        shown = "" if e["type"] in ("missing",) else f", got {_short(got)}"
        msg = e["msg"].removeprefix("Value error, ")
        more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
        raise InputError(f"{where}: {_where(e['loc'])}: {msg}{shown}{more}") from None
    _check_dev_depth(data, where)


def _check_dev_depth(data: dict, where: str) -> None:
    """`dev_depth` reaches the selection and primary metrics' cutoffs and does not exceed `depth`."""
    dev = data.get("dev_depth")
    if dev is None:
        return
    depth = data.get("depth", 100)
    primary = data["metrics"]["primary"]
    chosen = (data.get("selection") or {}).get("metric") or primary
    need = max(reads_to(primary, depth), reads_to(chosen, depth))
    if not need <= dev <= depth:
        raise InputError(f"{where}: dev_depth: must be an integer {need}..{depth} (the selection metric {chosen} "
                         f"and the primary metric {primary} read the top {need}; at most depth {depth}), got {dev}")


def _short(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
