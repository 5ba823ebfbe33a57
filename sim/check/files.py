"""The files a check writes into ``--out``, together as one output set (``sim.pipeline.output_set``):
``check_layers.csv``, ``check_incidents.csv``, ``check_range.csv`` and the config they came
from, ``check_config.toml``; numbers as every CSV of the project writes them
(``sim.export.csv_files.format_float``)."""

from __future__ import annotations

from pathlib import Path

from sim.check.outcome import CheckResult
from sim.check.plan import Plan
from sim.export.csv_files import csv_text, format_float

LAYERS_FILE, INCIDENTS_FILE, RANGE_FILE = "check_layers.csv", "check_incidents.csv", "check_range.csv"
CONFIG_FILE = "check_config.toml"  # the battery as a config: `backoff-sim run` it, or open it in the app
CONFIG_COMMENT = """The config backoff-sim check built: the incident battery under the settings as given and
each alternative, one simulation per (settings, incident). `backoff-sim run` on it gives the
check's verdicts (same titles, same seed); `backoff-sim` on it opens them in the app."""
LAYERS_HEADER = ("layer", "source", "attempts", "retries", "amplification", "amplification_simulated")
INCIDENTS_HEADER = ("settings", "incident", "recovered_runs", "runs", "recovery_time_median", "extra_load",
                    "p99", "goodput_lost")
RANGE_HEADER = ("layer", "knob", "value", "recovers_from_every_incident", "incidents_recovered", "incidents")


def layers_csv(result: CheckResult) -> str:
    rows = [[r.layer, r.source, str(r.attempts), str(r.retries), str(r.amplification),
             format_float(r.amplification_simulated)] for r in result.layers]
    last = result.layers[-1]
    attempts = last.amplification  # the product over the layers
    rows.append(["total", "", str(attempts), str(attempts - 1), str(attempts),
                 format_float(last.amplification_simulated)])
    return csv_text(LAYERS_HEADER, rows)


def incidents_csv(result: CheckResult) -> str:
    rows = []
    for r in result.incidents:
        rec = r.recovery
        rows.append([r.settings, r.incident.name, "" if rec is None else str(rec.recovered),
                     "" if rec is None else str(rec.runs), "" if rec is None else format_float(rec.median),
                     format_float(r.figures.extra_load), format_float(r.figures.p99),
                     format_float(r.figures.goodput_lost)])
    return csv_text(INCIDENTS_HEADER, rows)


def range_csv(result: CheckResult) -> str:
    layer, knob = result.knob if result.knob is not None else ("", "")
    rows = [[layer, knob, str(r.value), "true" if r.every else "false", str(r.recovered), str(r.incidents)]
            for r in result.range]
    return csv_text(RANGE_HEADER, rows)


def config_text(plan: Plan) -> str:
    """The comparison config (``check_config.toml``) as TOML text."""
    from sim.check.plan import comparison_data
    from sim.check.toml_text import document

    return document(comparison_data(plan), CONFIG_COMMENT)


def write_config(plan: Plan, out: Path) -> Path:
    from sim.export.atomic import atomic_write_text, ensure_output_dir

    ensure_output_dir(out)
    return atomic_write_text(out / CONFIG_FILE, config_text(plan))


def write_files(result: CheckResult, plan: Plan, out: Path) -> list[Path]:
    """The three CSVs and the config they came from, as one output set (``sim.pipeline.output_set``:
    staged, then committed together, so a stop leaves the previous set whole); the paths written."""
    from sim.export.atomic import atomic_write_text
    from sim.pipeline import output_set

    texts = {LAYERS_FILE: layers_csv(result), INCIDENTS_FILE: incidents_csv(result), RANGE_FILE: range_csv(result),
             CONFIG_FILE: config_text(plan)}
    with output_set(out, last=True) as staging:
        staging.add([atomic_write_text(staging.dir / name, text) for name, text in texts.items()])
    return [out / name for name in texts]
