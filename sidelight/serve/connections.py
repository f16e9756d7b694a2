"""The serendipity lane (`sidelight.serendipity`) as served: connections, reveal, verdicts, certificate.

`SerendipityLane` holds the index's serendipity data, loaded on first use, and turns the lane's
refusals into `ApiError`s:

* no serendipity data / certificate for this index yet (`Serendipity.load` refuses): 501
  ``not_available`` with the lane's own message (e.g. "run `sidelight certify INDEX`");
* the certificate failed its placebo test (`CertificateRefused`): 409 ``certificate_refused``;
* reveal with a malformed or changed answer hash (`RevealRefused`): 409 ``reveal_refused``; an
  unknown serendipity trace: 404 ``unknown_trace``.
"""

from __future__ import annotations

import threading

from ..errors import InputError
from ..serendipity import CertificateRefused, Serendipity
from ..serendipity.db import SerDB
from ..serendipity.reveal import RevealRefused, get_floor
from ..serendipity.reveal import connections as ser_connections
from ..serendipity.reveal import reveal as ser_reveal
from ..serendipity.verdicts import ALIASES
from ..serendipity.verdicts import record_verdict as ser_record_verdict
from .validate import ApiError

VERDICTS = sorted(ALIASES)


class SerendipityLane:
    """One index's serendipity lane for the `Service` (thread-safe)."""

    def __init__(self, index) -> None:
        self.index = index
        self.db = SerDB.for_index(index)
        self._ser: Serendipity | None = None
        self._lock = threading.Lock()

    def load(self) -> Serendipity:
        """The index's loaded `Serendipity`, or 501 when it has no serendipity data."""
        with self._lock:
            if self._ser is None:
                try:
                    self._ser = Serendipity(self.index).load()
                except InputError as exc:
                    raise ApiError(501, "not_available", f"the serendipity lane has no data for this index: {exc}",
                                   feature="connections") from None
            return self._ser

    def certificate_status(self) -> dict:
        try:
            ser = self.load()
        except ApiError as exc:
            return {"status": "absent", "reason": exc.message}
        cert = ser.certificate
        if cert is None:
            return {"status": "absent", "reason": "no certificate stored"}
        s = cert.summary or {}
        return {"status": "pass" if cert.passed else "fail", "id": ser.meta.get("certificate", {}).get("id"),
                "target_passes": s.get("target_passes"), "placebo_mean": s.get("placebo_mean"), "rule": s.get("rule")}

    def connections(self, query: str, dial: int, session_id: str, deadline_s: float) -> dict:
        ser = self.load()
        try:
            floor = get_floor(self.index, query, deadline_s=deadline_s)
            return ser_connections(ser, query, dial, session_id, db=self.db, floor=floor)
        except CertificateRefused as exc:
            raise ApiError(409, "certificate_refused", str(exc)) from None
        except InputError as exc:
            raise ApiError(400, "bad_connections", str(exc)) from None

    def reveal(self, trace_id: str, answer_sha256: str) -> dict:
        try:
            return ser_reveal(self.db, trace_id, answer_sha256)
        except RevealRefused as exc:
            raise ApiError(409, "reveal_refused", str(exc)) from None
        except InputError as exc:  # the only other refusal: no such trace
            raise ApiError(404, "unknown_trace", str(exc)) from None

    def record_verdict(self, a_id: str, b_id: str, marker: int, verdict: str, who: str, note: str | None,
                       trace_id: str | None) -> dict:
        try:
            return ser_record_verdict(self.db, a_id, b_id, marker, verdict, who, note, trace_id)
        except InputError as exc:
            raise ApiError(400, "bad_verdict", str(exc)) from None
