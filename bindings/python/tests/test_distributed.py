# SPDX-License-Identifier: Apache-2.0
"""Distributed helpers from Python: DTensor boxes and offsets, seeding
policies, digests, and the wrong-rank refusal of version-2 checkpoints."""
import pytest

import rngtrk


def test_dtensor_offsets_and_boxes_match_the_hand_worked_rows():
    assert rngtrk.dtensor_offsets((2, 4), (1, 3), ("S0", "R"), (8, 16)) == (64, 128)
    assert rngtrk.dtensor_offsets((2, 2, 2), (1, 0, 1), ("S1", "R", "S0"), (8, 16)) == (96, 128)
    assert rngtrk.dtensor_offsets((2, 3), (1, 2), ("S0", "S0"), (12, 5), offset=8) == (108, 68)
    assert rngtrk.dtensor_offsets((2, 3), (1, 2), ("S0", "S0"), (12, 5), offset=8, rule="exact") == (60, 68)
    assert rngtrk.dtensor_local_box((2, 3), (1, 2), ("S0", "S0"), (12, 5)) == ((10, 0), (2, 5))
    with pytest.raises(rngtrk.InvalidArgumentError):
        rngtrk.dtensor_local_box((2,), (2,), ("S0",), (8,))
    with pytest.raises(rngtrk.InvalidArgumentError):
        rngtrk.dtensor_offsets((2,), (0,), ("X",), (8,))


def test_seed_rank_digest_and_wrong_rank(tracker):
    tracker.seed_rank("megatron", 1234, tp=3, pp=1, dp=2, ep=1)
    assert tracker.get_default().seed == 1334
    assert tracker.get_state("model-parallel-rng").seed == 1334 + 2718 + 3
    data = tracker.save()
    assert data[8] == 2  # format version 2 records who wrote it
    with rngtrk.Tracker() as other:
        other.seed_rank("megatron", 1234, tp=0, pp=1, dp=2, ep=1)
        before = other.digest()
        with pytest.raises(rngtrk.WrongRankError):
            other.load(data)
        assert other.digest() == before
        other.load(data, any_rank=True)
        assert other.digest() == tracker.digest()
    with rngtrk.Tracker() as replica:  # dp replicas share streams
        replica.seed_rank("megatron", 1234, tp=3, pp=1, dp=0, ep=1)
        replica.load(data)
    with pytest.raises(rngtrk.InvalidArgumentError):
        tracker.seed_rank("jax", 1)


