"""The Python API checks its arguments (issue 40, item 10): a wrong type is a ``TypeError``, a
value out of range a ``ValueError``, each naming the argument, the value and the range, before
any work; ``bool`` is no whole number; seeds span what ``--seed`` accepts (0 to 2^64 - 1), so a
result's provenance never gives a command the CLI refuses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import sim
from sim.vocabulary.bounds import MAX_SEED

TINY = Path(__file__).parent / "fixtures" / "tiny.toml"


def never_runs(monkeypatch) -> None:
    """The checks come before any work: a sweep here fails the test."""
    import sim.api

    def sweep(*args, **kw):
        raise AssertionError("the arguments were not checked before the sweep")
    monkeypatch.setattr(sim.api, "sweep", sweep)


@pytest.mark.parametrize("seed", [1.5, "1", True, False, None.__class__, 1 + 0j])
def test_a_seed_that_is_no_whole_number_is_a_type_error(seed, monkeypatch) -> None:
    never_runs(monkeypatch)
    with pytest.raises(TypeError, match=r"seed must be a whole number from 0 to 18446744073709551615, got "):
        sim.run(TINY, seed=seed)


@pytest.mark.parametrize("seed", [-1, MAX_SEED + 1, 2**64, 10**100])
def test_a_seed_out_of_range_is_a_value_error(seed, monkeypatch) -> None:
    never_runs(monkeypatch)
    with pytest.raises(ValueError, match=rf"seed must be a whole number from 0 to {MAX_SEED}, got {seed}"):
        sim.run(TINY, seed=seed)


@pytest.mark.parametrize("workers, error", [("2", TypeError), (1.5, TypeError), (True, TypeError),
                                            (0, ValueError), (-1, ValueError), (4097, ValueError)])
def test_workers_out_of_range_or_of_the_wrong_type(workers, error, monkeypatch) -> None:
    never_runs(monkeypatch)
    with pytest.raises(error, match=rf"workers must be a whole number from 1 to 4096, got {workers!r}"):
        sim.run(TINY, workers=workers)


def test_record_explore_and_tune_check_theirs_too(monkeypatch) -> None:
    title = sim.load(TINY).simulations[0].title
    label = sim.load(TINY).simulations[0].labels[0]
    with pytest.raises(TypeError, match="seed must be a whole number"):
        sim.record(TINY, simulation=title, strategy=label, clients=2, seed="3")
    with pytest.raises(TypeError, match="clients must be a whole number"):
        sim.record(TINY, simulation=title, strategy=label, clients=2.0)
    with pytest.raises(TypeError, match="force must be True or False, got 'yes'"):
        sim.record(TINY, simulation=title, strategy=label, clients=2, force="yes")
    for entry in (sim.explore, sim.tune):
        with pytest.raises(ValueError, match="workers must be a whole number from 1 to 4096, got 0"):
            entry(TINY, workers=0)
        with pytest.raises(TypeError, match="progress must be a function"):
            entry(TINY, progress=5)


def test_numpy_whole_numbers_are_whole_numbers() -> None:
    results = sim.run(TINY, seed=np.uint64(7), workers=np.int64(1))
    seed = results.config.simulations[0].seed
    assert seed == 7 and type(seed) is int
