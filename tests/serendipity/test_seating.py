import numpy as np
import pytest

from sidelight.errors import InputError
from sidelight.serendipity.seating import MAX_DIAL, rng_for, select_seats


def make_pairs():
    """Floor = records 0..4. Markers 10..15, each with pairs from the floor to off-floor records."""
    rows = [
        (0, 20, 10, (1, 1)), (1, 21, 10, (1, 1)),  # marker 10: two pairs
        (0, 22, 11, (1, 0)),
        (2, 23, 12, (1, 1)),
        (3, 24, 13, (1, 0)),
        (1, 2, 14, (1, 1)),  # both ends on the floor
        (4, 25, 15, (1, 1)),  # marker 15 will be outside the profile
        (30, 31, 10, (1, 1)),  # touches nothing
    ]
    a, b, f, s = zip(*rows)
    return {"a": np.array(a), "b": np.array(b), "marker": np.array(f), "signature": np.array(s, dtype=np.int8)}


FLOOR = {0, 1, 2, 3, 4}
PROFILE = {10, 11, 12, 13, 14}


def test_one_seat_per_marker_and_no_padding():
    s = select_seats(make_pairs(), FLOOR, PROFILE, MAX_DIAL, {}, rng_for(1, "q", "seats"))
    markers = [x.marker for x in s.seats]
    assert len(markers) == len(set(markers)) == 4  # 10, 11, 12, 13 — never padded to the dial
    assert s.shortfall == MAX_DIAL - 4 and s.eligible_markers == 4 and s.eligible_pairs == 5
    assert s.both_on_floor == 1 and s.outside_profile == 1 and s.touching == 7
    assert all(x.floor_pos in FLOOR and x.seated_pos not in FLOOR for x in s.seats)
    assert "undersubscribed: only 4 distinct marker(s) were eligible" in s.header()
    assert s.header().startswith(f"seating: {MAX_DIAL} seat(s) offered, 4 filled, one per marker")


def test_ruled_out_and_dial_zero():
    s = select_seats(make_pairs(), FLOOR, PROFILE, 3, {}, rng_for(1, "q", "seats"), ruled_markers={10, 11})
    assert {x.marker for x in s.seats} == {12, 13} and s.ruled_out == 3 and s.shortfall == 1
    assert "3 ruled out as not useful" in s.header()
    assert select_seats(make_pairs(), FLOOR, PROFILE, 0, {}, rng_for(1, "q", "seats")).seats == []
    with pytest.raises(InputError):
        select_seats(make_pairs(), FLOOR, PROFILE, 29, {}, rng_for(1, "q", "seats"))


def test_identical_seeds_identical_seats():
    runs = [[(x.marker, x.seated_pos) for x in select_seats(make_pairs(), FLOOR, PROFILE, 2, {}, rng_for(7, "q", "seats")).seats]
            for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]
    many = {tuple((x.marker, x.seated_pos) for x in select_seats(make_pairs(), FLOOR, PROFILE, 2, {},
                                                                 rng_for(seed, "q", "seats")).seats) for seed in range(30)}
    assert len(many) > 1  # the draw does depend on the seed


def test_leximin_across_a_session():
    usage: dict[int, int] = {}
    seen = []
    for turn in range(4):
        s = select_seats(make_pairs(), FLOOR, PROFILE, 1, usage, rng_for(turn, "q", "seats"))
        m = s.seats[0].marker
        assert usage.get(m, 0) == min(usage.get(x, 0) for x in (10, 11, 12, 13))
        usage[m] = usage.get(m, 0) + 1
        seen.append(m)
    assert sorted(seen) == [10, 11, 12, 13]  # every marker once before any twice


def test_spread_across_signature_classes():
    s = select_seats(make_pairs(), FLOOR, PROFILE, 2, {}, rng_for(3, "q", "seats"))
    assert len({x.signature for x in s.seats}) == 2


def test_heart_of_gold_numbers():
    """The numbers the serendipity seed document (heart-of-gold-serendipity.txt) specifies, each defined once."""
    from sidelight.methods.floor import DEFAULT_N, DEFAULT_POOL
    from sidelight.serendipity import certify as C
    from sidelight.serendipity.verdicts import CALIBRATION_SIZE
    from sidelight.serve.validate import MAX_DIAL as SERVED_MAX_DIAL

    assert (DEFAULT_POOL, DEFAULT_N) == (376, 28)  # "a pool of 376 chunks", "the top 28 form the floor"
    assert MAX_DIAL == SERVED_MAX_DIAL == 28  # "up to 28 seats"
    assert (C.MIN_CHANCE, C.MAX_SHARED_SPAN, C.MIN_DISTANCE) == (28.0, 28, 3)
    cfg = C.CertConfig()
    assert (cfg.min_chance, cfg.max_shared_span, cfg.min_distance, cfg.seed) == (28.0, 28, 3, 28)
    assert CALIBRATION_SIZE == 129  # "A set of 129 pairs was reserved for human calibration"
