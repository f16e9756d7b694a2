"""The run's record: every file a lab stage writes is hashed as it is written, stage by stage.

The chain, one link per stage::

    freeze.json        "record_sha256": sha256 of its own canonical JSON without that field
    dev/record.json    sha256 of freeze.json, of every dev file (rankings, result.json, selection.json)
    test/record.json   sha256 of dev/record.json and of dev/selection.json, of every test file

Each record carries its own `record_sha256` (canonical JSON, sorted keys, without the field). Paths
are relative to the run folder. `verify_run` checks the chain up to a stage and refuses, naming the
file, when a recorded file is missing or differs, when a stage folder holds a file its record does
not list, or when a required file (result, selection, the rankings of every method run) is absent.

A ranking file, a stage's result.json and selection.json, a report's figures/*.svg and report.html may be stored
compressed (`packed`: `rankings/X.jsonl.cols`, `.xz` or `.gz` stands for the recorded `rankings/X.jsonl`,
`result.json.xz` for `result.json`); the recorded sha256 is always that of the uncompressed bytes, so
compressing a run changes no record. Two forms may exist (a conversion that stopped halfway); then both must
match.

A record is tamper-evident, not tamper-proof: someone who rewrites a file, its record and every
later record consistently is not caught here (the auditor's recomputation still checks the numbers).

Like the auditor, this module imports no lab metric, statistics, protocol or runner code.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..errors import SidelightError
from ..index.store import sha256_file as sha256_of
from .packed import PackedError, exists, forms, is_packed, open_text, ranking_files, read_bytes, recorded_name, sha256_logical
from .packed import sha256_stored

STAGES = ("freeze", "dev", "test")
RECORD_NAME = "record.json"
SELF_KEY = "record_sha256"
IGNORED = frozenset({".lock", ".lock.holder"})  # the writer lock's files are no part of any stage


class RefusedError(SidelightError):
    """The lab refuses: a completed result exists, or something frozen or recorded changed."""


def safe_name(label: str) -> str:
    """The rankings file stem of a setting label."""
    return "".join(c if c.isalnum() or c in "-_.=" else "_" for c in label)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()




def canonical_sha256(obj: dict) -> str:
    """sha256 of `obj` as canonical JSON (sorted keys, no spaces), without its `record_sha256`."""
    body = {k: v for k, v in obj.items() if k != SELF_KEY}
    return sha256_bytes(json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def sealed(obj: dict) -> dict:
    """`obj` with its `record_sha256` set."""
    return {**{k: v for k, v in obj.items() if k != SELF_KEY}, SELF_KEY: canonical_sha256(obj)}


def stage_record(stage: str, previous: dict[str, str], files: dict[str, str]) -> dict:
    """The sealed record of one stage: the hashes it links back to and the files it wrote."""
    return sealed({"stage": stage, "previous": dict(sorted(previous.items())), "files": dict(sorted(files.items()))})


def _altered(run: Path, rel: str, by: str) -> RefusedError:
    return RefusedError(f"{run / rel} does not match the hash recorded by the {by}; "
                        "the run was altered after it was written")


def _load(run: Path, rel: str, why: str) -> dict:
    path = run / rel
    if not exists(path):
        raise RefusedError(f"{path} is missing: {why}")
    try:
        data = read_bytes(path)  # plain, or result.json.xz / selection.json.xz (`packed`)
    except PackedError as e:
        raise RefusedError(str(e)) from None
    try:
        obj = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise RefusedError(f"{path} is not valid JSON; the run was altered after it was written") from None
    if not isinstance(obj, dict):
        raise RefusedError(f"{path} is not a JSON object; the run was altered after it was written")
    return obj


def _check_self(run: Path, rel: str, obj: dict, stage: str) -> None:
    if SELF_KEY not in obj:
        raise RefusedError(f"{run / rel} carries no {SELF_KEY}: written without a record (before the lab "
                           f"kept one?) or altered; {'re-freeze into a new folder' if stage == 'freeze' else 'rerun'}")
    if obj[SELF_KEY] != canonical_sha256(obj):
        raise _altered(run, rel, f"{stage} stage (its own {SELF_KEY})")


def _check_file(run: Path, rel: str, sha: str, stage: str) -> None:
    """One recorded file against its hash: every stored form of it (plain, or a ranking's `.cols`/`.xz`/`.gz`,
    another compressible file's `.xz`)."""
    path = run / rel
    found = forms(path)
    if not found:
        raise RefusedError(f"{path} is missing; the {stage} stage recorded it (the run was altered "
                           "after it was written)")
    for form in found:
        try:
            ok = (sha256_stored(form) if is_packed(form.name) else sha256_of(form)) == sha
        except PackedError as e:
            raise RefusedError(str(e)) from None
        if not ok:
            raise _altered(run, form.relative_to(run).as_posix(), f"{stage} stage")


def _check_stage(run: Path, stage: str, want_prev: dict[str, str]) -> dict:
    """Verify `stage/record.json` and every file it lists; returns the record."""
    rel = f"{stage}/{RECORD_NAME}"
    rec = _load(run, rel, f"the {stage} stage's record; the run was altered or written without a record")
    _check_self(run, rel, rec, stage)
    if rec.get("stage") != stage or not isinstance(rec.get("files"), dict) or not isinstance(rec.get("previous"), dict):
        raise _altered(run, rel, f"{stage} stage")
    if set(rec["previous"]) != set(want_prev):
        raise RefusedError(f"{run / rel} does not link to {', '.join(sorted(want_prev))}; the run was altered")
    for prev, sha in want_prev.items():
        if rec["previous"][prev] != sha:
            raise _altered(run, prev, f"{stage} stage")
    for f, sha in rec["files"].items():
        if not f.startswith(f"{stage}/") or ".." in Path(f).parts:
            raise _altered(run, rel, f"{stage} stage")
        _check_file(run, f, sha, stage)
    for path in sorted((run / stage).rglob("*")):
        f = recorded_name(path.relative_to(run).as_posix())  # a file stored compressed stands for its plain name
        if path.is_file() and f != rel and f not in rec["files"] and path.name not in IGNORED:
            raise RefusedError(f"{path} is not in the {stage} stage's record; the run was altered after it "
                               "was written")
    return rec


def _sha256_logical(path: Path) -> str:
    try:
        return sha256_logical(path)
    except PackedError as e:
        raise RefusedError(str(e)) from None


def _require(run: Path, rec: dict, rel: str, why: str) -> None:
    if rel not in rec["files"]:
        raise RefusedError(f"{run / rel} is missing: {why}")


def _require_rankings(run: Path, stage: str, rec: dict, result: dict, methods: list[str]) -> None:
    """Every setting in the stage's result has its rankings; every frozen method has a setting."""
    info = result.get("methods")
    if info is None:
        return
    run_methods = {v.get("group") or v.get("method") for v in info.values() if isinstance(v, dict)}
    for name in methods:
        if name not in run_methods:
            raise RefusedError(f"{run / stage / 'result.json'} has no setting of the frozen method {name!r}; "
                               "the run does not cover the frozen protocol")
    for label in info:
        _require(run, rec, f"{stage}/rankings/{safe_name(label)}.jsonl",
                 f"the {stage} rankings of setting {label!r} (in the stage's result)")


# ---- the held-out split is scored once, even if test/ is deleted ------------------------------------
SCORED_NAME = "test.scored.json"  # written before the test split is scored; never removed by the lab


def test_scored(run: Path) -> dict | None:
    """The run's note that its held-out split was scored (or began to be), or None."""
    path = Path(run) / SCORED_NAME
    if not path.exists():
        return None
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        obj = {}
    return obj if isinstance(obj, dict) else {}


def mark_test_scored(run: Path, at: str, test_record: str | None = None) -> None:
    """Remember that the held-out split of `run` was scored (`test_record`: the sha256 of test/record.json
    once written). Atomic; a run with this note refuses a second test scoring even without test/."""
    body = sealed({"stage": "test-scored", "at": at, "test_record_sha256": test_record})
    tmp = Path(run) / f".{SCORED_NAME}.tmp"
    tmp.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(Path(run) / SCORED_NAME)


# ---- the report: its files are a stage of the chain too --------------------------------------------
REPORT_RECORD = "report.record.json"
REPORT_FILES = ("report.md", "report.html")


def _report_paths(run: Path) -> dict[str, list[Path]]:
    """Recorded name -> its stored forms, of the report's files (a figure's svg may be stored as `.svg.xz`,
    report.html as `report.html.xz`)."""
    paths = {name: found for name in REPORT_FILES if (found := forms(run / name))}
    figs = run / "figures"
    if figs.is_dir():
        for p in sorted(figs.rglob("*")):
            if p.is_file():
                paths.setdefault(recorded_name(p.relative_to(run).as_posix()), []).append(p)
    return paths


def seal_report(run: Path) -> dict:
    """Record the report just written (report.md, report.html, figures/*), linked to test/record.json. A
    compressed form beside a figure just written plain (`lab compress` stored the previous report) is stale
    and removed first, so the report's files are exactly those written."""
    run = Path(run)
    found = _report_paths(run)
    for rel, stored in found.items():
        if (run / rel).is_file():
            for stale in stored:
                if stale != run / rel:
                    stale.unlink()
    files = {rel: sha256_of(run / rel) if (run / rel).is_file() else sha256_logical(run / rel) for rel in found}
    rec = stage_record("report", {f"test/{RECORD_NAME}": sha256_of(run / "test" / RECORD_NAME)}, files)
    tmp = run / f".{REPORT_RECORD}.tmp"
    tmp.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(run / REPORT_RECORD)
    return rec


def verify_report(run: Path) -> dict | None:
    """Check the report's files against their record (None when the run has no report yet): an edited
    number in report.md or report.html, a changed figure (in any stored form), or a report without a
    record is refused."""
    run = Path(run)
    found = _report_paths(run)
    if not found and not (run / REPORT_RECORD).exists():
        return None
    rec = _load(run, REPORT_RECORD, "the report is not covered by the run's record; write it with "
                                    "`sidelight lab report DIR`")
    _check_self(run, REPORT_RECORD, rec, "report")
    if rec.get("stage") != "report" or not isinstance(rec.get("files"), dict):
        raise _altered(run, REPORT_RECORD, "report stage")
    want = {f"test/{RECORD_NAME}": sha256_of(run / "test" / RECORD_NAME)} if (run / "test" / RECORD_NAME).is_file() else {}
    if rec.get("previous") != want:
        raise RefusedError(f"{run / REPORT_RECORD} does not link to this run's test/{RECORD_NAME}; the report "
                           f"was written for other results (rewrite it with `sidelight lab report DIR`)")
    for rel, sha in rec["files"].items():
        if rel not in found:
            raise RefusedError(f"{run / rel} is missing; the report stage recorded it")
        _check_file(run, rel, sha, "report")
    extra = sorted(set(found) - set(rec["files"]))
    if extra:
        raise RefusedError(f"{run / extra[0]} is not in the report's record; the run was altered after it was written")
    return rec


def verify_run(run: Path, through: str = "test") -> dict:
    """Check the chain from freeze.json through `through`; returns {stage: record} (freeze: its JSON)."""
    run = Path(run)
    if through not in STAGES:
        raise ValueError(f"through must be one of {STAGES}, got {through!r}")
    frozen = _load(run, "freeze.json", "run `sidelight lab freeze` first")
    _check_self(run, "freeze.json", frozen, "freeze")
    if not isinstance(frozen.get("methods"), list):
        raise _altered(run, "freeze.json", "freeze stage")
    out = {"freeze": frozen}
    if through == "freeze":
        return out
    dev = _check_stage(run, "dev", {"freeze.json": sha256_of(run / "freeze.json")})
    for name in ("result.json", "selection.json"):
        _require(run, dev, f"dev/{name}", "the dev stage writes it")
    _require_rankings(run, "dev", dev, _load(run, "dev/result.json", "the dev stage writes it"), frozen["methods"])
    out["dev"] = dev
    if through == "dev":
        return out
    test = _check_stage(run, "test", {"dev/record.json": sha256_of(run / "dev" / RECORD_NAME),
                                     "dev/selection.json": _sha256_logical(run / "dev" / "selection.json")})
    _require(run, test, "test/result.json", "the test stage writes it")
    if frozen.get("protocol_data", {}).get("timing"):
        _require(run, test, "test/timings.json", "the frozen protocol times its methods")
    result = _load(run, "test/result.json", "the test stage writes it")
    selected = _load(run, "dev/selection.json", "the dev stage writes it").get("selected")
    if result.get("selection") != selected:
        raise RefusedError(f"{run / 'test' / 'result.json'} was scored with another selection than "
                           f"{run / 'dev' / 'selection.json'}")
    _require_rankings(run, "test", test, result, frozen["methods"])
    out["test"] = test
    return out


def read_rankings(folder: Path) -> dict[str, dict]:
    """label -> qid -> row, from every rankings/*.jsonl (stored plain or compressed, `packed`)."""
    out: dict[str, dict] = {}
    for p in ranking_files(folder):
        with open_text(p) as f:
            for line in f:
                if line.strip():
                    row = json.loads(line)
                    out.setdefault(row.pop("label"), {})[row.pop("qid")] = row
    return out
