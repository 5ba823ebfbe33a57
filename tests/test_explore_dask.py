"""The same map on Dask (an in-process LocalCluster: no network) gives byte-identical files to
the local pool; progress and cancel behave the same; without distributed, --dask is one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support import CONSTANT, section, sim_table, toml_text
from test_explore_run import lock_doc, open_doc

from sim.commands import cli
from sim.runs.sweep import SweepCancelled
from sim.vocabulary.errors import UserError
from sim.exploration.backends import DaskBackend, LocalBackend
from sim.exploration.cache import CellCache
from sim.exploration.runner import run_explores
from sim.exploration.table import explore_csv_text


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    # processes=False: workers are threads of this process, talking over inproc://, not TCP.
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as c:
        yield c


def test_dask_results_are_byte_identical_to_the_local_pool(client) -> None:
    doc = open_doc([300.0, 900.0], [400.0, 800.0])
    local = run_explores(doc.explores, LocalBackend(2), CellCache(None))[0]
    seen = []
    with DaskBackend(client=client) as backend:
        dask = run_explores(doc.explores, backend, CellCache(None),
                            progress=lambda done, total: seen.append((done, total)))[0]
    assert explore_csv_text(dask) == explore_csv_text(local)
    # Progress counts runs: every (cell, strategy) task adds its repetitions, up to the total.
    total = 4 * 2 * 2
    assert seen[0] == (0, total) and seen[-1] == (total, total)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_dask_cancel_raises_and_finished_cells_stay_cached(client, tmp_path: Path) -> None:
    doc = lock_doc([1.0, 2.0, 4.0, 8.0])
    cache = CellCache(tmp_path)

    def should_stop() -> bool:
        return any(tmp_path.glob("*.json"))

    with DaskBackend(client=client) as backend:
        with pytest.raises(SweepCancelled):
            run_explores(doc.explores, backend, cache, should_stop=should_stop)
    assert 1 <= len(list(tmp_path.glob("*.json"))) <= 4
    with DaskBackend(client=client) as backend:
        resumed = run_explores(doc.explores, backend, cache)[0]
    assert explore_csv_text(resumed) == explore_csv_text(
        run_explores(doc.explores, LocalBackend(1), CellCache(None))[0])


def test_dask_without_distributed_is_one_clear_line(monkeypatch, tmp_path: Path, capsys) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(UserError, match=r"install the extra: pip install .*\[dask\]'"):
        DaskBackend("local").__enter__()
    config = tmp_path / "map.toml"
    config.write_text(_LOCK_MAP, "utf-8")
    assert cli.main(["explore", str(config), "--out", str(tmp_path / "out"), "--dask", "local"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --dask needs") and "[dask]" in err[0] and "pip install" in err[0]


def test_an_unreachable_scheduler_is_one_clear_line() -> None:
    # Port 9 on loopback (discard): nothing listens there, so every connection attempt fails.
    with pytest.raises(UserError) as info:
        DaskBackend("tcp://127.0.0.1:9", connect_timeout=0.5).__enter__()
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("--dask tcp://127.0.0.1:9: cannot reach the scheduler")


_LOCK_MAP = (toml_text(sim_table(title="Lock", clients=[4], strategies=[CONSTANT]))
             + section("explore", {"axes": [{"key": "write_mu", "values": [1.0, 2.0]}]}))
