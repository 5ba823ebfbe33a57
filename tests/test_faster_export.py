"""What makes ``backoff-sim run`` faster gives the same files: example runs recorded by the sweep,
tasks split by repetition, a simulation's files written by forked workers, and the events file's
faster formatting."""

from __future__ import annotations

import csv
import io
import pickle
import random
import threading
from pathlib import Path

import numpy as np
import pytest
from support import make_spec

from sim.export import spec_output_paths, write_simulation
from sim.export import parallel
from sim.export.outputs import Job, outputs_for
from sim.export.palette import load_palette
from sim.export.csv_files import csv_row_text, float_texts, format_float
from sim.export.runs import representative_runs, scatter_runs
from sim.runs import sweep
from sim.runs.engine import Run, record_run
from sim.runs.sweep import run_sweeps

# An open simulation (its files include the overload ones) small enough for a default test run.
OPEN = dict(base_latency=100.0, concurrency_limit=30, factor=1.05, k=15.0, workload="poisson",
            think_time=2000.0, horizon=6000.0, timeout=2000.0, clients=[4, 12], repeat=3,
            outages=[{"start": 2000.0, "duration": 1000.0}])
STRATEGIES = [{"type": "Constant", "constant": 100.0, "name": "constant"},
              {"type": "NormalJitterExpo", "min_delay": 100.0, "factor": 2.718, "max_delay": 30000.0,
               "jitter": 0.1, "name": "expo"}]


def _open_spec():
    return make_spec("LatencyServer", STRATEGIES, title="Open", **OPEN)


def test_a_finished_run_crosses_a_process_as_its_history_and_metrics() -> None:
    spec = _open_spec()
    run = record_run(spec, "expo", 12, 0)
    back = pickle.loads(pickle.dumps(run))
    assert back.done and back.step() is None and back.peek() is None
    assert back.run() is back
    assert (back.history.times, back.history.clients, back.history.packed) == \
        (run.history.times, run.history.clients, run.history.packed)
    before, after = run.metrics(), back.metrics()
    assert (after.events, after.work, after.duration, after.successes) == \
        (before.events, before.work, before.duration, before.successes)
    assert np.array_equal(after.latencies, before.latencies)
    going = Run(spec, "expo", 12, 0)
    with pytest.raises(TypeError, match="still going"):
        pickle.dumps(going)


def test_the_sweep_records_the_runs_the_files_show_and_the_metrics_do_not_change() -> None:
    spec = _open_spec()
    plain = run_sweeps([spec], workers=1)[0]
    # Two workers: its 4 tasks are also split by repetition (fewer than 4 a worker), in 8.
    recorded = run_sweeps([spec], workers=2, record=True)[0]
    for name in ("work", "duration", "events", "gave_up", "success_rate"):
        assert np.array_equal(plain.metric(name), recorded.metric(name)), name
    # The example histories (4 clients) and the scatter plot's (12), repetition 0, per strategy.
    assert sorted(recorded.recorded) == [("constant", 4), ("constant", 12), ("expo", 4), ("expo", 12)]
    for (label, n), run in recorded.recorded.items():
        again = record_run(spec, label, n, 0)
        assert run.history.packed == again.history.packed and run.history.times == again.history.times
    assert representative_runs(spec, recorded.recorded)["expo"] is recorded.recorded[("expo", 4)]
    assert scatter_runs(spec, recorded.recorded)["constant"] is recorded.recorded[("constant", 12)]


def test_few_tasks_are_split_by_repetition_into_contiguous_pieces() -> None:
    spec = make_spec("LatencyServer", STRATEGIES[:1], **{**OPEN, "clients": [4], "repeat": 7})
    tasks = sweep._split_by_repetition([sweep._Task(0, 0, 0, spec)], workers=2)
    # Four tasks a worker wanted: 8 pieces, but no more than the 7 repetitions.
    assert [t.repetitions for t in tasks] == [(r, r + 1) for r in range(7)]
    three = sweep._split_by_repetition([sweep._Task(0, s, 0, spec) for s in range(3)], workers=2)
    assert [t.repetitions for t in three if t.strategy == 0] == [(0, 2), (2, 4), (4, 7)]
    many = [sweep._Task(0, 0, k, spec) for k in range(8)]
    assert sweep._split_by_repetition(many, workers=2) == many


