"""Fusion picks its side: among single lanes and fused methods, the dev split chooses, and a fused
method is chosen only when it beats every single lane on dev; a graph method only when its links help.

A protocol names the candidates (labels of its own, dev-selected methods) and which of them are
single lanes:

    "pick": {"name": "picked", "singles": ["bm25", "dense-adapted"], "fused": ["rrf-adapted", ...],
             "graph": {"controls": {"bm25+ppr": "bm25+ppr:rewire"}, "margin": 0.0}, "incumbent": "bm25"}

The rule, on the dev primary metric: the best single lane wins unless some fused label is strictly
better; ties go to the single lane, then to the order listed. A graph candidate (a key of
`graph.controls`, a method that reads the link graph) stays a candidate only when, on dev, it is
strictly better than the best candidate that reads no graph AND the paired family bootstrap interval
of (graph − the mean of its rewired-graph controls), at the protocol's confidence, has its lower bound
above `margin` (`GraphGate`): a graph method that a degree-preserving random graph serves as well
does not move a default, however small its dev lead over BM25. An `incumbent` (a candidate's label, e.g.
the global default at its fixed setting) stays the pick unless the candidate the rule above chose leads
it on dev with a paired family bootstrap interval, at the protocol's confidence, whose lower bound is
above zero: questions drawn from a collection's own text favour some settings (`lab auto`'s probe
favours lexical weight), so a small dev lead does not move a default that was chosen on questions
people wrote (bench/probe_rules.py measured the rules on notes-v1's dev split). On test the picked setting is scored
again under the pick's name, and contrasted with every candidate, so a reader sees its margin over
each component. Nothing here looks at test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

import numpy as np

from pydantic import ValidationError

from ..errors import InputError
from .analysis import contrast_vectors, family_vector, group_mean_vector
from .schema import GraphGate

if TYPE_CHECKING:
    from .benchmark import Benchmark


def graph_gate(spec: dict | None) -> GraphGate | None:
    """The pick's graph gate as the protocol's schema reads it (`schema.GraphGate`, validated with the
    whole protocol when it is loaded; a spec handed here directly is checked the same way)."""
    if not spec:
        return None
    try:
        return GraphGate.model_validate(spec)
    except ValidationError as exc:
        raise InputError(f"pick.graph: {exc.errors()[0]['msg']}, got {spec!r}") from None


def check_pick(spec: dict | None, labels: set[str], where: str) -> None:
    """The pick section names only methods the protocol runs, and at least one single lane (one that
    reads no graph, when the pick gates graph methods)."""
    if spec is None:
        return
    if not isinstance(spec.get("name"), str) or spec["name"] in labels:
        raise InputError(f"{where}: pick needs a 'name' that is not a method's")
    singles, fused = spec.get("singles") or [], spec.get("fused") or []
    if not singles:
        raise InputError(f"{where}: pick needs at least one single lane in 'singles'")
    gate = graph_gate(spec.get("graph"))
    graph = [*gate.controls, *gate.controls.values()] if gate else []
    unknown = [x for x in singles + fused + graph if x not in labels]
    if unknown:
        raise InputError(f"{where}: pick names {unknown[0]!r}, which is not a method the protocol runs")
    if gate and not [x for x in singles if x not in gate.controls]:
        raise InputError(f"{where}: pick needs a single lane that reads no graph beside its graph methods")
    if gate and [x for x in gate.controls if x not in singles + fused]:
        raise InputError(f"{where}: pick.graph names a method that is not a candidate")
    incumbent = spec.get("incumbent")
    if incumbent is not None and incumbent not in singles + fused:
        raise InputError(f"{where}: pick.incumbent {incumbent!r} is not one of the pick's candidates")


#: what the pick keeps of (graph − its rewired controls)'s `contrast_vectors`
REWIRED_KEYS = ("difference", "ci_low", "ci_high", "confidence", "p_sign_flip", "n_families")


def graph_evidence(gate: GraphGate, value: dict[str, float], vectors: Mapping[str, np.ndarray],
                   stats: dict) -> dict[str, dict]:
    """Per graph candidate on dev: its lead over the best non-graph candidate, and (graph − mean of its
    rewired controls) with its paired family bootstrap interval and sign-flip p; `passes` the gate.
    `vectors` holds per-family dev scores of every graph candidate and, under each control name, the
    per-family mean of that control's seeds."""
    plain = [lab for lab in value if lab not in gate.controls]
    best_plain = max(plain, key=lambda lab: (value[lab], -plain.index(lab)))
    out = {}
    for g, control in gate.controls.items():
        if g not in value:
            continue
        c = contrast_vectors(vectors[control], vectors[g], "", stats)
        lead = value[g] - value[best_plain]
        out[g] = {"control": control, "best_plain": best_plain, "lead": lead,
                  "rewired": {k: c[k] for k in REWIRED_KEYS},
                  "margin": gate.margin, "passes": bool(lead > 0 and c["ci_low"] > gate.margin)}
    return out


