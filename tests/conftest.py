"""Shared fixtures. Slow tests carry ``@pytest.mark.slow`` in their own files (a parametrized
case: ``pytest.param(..., marks=pytest.mark.slow)``), each with a comment saying why: the default
run's budget (5 minutes on 2 cores, DEVELOPERS.md) keeps one case of a behaviour, and a variant of
it (another entry point, signal, theme, size or parameter of the same code path), a statistical
check or a long walk whose main case stays runs with ``pytest -m slow`` instead; they must pass.
Some are snapshot tests: update snapshots with ``pytest -m "slow or not slow" --snapshot-update``
(in the default run their snapshots count as unused, and an update there would delete them).
"""

from __future__ import annotations

import os

import pytest

# No test reads or fills the user's sweep cache (``sim.exploration.cache.SweepCache``), nor sees
# another test's sweeps (or its own, done again under a patched engine) served from it; the
# cache's own tests give it a directory of their own. Set at import, so that the session's
# fixtures and the subprocesses of every test inherit it.
os.environ["BACKOFF_SIM_CACHE"] = "off"


def _export_csvs(spec) -> dict[str, str]:
    """Every CSV the export writes for ``spec``, by suffix, as written (the PNGs are left out:
    drawn from the same numbers, they cost most of the time); its sweep in this process."""
    from sim.export.outputs import Job, outputs_for
    from sim.export.palette import load_palette
    from sim.export.runs import representative_runs, scatter_runs
    from sim.runs.sweep import run_sweep

    result = run_sweep(spec, workers=1)
    runs = representative_runs(spec)
    scatter = runs if spec.representative_clients() == spec.max_clients else scatter_runs(spec)
    job = Job(result, runs, scatter, load_palette())
    return {o.suffix: o.text(job) for o in outputs_for(spec) if o.text is not None}


@pytest.fixture
def export_csvs():
    """``export_csvs(spec)``: the CSVs a simulation's export writes (the fast-path tests compare
    the compiled kernels' with the reference engine's byte for byte)."""
    return _export_csvs


_REFERENCE_CSVS: dict[tuple[str, str], dict[str, str]] = {}  # by (kernel module, title): made once


def _kernel_matches_reference(spec, module, plain_source: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Export ``spec`` by the reference engine (once per session) and by the kernel ``module``
    (``sim.kernels``: its ``run`` as the engine runs it, or its plain source), and compare every
    CSV byte for byte."""
    from sim.kernels import jit
    from sim.runs import fast

    key = (module.__name__, spec.title)
    if key not in _REFERENCE_CSVS:
        monkeypatch.setattr(fast, "kernel_fits", lambda spec, chain, clients: False)
        _REFERENCE_CSVS[key] = _export_csvs(spec)
    reference = _REFERENCE_CSVS[key]
    monkeypatch.setattr(fast, "kernel_fits", lambda spec, chain, clients: fast.kernel_expresses(spec, chain))
    chosen = jit.plain(module.run) if plain_source else module.run
    calls = []

    def counted(*args):
        calls.append(1)
        return chosen(*args)
    monkeypatch.setattr(module, "run", counted)
    fastest = _export_csvs(spec)
    assert calls  # the kernel did run (in this process: the sweep has one worker)
    # A server that keeps series writes its latency table and time series too.
    kinds = ("events", "latency", "metrics", "runs", "timeseries") if spec.caps.keeps_series else \
        ("events", "metrics", "runs")
    assert set(reference) == {f"_{kind}.csv" for kind in kinds}
    assert fastest.keys() == reference.keys()
    for name, data in reference.items():
        assert fastest[name] == data, name


@pytest.fixture
def kernel_matches_reference(monkeypatch: pytest.MonkeyPatch):
    """``kernel_matches_reference(spec, module, plain_source)``: a kernel's CSVs are the
    reference engine's, byte for byte (``_kernel_matches_reference``)."""
    return lambda spec, module, plain_source: _kernel_matches_reference(spec, module, plain_source, monkeypatch)


@pytest.fixture(autouse=True)
def _kernels_not_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a fresh process does, the compiled kernels not loaded: a sweep that
    loads them (``fast.warm_up``) sends every later run a kernel expresses to it in this
    process, and tests that look inside the reference engine's runs would find none."""
    from sim.runs import fast

    monkeypatch.setattr(fast, "_warm", False)
    monkeypatch.setattr(fast, "_loaded", set())


@pytest.fixture(autouse=True)
def _kernels_not_built_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that runs a headless command in this process (``cli.main``) asks for the kernels
    built ahead of time (``sim.kernels.ahead.enable``): the next starts without them, as the
    app and the library do."""
    from sim.kernels import ahead

    monkeypatch.setattr(ahead, "_enabled", False)
    monkeypatch.setattr(ahead, "_found", {})


@pytest.fixture(scope="session")
def outage_report(tmp_path_factory) -> tuple:
    """``backoff-sim run tiny_outage.toml --report``, once for the report's tests (plain and in
    the browser): the output folder and the report. In a process of its own: a sweep here would
    outlive the kernels' per-test reset above."""
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path_factory.mktemp("outage_report")
    report = out / "shared" / "report.html"
    config = Path(__file__).parent / "fixtures" / "tiny_outage.toml"
    done = subprocess.run([sys.executable, "-m", "sim", "run", str(config), "--out", str(out), "-j", "1",
                           "--quiet", "--report", str(report)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out, report
