"""Adapter from the served API to the serendipity lane (`sidelight.serendipity`), feature-detected.

The lane lives in its own package, written separately; this module only imports it when present
and translates its errors into `ApiError`s:

* the package (or one of its modules) is missing: 501 ``not_available``;
* the index has no serendipity data / certificate yet (`Serendipity(index).load()` refuses): 501
  ``not_available`` with the lane's own message (e.g. "run `sidelight certify INDEX`");
* the certificate failed its placebo test (`CertificateRefused`): 409 ``certificate_refused``;
* reveal before / without a valid answer hash, or with a changed one (`RevealRefused`): 409
  ``reveal_refused``; an unknown serendipity trace: 404 ``unknown_trace``.
"""

from __future__ import annotations

import threading
from typing import Any

from ..errors import InputError
from .engine import ApiError, not_available

_LOCK = threading.Lock()


def _modules():
    import importlib

    try:  # by module path: the package re-exports a *function* named `reveal` that shadows the module
        R = importlib.import_module("sidelight.serendipity.reveal")
        V = importlib.import_module("sidelight.serendipity.verdicts")
        SerDB = importlib.import_module("sidelight.serendipity.db").SerDB
        Serendipity = importlib.import_module("sidelight.serendipity.store").Serendipity
    except (ImportError, AttributeError):
        return None
    if not all(hasattr(R, n) for n in ("connections", "reveal", "get_floor")) or not hasattr(V, "record_verdict"):
        return None
    return R, V, SerDB, Serendipity


def features() -> dict:
    mods = _modules()
    return {"connections": mods is not None, "reveal": mods is not None, "verdicts": mods is not None}


def _require():
    mods = _modules()
    if mods is None:
        raise not_available("the serendipity lane", "the sidelight.serendipity package (reveal, verdicts, store, db)")
    return mods


def lane(service) -> Any:
    """The index's loaded `Serendipity` (cached on the service), or a 501 saying what is missing."""
    R, V, SerDB, Serendipity = _require()
    with _LOCK:
        ser = getattr(service, "_serendipity", None)
        if ser is None:
            try:
                ser = Serendipity(service.index).load()
            except InputError as exc:
                raise ApiError(501, "not_available", f"the serendipity lane has no data for this index: {exc}",
                               feature="connections") from None
            service._serendipity = ser
        return ser


def certificate_status(service) -> dict:
    if _modules() is None:
        return {"status": "not-available", "reason": "the serendipity lane is not in this build"}
    try:
        ser = lane(service)
    except ApiError as exc:
        return {"status": "absent", "reason": exc.message}
    cert = ser.certificate
    s = getattr(cert, "summary", {}) or {}
    return {"status": "pass" if cert.passed else "fail", "id": ser.meta.get("certificate", {}).get("id"),
            "target_passes": s.get("target_passes"), "placebo_mean": s.get("placebo_mean"), "rule": s.get("rule")}


def connections(service, query: str, dial: int, remaining_s: float, session_id: str = "default") -> dict:
    R, V, SerDB, Serendipity = _require()
    ser = lane(service)
    try:
        floor = R.get_floor(service.index, query, deadline_s=remaining_s)
        return R.connections(ser, query, dial, session_id, db=SerDB.for_index(service.index), floor=floor)
    except InputError as exc:
        if type(exc).__name__ == "CertificateRefused":
            raise ApiError(409, "certificate_refused", str(exc)) from None
        raise ApiError(400, "bad_connections", str(exc)) from None


def reveal(service, trace_id: str, answer_sha256: str) -> dict:
    R, V, SerDB, Serendipity = _require()
    try:
        return R.reveal(SerDB.for_index(service.index), trace_id, answer_sha256)
    except InputError as exc:
        if type(exc).__name__ == "RevealRefused":
            raise ApiError(409, "reveal_refused", str(exc)) from None
        if "unknown" in str(exc):
            raise ApiError(404, "unknown_trace", str(exc)) from None
        raise ApiError(400, "bad_reveal", str(exc)) from None


def verdict_values() -> list[str]:
    mods = _modules()
    return sorted(mods[1].ALIASES) if mods is not None and hasattr(mods[1], "ALIASES") else ["useful", "not useful",
                                                                                              "petunia", "whale"]


def record_verdict(service, a_id: str, b_id: str, marker: int, verdict: str, who: str, note: str | None,
                   trace_id: str | None) -> dict:
    R, V, SerDB, Serendipity = _require()
    try:
        return V.record_verdict(SerDB.for_index(service.index), a_id, b_id, marker, verdict, who, note, trace_id)
    except InputError as exc:
        raise ApiError(400, "bad_verdict", str(exc)) from None
