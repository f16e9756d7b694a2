"""Fusion picks its side: among single lanes and fused methods, the dev split chooses, and a fused
method is chosen only when it beats every single lane on dev.

A protocol names the candidates (labels of its own, dev-selected methods) and which of them are
single lanes:

    "pick": {"name": "picked", "singles": ["bm25", "dense-adapted"], "fused": ["rrf-adapted", ...]}

The rule, on the dev primary metric: the best single lane wins unless some fused label is strictly
better; ties go to the single lane, then to the order listed. On test the picked setting is scored
again under the pick's name, and contrasted with every candidate, so a reader sees its margin over
each component. Nothing here looks at test.
"""

from __future__ import annotations

from ..errors import InputError


def check_pick(spec: dict | None, labels: set[str], where: str) -> None:
    """The pick section names only methods the protocol runs, and at least one single lane."""
    if spec is None:
        return
    if not isinstance(spec.get("name"), str) or spec["name"] in labels:
        raise InputError(f"{where}: pick needs a 'name' that is not a method's")
    singles, fused = spec.get("singles") or [], spec.get("fused") or []
    if not singles:
        raise InputError(f"{where}: pick needs at least one single lane in 'singles'")
    unknown = [x for x in singles + fused if x not in labels]
    if unknown:
        raise InputError(f"{where}: pick names {unknown[0]!r}, which is not a method the protocol runs")


def pick(spec: dict, dev_overall: dict[str, dict], metric: str) -> dict:
    """What the dev split chose, with the margin of the choice over every candidate."""
    value = {lab: dev_overall[lab][metric] for lab in spec["singles"] + spec.get("fused", [])}
    best_single = max(spec["singles"], key=lambda lab: (value[lab], -spec["singles"].index(lab)))
    fused = spec.get("fused", [])
    best_fused = max(fused, key=lambda lab: (value[lab], -fused.index(lab))) if fused else None
    fused_wins = best_fused is not None and value[best_fused] > value[best_single]
    chosen = best_fused if fused_wins else best_single
    note = (f"{chosen} beats the best single lane {best_single} on dev by {value[chosen] - value[best_single]:+.4f}"
            if fused_wins else
            f"no fused method beats {best_single} on dev"
            + (f" (best fused {best_fused}: {value[best_fused] - value[best_single]:+.4f})" if best_fused else "")
            + f"; {spec['name']} returns {best_single}'s ranking")
    return {"name": spec["name"], "chosen": chosen, "best_single": best_single, "best_fused": best_fused,
            "fused_chosen": fused_wins, "metric": metric, "dev": value,
            "margins": {lab: value[chosen] - v for lab, v in value.items() if lab != chosen}, "note": note}
