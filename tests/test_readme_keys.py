"""The README's Keys section lists every binding of the app, as the key table says."""

from __future__ import annotations

from pathlib import Path

from tui.keys import COMPARE_KEYS, EXPLORE_KEYS, KEYS, LOG_KEYS
from tui.screens.help import EXTRA_KEYS

README = Path(__file__).parent.parent / "README.md"
CONFIG_REFERENCE = README.parent / "docs" / "config-reference.md"  # README links to it


def keys_section() -> list[str]:
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("## Keys")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    return [line for line in lines[start:end] if line.startswith("| `")]


def test_readme_lists_every_binding_with_its_description() -> None:
    """Every key of ``tui/keys.py`` (the app's, the event log's, the comparison view's and the
    explore map's), in order, then the extras."""
    rows = keys_section()
    expected = [(" ".join(f"`{name}`" for name in key.key_names.split(" ")), key.description)
                for key in (*KEYS, *LOG_KEYS, *COMPARE_KEYS, *EXPLORE_KEYS)]
    expected += [(f"`{keys}`", what) for keys, what in EXTRA_KEYS]
    assert rows == [f"| {keys} | {what} |" for keys, what in expected]


def test_readme_shows_the_screenshot() -> None:
    text = README.read_text(encoding="utf-8")
    assert "![backoff-sim](docs/screenshot.svg)" in text
    svg = (README.parent / "docs" / "screenshot.svg").read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "Locking_Example" in svg


def config_keys_section() -> dict[str, str]:
    """The config reference's key table (docs/config-reference.md): key -> its default as
    written."""
    lines = CONFIG_REFERENCE.read_text(encoding="utf-8").splitlines()
    start = lines.index("### Every key and its default")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("#"))
    rows = [line.split("|") for line in lines[start:end] if line.startswith("| `")]
    return {cells[1].strip().strip("`"): cells[2].strip().strip("`") for cells in rows}


def test_readme_links_the_reference_parts_moved_to_docs() -> None:
    text = README.read_text(encoding="utf-8")
    for name in ("models.md", "config-reference.md", "study-notes.md"):
        assert f"](docs/{name})" in text and (README.parent / "docs" / name).is_file(), name


def test_the_config_reference_lists_every_config_key_with_its_default() -> None:
    from dataclasses import MISSING, fields

    from support import toml_value

    from sim.settings.config import _SIMULATION_KEYS, _TOP_LEVEL_KEYS, DEFAULT_WORK_TO_DURATION
    from sim.models.controls import CONTROLS
    from sim.models.workloads import WORKLOADS

    documented = config_keys_section()
    model_fields = {f.name: f for cls in [*CONTROLS.values(), *WORKLOADS.values()] for f in fields(cls)}
    expected = (_SIMULATION_KEYS | (_TOP_LEVEL_KEYS - {"simulation"}) | set(model_fields))
    assert set(documented) == expected
    assert documented["work_to_duration"] == repr(DEFAULT_WORK_TO_DURATION)
    from sim.vocabulary.units import DEFAULT_TIME_UNIT

    assert documented["time_unit"] == toml_value(DEFAULT_TIME_UNIT)
    for name, f in model_fields.items():  # the models' own defaults, as TOML writes them
        written = "—" if f.default is MISSING else "none" if f.default is None else toml_value(f.default)
        assert documented[name].split("`")[0] == written, name  # a cell may go on: another model's
    # queue_size is 0 for a QueueServer, but an omitted key means unbounded for a PoolServer.
    assert "none: unbounded (`PoolServer`)" in documented["queue_size"]


def test_the_getting_started_page_is_linked_first_and_its_commands_exist() -> None:
    # Issue 39, item 11: a short page from install to "which policy", linked from README's top.
    text = README.read_text(encoding="utf-8")
    page = README.parent / "docs" / "getting-started.md"
    assert page.is_file()
    head = text.split("## ", 1)[0]
    assert "](docs/getting-started.md)" in head
    guide = page.read_text(encoding="utf-8")
    assert "backoff-sim run examples/your_service.toml" in guide
    assert (README.parent / "examples" / "your_service.toml").is_file()
    # Every relative link of the page leads to a file of the repository.
    import re

    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", guide):
        assert (page.parent / target).is_file(), target
