"""The hint for an optional extra is a command that works for this copy: in a clone (this
test's case), ``pip install -e '<checkout>[tune]'``, which pip accepts; ``backoff-sim[tune]``
alone names a package no index has."""

from __future__ import annotations

import shlex
from pathlib import Path

from sim.vocabulary import extras
from sim.exploration.tune import TUNE_EXTRA_HINT

ROOT = Path(__file__).resolve().parent.parent


def test_in_a_clone_the_hint_installs_the_checkout_editable() -> None:
    assert extras.checkout_root() == ROOT
    words = shlex.split(extras.install_command("tune"))
    assert words[:3] == ["pip", "install", "-e"] and words[3] == f"{ROOT}[tune]"
    assert Path(words[3].removesuffix("[tune]"), "pyproject.toml").is_file()
    assert TUNE_EXTRA_HINT == f"install the extra: {extras.install_command('tune')}"


def test_outside_a_checkout_the_hint_names_the_package(monkeypatch) -> None:
    monkeypatch.setattr(extras, "checkout_root", lambda: None)
    assert extras.install_command("dask") == "pip install 'backoff-sim[dask]'"
