"""``check --report FILE.html``: the check in one self-contained page (``sim.report.html``): the
verdict, what the command printed, the three CSVs as tables (their very texts) and the config
the battery ran (``check_config.toml``) to download."""

from __future__ import annotations

from pathlib import Path

from sim.check.files import (CONFIG_FILE, INCIDENTS_FILE, LAYERS_FILE, RANGE_FILE, config_text, incidents_csv,
                             layers_csv, range_csv)
from sim.check.outcome import CheckResult, verdict
from sim.check.plan import Plan
from sim.report.html.page import Report, Section, Table


def check_report(result: CheckResult, plan: Plan, printed: list[str], seed: int, path: Path) -> Report:
    from sim.export.provenance import command_line
    from sim.report.html import version

    tables = (Table(LAYERS_FILE, layers_csv(result), "each layer's attempts, and the worst case down to it"),
              Table(INCIDENTS_FILE, incidents_csv(result), "the battery, per arrangement and incident"),
              Table(RANGE_FILE, range_csv(result), "the main knob's values against the battery"))
    section = Section("check", "bs0", tuple(result.changes), tuple(f"{s}: {c}" for s, c in result.changes.items() if c),
                      verdict(result), (), tables, "\n".join(printed) + "\n")
    return Report("backoff-sim check", command_line(), command_line(), version(), (seed,), (section,),
                  CONFIG_FILE, config_text(plan))
