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


def test_the_getting_started_pages_load_and_rate_say_what_they_do() -> None:
    # The page says `load = 0.8` offers 80% of a pool's capacity (a lognormal's mean, not its
    # median) and `rate = 800.0` 800 calls a second, in place of think_time: a user's own
    # service written from it (the walk-through of issue 39) gets the load it asked for.
    from sim.analysis.load import offered_load
    from sim.settings.config import parse_config, parse_toml

    guide = (README.parent / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert "`load = 0.8`" in guide and "`rate = 800.0`" in guide
    base = ('[[simulation]]\ntitle = "Mine"\nclients = [100]\nrepeat = 1\nnetwork_mu = 1.0\n'
            'network_sigma = 0.2\nwork_to_duration = 0.0\ncontrol = "PoolServer"\nworkers = 32\n'
            'service_distribution = "lognormal"\nservice_time = 20.0\nservice_p99 = 80.0\n'
            'workload = "open"\nhorizon = 10000.0\ntimeout = 1000.0\n'
            'strategies = [{ type = "Constant", constant = 0.0, max_attempts = 1 }]\n')
    loaded = offered_load(parse_config(parse_toml(base + "load = 0.8\n")).simulations[0])
    assert abs(loaded.calls / loaded.capacity - 0.8) < 1e-9
    rated = offered_load(parse_config(parse_toml(base + "rate = 800.0\n")).simulations[0])
    assert abs(rated.calls * 1000.0 - 800.0) < 1e-6  # calls per ms, 800 a second