def _written(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_files_written_by_forked_workers_are_the_same_bytes(tmp_path: Path, monkeypatch) -> None:
    # A contention simulation (two PNGs, the cheapest set): how the files are written does not
    # depend on the server's kind.
    spec = make_spec("LockingServer", title="Forked", clients=[2, 4])
    result = run_sweeps([spec], workers=1, record=True)[0]
    alone, forked = tmp_path / "alone", tmp_path / "forked"
    alone.mkdir()
    forked.mkdir()
    serial = write_simulation(result, alone)
    # Earlier tests of a whole run leave idle threads in pytest's process (the command has none
    # at this point): fork anyway here, as the command would.
    monkeypatch.setattr(parallel, "can_fork", lambda: True)
    done: list[Path] = []
    in_parallel = write_simulation(result, forked, workers=2, written_one=done.append)
    assert [p.name for p in in_parallel] == [p.name for p in serial]  # in the outputs' order
    assert sorted(done) == sorted(in_parallel)
    a, b = _written(alone), _written(forked)
    assert len(a) == 6 and a == b


def test_several_simulations_written_on_one_set_of_workers_are_the_same_bytes(tmp_path: Path,
                                                                               monkeypatch) -> None:
    """``backoff-sim run`` writes the simulations its pool finished together, the costliest files
    of all first: each simulation's files are those it gets alone, each in its outputs' order."""
    from sim.export import simulation_part, write_simulations

    specs = [make_spec("LockingServer", title="First", clients=[2, 4]), _open_spec()]
    results = run_sweeps(specs, workers=1, record=True)
    alone, together = tmp_path / "alone", tmp_path / "together"
    alone.mkdir()
    together.mkdir()
    serial = [write_simulation(r, alone) for r in results]
    monkeypatch.setattr(parallel, "can_fork", lambda: True)  # as in the test above
    done: list[Path] = []
    written = write_simulations([simulation_part(r, together) for r in results], workers=2,
                                written_one=done.append)
    assert [[p.name for p in paths] for paths in written] == [[p.name for p in paths] for paths in serial]
    assert sorted(done) == sorted(p for paths in written for p in paths)
    a, b = _written(alone), _written(together)
    assert len(a) == sum(len(paths) for paths in serial) and a == b


def test_with_another_thread_running_nothing_is_forked(tmp_path: Path) -> None:
    spec = _open_spec()
    result = run_sweeps([spec], workers=1, record=True)[0]
    outputs = outputs_for(spec)
    job = Job(result, representative_runs(spec, result.recorded), scatter_runs(spec, result.recorded),
              load_palette())
    paths = spec_output_paths(spec, tmp_path)
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not parallel.can_fork()
        assert parallel.write_outputs(job, outputs, paths, workers=2) is None
    finally:
        release.set()
        other.join()
    assert parallel.write_outputs(job, outputs, paths, workers=1) is None  # one worker: no fork
    assert list(tmp_path.iterdir()) == []  # the caller writes them (``write_simulation``)


def test_fast_text_paths_match_the_csv_module_and_repr() -> None:
    def reference(fields: tuple[str, ...]) -> str:
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerow(fields)
        return buffer.getvalue()[:-1]

    for fields in [("a", "b"), ("", ""), ("a", ""), ("a,b", "c"), ('x"y', "z"), ("a\nb", "c"),
                   ("a\rb", "c"), (" a ", "b"), ("",), ("a",), ("a", "b", "c")]:
        assert csv_row_text(fields) == reference(fields), fields
    rng = random.Random(1)
    values = [0.0, -0.0, 5.0, -5.0, 1e11, 1e12, 123456789012.0, 1234567890123.0, 1e-5, 1.5e-7,
              float("nan"), float("inf"), -float("inf"), 1e300, 2.5, 0.1 + 0.2]
    values += [float(rng.randint(-10**13, 10**13)) for _ in range(2000)]
    values += [rng.random() * 10 ** rng.randint(-20, 20) for _ in range(2000)]
    assert float_texts(values) == [format_float(v) for v in values]


def _run_garbage(generation: int | None = None) -> list[str]:
    """The names of what a collection (of ``generation``, or full) frees that a run made: the
    engine's and the models' objects, not other threads' garbage (a test's leftover app or
    cluster may make some)."""
    import gc
    import types

    def of_the_run(obj) -> bool:
        module = obj.__module__ if isinstance(obj, types.FunctionType) else type(obj).__module__
        return isinstance(module, str) and module.startswith("sim.")

    gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection frees is kept in gc.garbage, to look at
    try:
        gc.collect() if generation is None else gc.collect(generation)
        return [getattr(obj, "__qualname__", type(obj).__qualname__) for obj in gc.garbage if of_the_run(obj)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.collect()  # now freed: no name holds them


@pytest.mark.slow  # a memory property, measured in bench/
def test_a_finished_runs_structure_is_freed_by_a_young_collection() -> None:
    """The sweep's runs leave no garbage to the older generations (a worker's memory grew with
    every run until a rare full collection: ~240 MB)."""
    import gc

    from sim.runs import engine

    spec = make_spec("LockingServer", clients=[6])
    gc.collect()
    engine.run_metrics(spec, spec.strategies[0].chain, 6, 0)
    assert gc.isenabled()  # back on after the run
    # The clients let go of the server once the run is over (``Clients.release``): no reference
    # cycle is left, and reference counting has freed the run already.
    assert _run_garbage() == []

    spec = make_spec("LatencyServer", clients=[6], base_latency=10.0, concurrency_limit=12, factor=1.2,
                     k=4.0, workload="poisson", think_time=25.0, horizon=600.0, timeout=30.0)
    gc.collect()
    engine.run_metrics(spec, spec.strategies[0].chain, 6, 0)
    assert len(_run_garbage(0)) > 10  # a replying server's run keeps cycles: its first young collection
    engine.run_metrics(spec, spec.strategies[0].chain, 6, 1)
    gc.collect(0)
    assert _run_garbage() == []  # ... frees them all: none reached an older generation


def test_runs_never_count_the_frozen_objects(monkeypatch) -> None:
    """With objects frozen (the app, or ``backoff-sim run`` writing files), a run leaves the
    collector alone, knowing so from ``sim.commands.collector``: ``gc.get_freeze_count`` counts every
    frozen object, ~3 ms a call, which made in-process sweeps of short runs ten times slower."""
    import gc

    from sim.commands import collector
    from sim.runs.engine import run_metrics

    def counted(*args):
        raise AssertionError("gc.get_freeze_count walks every frozen object")

    monkeypatch.setattr(gc, "get_freeze_count", counted)
    spec = make_spec("LockingServer", clients=[5], repeat=2)
    try:
        collector.freeze()
        assert collector.frozen()
        frozen = run_metrics(spec, spec.strategies[0].chain, 5, 1)
        assert gc.isenabled()  # left as it is
    finally:
        collector.unfreeze()
    assert not collector.frozen()
    assert run_metrics(spec, spec.strategies[0].chain, 5, 1) == frozen


def test_the_command_leaves_its_caller_s_collector_as_it_was(tmp_path: Path) -> None:
    """``backoff-sim run`` freezes what it has loaded while it writes its files, and unfreezes when
    they are in place: a script or a test calling it in its own process gets its collector back."""
    import gc

    from sim.commands import cli, collector

    config = tmp_path / "c.toml"
    config.write_text('[[simulation]]\ntitle = "t"\nclients = [2, 3]\nrepeat = 2\n'
                      'network_mu = 10.0\nnetwork_sigma = 2.0\ncontrol = "LockingServer"\n'
                      'write_mu = 2.0\nwrite_sigma = 1.0\n'
                      'strategies = [{ type = "Constant", constant = 1 }]\n'
                      '[[simulation]]\ntitle = "u"\nclients = [2]\nrepeat = 1\n'
                      'network_mu = 10.0\nnetwork_sigma = 2.0\ncontrol = "LockingServer"\n'
                      'write_mu = 2.0\nwrite_sigma = 1.0\n'
                      'strategies = [{ type = "Constant", constant = 1 }]\n', encoding="utf-8")
    assert cli.main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet", "--workers", "1"]) == 0
    assert not collector.frozen()
    assert gc.get_freeze_count() == 0