def test_sharded_boxes_drawn_by_trackers_rebuild_the_tensor():
    import numpy
    shape = (6, 10)
    boxes = []
    for r in range(4):
        with rngtrk.Tracker() as t:
            t.manual_seed(5)
            start, local = rngtrk.dtensor_local_box((2, 2), (r // 2, r % 2), ("S0", "S1"), shape)
            boxes.append((start, t.sample_slice(shape, start, local, dist="normal")))
            after = t.digest()
    whole = rngtrk.sample(rngtrk.PhiloxState(5, 0), 60, dist="normal").reshape(shape)
    rebuilt = numpy.empty(shape, dtype=numpy.float32)
    for (r0, c0), b in boxes:
        rebuilt[r0:r0 + b.shape[0], c0:c0 + b.shape[1]] = b
    assert numpy.array_equal(rebuilt, whole)
    with rngtrk.Tracker() as t:
        t.manual_seed(5)
        t.advance(60)
        assert t.digest() == after


def test_policy_and_flag_names_come_from_the_library():
    from rngtrk import distributed
    lib = rngtrk._library.lib
    assert distributed.POLICIES == {"megatron": lib.RNGTRK_POLICY_MEGATRON, "slapo": lib.RNGTRK_POLICY_SLAPO,
                                    "derived": lib.RNGTRK_POLICY_DERIVED}
    assert distributed.POLICY_NAMES == {0: "megatron", 1: "slapo", 2: "derived"}
    assert distributed.FLAG_NAMES == ((lib.RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT, "dp-random-init"),
                                      (lib.RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED, "always-enable-tp-seed"))
    for name, value in distributed.POLICIES.items():
        assert distributed.policy_value(name) == value
    assert rngtrk._library.ffi.NULL == lib.rngtrk_seed_flag_name(3)  # two bits are not one flag's name
    for bad in ("Megatron", "megatron\0", "", 0, None):
        with pytest.raises(rngtrk.InvalidArgumentError, match="megatron, slapo or derived"):
            distributed.policy_value(bad)


def test_a_flag_the_policy_does_not_read_is_refused_by_name_and_changes_nothing(tracker):
    tracker.seed_rank("derived", 9, tp=1, dp_random_init=True)
    before, origin = tracker.save(), tracker.origin()
    for policy, flags, words in (("megatron", {"always_enable_tp_seed": True}, ("megatron", "always-enable-tp-seed")),
                                 ("slapo", {"dp_random_init": True}, ("slapo", "dp-random-init")),
                                 ("derived", {"always_enable_tp_seed": True}, ("derived", "always-enable-tp-seed"))):
        with pytest.raises(rngtrk.InvalidArgumentError) as raised:
            tracker.seed_rank(policy, 9, tp=1, **flags)
        for word in words:
            assert word in str(raised.value)
        assert tracker.save() == before and tracker.origin() == origin
    tracker.seed_rank("slapo", 9, tp=1, always_enable_tp_seed=True)
    assert tracker.origin().flags == ("always-enable-tp-seed",)


def test_megatron_remat_states_are_megatron_lm_mains_in_its_order(tracker):
    # seed + 100 pp (+ 10 dp); gtp-remat = model seed + 65536 (1 + rank);
    # egtp-remat = expert seed + 32768 + 65536 (1 + rank); each only when on.
    import random
    rng = random.Random(7)
    for _ in range(50):
        r = dict(tp=rng.randrange(8), pp=rng.randrange(4), dp=rng.randrange(8), ep=rng.randrange(4),
                 etp=rng.randrange(2), gtp_remat_size=rng.randrange(5), egtp_remat_size=rng.randrange(5))
        r["gtp_remat"] = rng.randrange(r["gtp_remat_size"]) if r["gtp_remat_size"] > 1 else 0
        r["egtp_remat"] = rng.randrange(r["egtp_remat_size"]) if r["egtp_remat_size"] > 1 else 0
        random_init = rng.random() < 0.5
        tracker.seed_rank("megatron", 500, dp_random_init=random_init, **r)
        s = 500 + 100 * r["pp"] + (10 * r["dp"] if random_init else 0)
        model, expert = s + 2718 + r["tp"], s + 1024 + 100 * r["ep"] + r["etp"]
        want = [("data-parallel-rng", s), ("model-parallel-rng", model), ("expert-parallel-rng", expert)]
        if r["gtp_remat_size"] > 1:
            want.append(("gtp-remat-rng", model + 65536 * (1 + r["gtp_remat"])))
        if r["egtp_remat_size"] > 1:
            want.append(("egtp-remat-rng", expert + 32768 + 65536 * (1 + r["egtp_remat"])))
        assert [(n, tracker.get_state(n).seed) for n in tracker.names()] == want
        origin = tracker.origin()
        assert origin.gtp_remat_size == (r["gtp_remat_size"] if r["gtp_remat_size"] > 1 else 0)
        assert origin.egtp_remat == r["egtp_remat"]


def test_remat_refusals_name_the_values_and_change_nothing(tracker):
    tracker.seed_rank("megatron", 5, tp=1, gtp_remat=1, gtp_remat_size=2)
    before, origin = tracker.save(), tracker.origin()
    for policy, rank, words in (("megatron", dict(gtp_remat=4, gtp_remat_size=4), "gtp_remat 4 is outside"),
                                ("derived", dict(egtp_remat=1, egtp_remat_size=1), "egtp_remat 1 with egtp_remat_size 1"),
                                ("slapo", dict(gtp_remat_size=2), "policy slapo has no gtp-remat-rng state")):
        with pytest.raises(rngtrk.InvalidArgumentError, match=words):
            tracker.seed_rank(policy, 5, **rank)
        assert tracker.save() == before and tracker.origin() == origin


def test_version_3_checkpoints_round_trip_and_a_remat_coordinate_alone_is_another_rank(tracker):
    tracker.seed_rank("megatron", 1234, tp=1, gtp_remat=1, gtp_remat_size=4, egtp_remat_size=1)
    with tracker.fork("gtp-remat-rng"):
        tracker.advance(12)
    data = tracker.save()
    assert data[8] == 3
    assert rngtrk.checkpoint_to_json(data).endswith(
        '"rank": {"tp": 1, "pp": 0, "dp": 0, "ep": 0, "etp": 0, "gtp_remat": 1, "gtp_remat_size": 4, '
        '"egtp_remat": 0, "egtp_remat_size": 0}}}')
    with rngtrk.Tracker() as fresh:
        fresh.load(data)
        assert fresh.save() == data
        assert fresh.origin() == rngtrk.Origin("megatron", 1234, (), 1, 0, 0, 0, 0, 1, 4, 0, 0)
    for other, difference in ((dict(gtp_remat=2, gtp_remat_size=4), "gtp_remat 1 vs 2"),
                              (dict(), "gtp_remat on (1 of 4) vs off"),
                              (dict(gtp_remat=1, gtp_remat_size=4, egtp_remat_size=2), "egtp_remat off vs on (0 of 2)")):
        with rngtrk.Tracker() as reader:
            reader.seed_rank("megatron", 1234, tp=1, **other)
            before = reader.save()
            with pytest.raises(rngtrk.WrongRankError, match=difference.replace("(", r"\(").replace(")", r"\)")):
                reader.load(data)
            assert reader.save() == before
            reader.load(data, any_rank=True)
            assert reader.save() == data
