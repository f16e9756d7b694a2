"""Serendipity lane: sparse-feature markers, certified connections, placebo test, seating dial.

Modules: `chunks` (windows + vectors), `sae` (TopK sparse autoencoder), `markers` (labels),
`certify` (the certificate), `placebo` (placebo corpora), `calibration` (thresholds calibrated on them,
the placebo ratio's interval), `rules` (span, distance, kinship-neighbour rules, per-record cap), `store` (INDEX/serendipity/ stages), `seating` (the
dial), `reveal` (blind mixing, traces, reveal after the answer hash), `verdicts` (human verdicts,
rulings, calibration precision), `db` (ser_* tables in INDEX/state.sqlite).
"""

from .certify import CertConfig, Certificate, run_certificate
from .reveal import RevealRefused, connections, reveal
from .sae import SAE, SAEConfig, train_sae
from .seating import CertificateRefused, select_seats
from .store import Serendipity, SerendipityConfig

__all__ = ["CertConfig", "Certificate", "run_certificate", "RevealRefused", "connections", "reveal", "SAE",
           "SAEConfig", "train_sae", "CertificateRefused", "select_seats", "Serendipity", "SerendipityConfig"]