def dev_vectors(dev: "Benchmark", result: dict, spec: dict, metric: str) -> dict[str, np.ndarray] | None:
    """Per-family dev scores of the pick's graph candidates and, under each control's name, the mean
    over that control's seeds (what `graph_evidence` pairs); with an incumbent, of every candidate too
    (what `incumbent_evidence` pairs); None when the pick gates no graph and has no incumbent."""
    controls = (spec.get("graph") or {}).get("controls") or {}
    if not controls and not spec.get("incumbent"):
        return None
    fams, methods = dev.families(), result["methods"]
    out = {}
    for g, control in controls.items():
        seeds = [lab for lab, m in methods.items() if m["group"] == control]
        if not seeds:
            raise InputError(f"pick.graph: no dev rankings of {control!r}, the controls of {g!r}")
        out[g] = family_vector(dev, methods[g]["per_query"], metric, fams)
        out[control] = group_mean_vector(dev, {lab: methods[lab]["per_query"] for lab in seeds}, seeds, metric, fams)
    if spec.get("incumbent"):
        for lab in spec["singles"] + spec.get("fused", []):
            out.setdefault(lab, family_vector(dev, methods[lab]["per_query"], metric, fams))
    return out


def gate_note(g: str, ev: dict) -> str:
    """One line: why a graph candidate may or may not be picked."""
    r = ev["rewired"]
    interval = (f"beats its rewired controls by {r['difference']:+.4f} "
                f"[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}] on dev")
    if ev["passes"]:
        return f"graph may be picked: {g} leads {ev['best_plain']} by {ev['lead']:+.4f} and {interval}"
    why = [] if ev["lead"] > 0 else [f"leads {ev['best_plain']} by {ev['lead']:+.4f}"]
    if not r["ci_low"] > ev["margin"]:
        why.append(f"{interval} (lower bound not above {ev['margin']:g})")
    return f"graph not picked: {g} " + " and ".join(why)


def incumbent_evidence(incumbent: str, chosen: str, vectors: Mapping[str, np.ndarray], stats: dict) -> dict:
    """(chosen − incumbent) on dev with its paired family bootstrap interval; `holds`: the incumbent stays,
    because the interval's lower bound is not above zero."""
    c = contrast_vectors(vectors[incumbent], vectors[chosen], "", stats)
    return {"incumbent": incumbent, "candidate": chosen, **{k: c[k] for k in REWIRED_KEYS}, "holds": bool(c["ci_low"] <= 0)}


def incumbent_note(ev: dict) -> str:
    interval = f"{ev['difference']:+.4f} [{ev['ci_low']:+.4f}, {ev['ci_high']:+.4f}]"
    if ev["holds"]:
        return (f"the incumbent {ev['incumbent']} stays: {ev['candidate']} leads it on dev by {interval}, "
                "an interval that does not lie above zero")
    return f"{ev['candidate']} replaces the incumbent {ev['incumbent']}: it leads on dev by {interval}"


def pick(spec: dict, dev_overall: dict[str, dict], metric: str, vectors: Mapping[str, np.ndarray] | None = None,
         stats: dict | None = None) -> dict:
    """What the dev split chose, with the margin of the choice over every candidate. With a graph gate
    (`spec["graph"]`) or an incumbent (`spec["incumbent"]`), `vectors` (per-family dev scores, see
    `graph_evidence`, plus the incumbent's and every candidate's) and `stats` (the protocol's seed,
    n_resamples, n_flips, confidence) are required."""
    value = {lab: dev_overall[lab][metric] for lab in spec["singles"] + spec.get("fused", [])}
    gate = graph_gate(spec.get("graph"))
    evidence: dict[str, dict] = {}
    if (gate is not None or spec.get("incumbent")) and (vectors is None or stats is None):
        raise InputError("pick: a graph gate or an incumbent needs per-family dev scores and the protocol's statistics")
    if gate is not None:
        evidence = graph_evidence(gate, value, vectors, stats)  # type: ignore[arg-type]
    barred = {g for g, ev in evidence.items() if not ev["passes"]}
    singles = [lab for lab in spec["singles"] if lab not in barred]
    fused = [lab for lab in spec.get("fused", []) if lab not in barred]
    best_single = max(singles, key=lambda lab: (value[lab], -singles.index(lab)))
    best_fused = max(fused, key=lambda lab: (value[lab], -fused.index(lab))) if fused else None
    fused_wins = best_fused is not None and value[best_fused] > value[best_single]
    chosen = best_fused if fused_wins else best_single
    note = (f"{chosen} beats the best single lane {best_single} on dev by {value[chosen] - value[best_single]:+.4f}"
            if fused_wins else
            f"no fused method beats {best_single} on dev"
            + (f" (best fused {best_fused}: {value[best_fused] - value[best_single]:+.4f})" if best_fused else "")
            + f"; {spec['name']} returns {best_single}'s ranking")
    notes = [gate_note(g, ev) for g, ev in evidence.items()]
    kept = None
    if spec.get("incumbent") and chosen != spec["incumbent"]:
        kept = incumbent_evidence(spec["incumbent"], chosen, vectors, stats)  # type: ignore[arg-type]
        notes.append(incumbent_note(kept))
        chosen = spec["incumbent"] if kept["holds"] else chosen
    return {"name": spec["name"], "chosen": chosen, "best_single": best_single, "best_fused": best_fused,
            "fused_chosen": chosen in spec.get("fused", []), "metric": metric, "dev": value,
            "margins": {lab: value[chosen] - v for lab, v in value.items() if lab != chosen},
            "note": "; ".join([note, *notes]),
            **({"graph": evidence} if gate is not None else {}),
            **({"incumbent": kept} if kept else {})}
