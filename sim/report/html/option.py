"""``--report FILE.html``, shared by ``run``, ``explore`` and ``phase``: the flag, its check before
any work, and the line that says where the report went. Light: no matplotlib, no page code."""

from __future__ import annotations

import argparse
from pathlib import Path

from sim.vocabulary.errors import UserError


def report_path(text: str) -> Path:
    """An argparse type for ``--report``: a file's path (not empty, no NUL, not a directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a file, got an empty string (e.g. --report report.html)")
    if "\0" in text:
        raise argparse.ArgumentTypeError("must not contain a NUL character")
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory: name a file in it (e.g. {path / 'report.html'})")
    return path


def add_report_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--report", metavar="FILE.html", type=report_path, default=None,
                        help="also write one self-contained HTML file with the verdict, tables, "
                             "charts and config, to open in any browser offline")


def check_report_path(path: Path | None) -> None:
    """Before any work: the report's directory exists (created if needed) and takes files, and
    its name is not too long, so a long sweep does not end in a refusal."""
    if path is None:
        return
    from sim.export.atomic import ensure_output_dir
    from sim.export.names import out_dir_problem

    problem = out_dir_problem(str(path))
    if problem:
        raise UserError(f"--report {path}: {problem}")
    try:
        ensure_output_dir(path.parent)
    except UserError as exc:
        raise UserError(f"--report {path}: {exc}") from None
