"""Seed 000: interleaved data distribution over 4 channels x 2 banks, bursts of 2 floats."""

from __future__ import annotations

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model import DramLayout, tiled_matmul_phase
from gpumemlab.model.dram import tiled_matmul_phase_elements


def test_the_seed_storage_table():
    table = DramLayout(channels=4, banks_per_channel=2, burst_bytes=8).table(16)
    assert table == {(0, 0): [0, 1], (1, 0): [2, 3], (2, 0): [4, 5], (3, 0): [6, 7],
                     (0, 1): [8, 9], (1, 1): [10, 11], (2, 1): [12, 13], (3, 1): [14, 15]}


def test_wraps_back_to_bank_0():
    ch, bank = DramLayout().locate([16 * 4, 17 * 4, 24 * 4])
    assert ch.tolist() == [0, 0, 0] and bank.tolist() == [0, 0, 1]


def test_phase_0_of_the_4x4_tiled_matmul_uses_channels_0_and_2():
    r = tiled_matmul_phase(DramLayout(), width=4, tile=2, phase=0)
    assert r["elements"] == {"0,0": [0, 1, 4, 5], "0,1": [0, 1, 4, 5], "1,0": [8, 9, 12, 13], "1,1": [8, 9, 12, 13]}
    assert r["channels"] == [0, 2]
    assert r["banks"] == [[0, 0], [0, 1], [2, 0], [2, 1]]  # both banks of channels 0 and 2
    assert r["channel_utilization_pct"] == 50.0


def test_phase_1_uses_the_other_two_channels():
    assert tiled_matmul_phase(DramLayout(), width=4, tile=2, phase=1)["channels"] == [1, 3]


def test_bad_layouts_and_phases():
    with pytest.raises(UsageError, match="must be positive"):
        DramLayout(channels=0)
    with pytest.raises(UsageError, match="phase 2 is outside 0..1"):
        tiled_matmul_phase_elements(4, 2, 2, (0, 0))
