"""``time_unit``: top level or per simulation, default ms, a short word; the CLI tables, the
PNGs' axes and titles and the overload outputs say it, with goodput per time unit."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from support import sim_process, sim_table

from sim.commands import cli
from sim.runs.sweep import run_sweep
from sim.settings.config import parse_config
from sim.vocabulary.errors import ConfigError
from sim.export.overload_plots import latency_figure, timeseries_figure
from sim.export.plots import metrics_figure, scatter_figure
from sim.export.runs import representative_runs
from sim.report.latency import latency_table
from sim.report.tables import history_table, metrics_table
from sim.vocabulary.units import display_scale, format_duration, format_speed, time_unit_problem

FIXTURES = Path(__file__).parent / "fixtures"
TICKS = FIXTURES / "tiny_ticks.toml"
MS_WORDS = re.compile(r"\bms\b|milliseconds|per second")


def _config(**top):
    return parse_config({**top, "simulation": [sim_table(title="a"), sim_table(title="b", time_unit="s")]})


def test_default_top_level_and_per_simulation() -> None:
    assert [s.time_unit for s in _config().simulations] == ["ms", "s"]
    assert [s.time_unit for s in _config(time_unit="tick").simulations] == ["tick", "s"]
    assert _config(time_unit="tick").with_seed(3).simulations[0].time_unit == "tick"


@pytest.mark.parametrize("bad", ["", "two words", "ms/2", 5, "x" * 13, "_"])
def test_a_bad_time_unit_is_one_line(bad) -> None:
    with pytest.raises(ConfigError) as info:
        _config(time_unit=bad)
    message = str(info.value)
    assert "\n" not in message and "time_unit" in message and '"tick"' in message


def test_a_bad_time_unit_exits_2_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(TICKS.read_text("utf-8").replace('time_unit = "tick"', 'time_unit = "1 tick"'))
    proc = sim_process("run", str(path), "--out", str(tmp_path))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "time_unit" in proc.stderr


def test_unit_helpers() -> None:
    assert time_unit_problem("tick") is None and time_unit_problem("µs") is None
    assert display_scale(20_000, "ms") == ("s", 1000.0)
    assert display_scale(20_000, "tick") == ("tick", 1.0)  # only ms is rescaled
    assert format_duration(15, "tick") == "15 ticks" and format_duration(1, "tick") == "1 tick"
    assert format_duration(300, "ms") == "300 ms" and format_duration(30_000, "ms") == "30 s"
    assert format_speed(20, "tick") == "20 tick/s"


@pytest.fixture(scope="module")
def ticks():
    spec = parse_config({"time_unit": "tick", "simulation": [
        sim_table("QueueServer", title="T", clients=[20], repeat=2, concurrency=2,
                  service_time=3.0, queue_size=0, reject_delay=1.0, overload_threshold=6,
                  workload="spike", spike_fraction=0.2, spike_width=5.0, arrival_window=100.0,
                  horizon=400.0, network_mu=0.0, network_sigma=0.0)]}).simulations[0]
    return run_sweep(spec, workers=1)


def _text(renderable) -> str:
    console = Console(record=True, width=200, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_cli_tables_say_the_unit(ticks) -> None:
    text = _text(latency_table(ticks))
    words = " ".join(text.split())  # the caption wraps where its words fall
    assert "times in tick" in text and "goodput/tick" in text and "per tick" in words
    assert not MS_WORDS.search(text)
    run = representative_runs(ticks.spec)["FullJitteredExpo"]
    assert "time (tick)" in _text(history_table(run.history, time_unit="tick"))
    contention = run_sweep(parse_config({"simulation": [sim_table(time_unit="s")]}).simulations[0],
                           workers=1)
    assert "duration (s)" in _text(metrics_table(contention))


def _figure_text(fig) -> str:
    parts = [fig._suptitle.get_text() if fig._suptitle else ""]
    for ax in fig.axes:
        parts += [ax.get_xlabel(), ax.get_ylabel(), ax.get_title(), ax.get_title("left")]
    return " | ".join(parts)


def test_png_axes_and_titles_say_the_unit(ticks) -> None:
    runs = representative_runs(ticks.spec)
    texts = {"metrics": _figure_text(metrics_figure(ticks)),
             "scatter": _figure_text(scatter_figure(ticks, runs)),
             "timeseries": _figure_text(timeseries_figure(ticks)),
             "latency": _figure_text(latency_figure(ticks))}
    for name, text in texts.items():
        assert "tick" in text, name
        assert not MS_WORDS.search(text) and "time units" not in text, (name, text)
    assert "duration (tick)" in texts["metrics"] and "time (tick)" in texts["scatter"]
    assert "latency (tick)" in texts["latency"] and "time (tick)" in texts["timeseries"]


def test_spike_example_is_in_ticks() -> None:
    from sim.settings.config import load_config

    spec = load_config(Path(__file__).parents[1] / "examples" / "spike_queue.toml").simulations[0]
    assert spec.time_unit == "tick"


def test_cli_run_on_a_tick_config_never_says_ms(tmp_path: Path, capsys) -> None:
    assert cli.main(["run", str(TICKS), "--out", str(tmp_path), "--workers", "1"]) == 0
    printed = capsys.readouterr().out
    assert "goodput/tick" in printed and "time (tick)" in printed
    assert "backoff-sim replay --time-unit tick " in printed
    assert not MS_WORDS.search(printed)
