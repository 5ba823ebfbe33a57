"""What the commands print around the work: a closed pipe is quiet, a full device is one line,
the app without a terminal says what to run instead, argument mistakes are one line, and a
successful run writes nothing to stderr (no matplotlib or font warnings)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import sim_table, toml_text

from sim import cli
from sim.bounds import MAX_SEED

TINY = Path(__file__).parent / "fixtures" / "tiny.toml"
COMMANDS = {
    "backoff-sim": [sys.executable, "-m", "sim", "run", str(TINY), "--workers", "1"],
    "backoff-simulator": [sys.executable, "-m", "sim.compat", "--config-file", str(TINY)],
}


def _run(argv: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, **kwargs)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_closed_pipe_is_not_an_error(tmp_path: Path, command: str) -> None:
    # `... | head -1`: the reader takes one line and closes the pipe.
    shell = " ".join(f"'{a}'" for a in COMMANDS[command]) + " | head -1; exit ${PIPESTATUS[0]}"
    done = _run(["bash", "-c", shell], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert len(done.stdout.splitlines()) == 1


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_full_stdout_is_one_line_and_exit_1(tmp_path: Path, command: str) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(COMMANDS[command], cwd=tmp_path, stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.splitlines() == ["error: cannot write to standard output: No space left on device"]


def test_the_app_without_a_terminal_suggests_the_headless_command(tmp_path: Path) -> None:
    # Under CI or nohup: stdin, stdout and stderr are not a terminal.
    done = _run([sys.executable, "-m", "tui.main", str(TINY)], tmp_path, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "needs a terminal" in lines[0]
    assert f"backoff-sim run {TINY}" in lines[0]
    assert done.stdout == ""  # no escape codes


def test_replay_without_a_terminal_too(tmp_path: Path) -> None:
    assert cli.main(["run", str(TINY), "--out", str(tmp_path), "--quiet", "--workers", "1"]) == 0
    done = _run([sys.executable, "-m", "tui.main", "replay", str(tmp_path / "Tiny_OCC_events.csv")],
                tmp_path, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "needs a terminal" in done.stderr and done.stdout == ""


def test_version(capsys) -> None:
    from tui.main import main

    for entry in (cli.main, main):
        with pytest.raises(SystemExit) as info:
            entry(["--version"])
        assert info.value.code == 0
        out = capsys.readouterr().out
        assert out.startswith("backoff-sim ") and out.strip().split()[1][0].isdigit()


@pytest.mark.parametrize("argv, words", [
    (["run", "--seed", str(10**30)], f"from 0 to {MAX_SEED}"),
    (["run", "--seed", "9" * 5000], f"from 0 to {MAX_SEED}"),
    (["run", "--seed", "1e30"], f"from 0 to {MAX_SEED}"),
    (["run", "--out", ""], "empty string"),
    (["run", "--workers", "0"], "from 1 to"),
])
def test_argument_errors_are_one_line_that_say_what_is_accepted(argv: list[str], words: str,
                                                                  capsys) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: backoff-sim run: ")
    assert words in err


def test_the_app_refuses_an_empty_out_too(capsys) -> None:
    from tui.main import main

    with pytest.raises(SystemExit) as info:
        main([str(TINY), "--out", ""])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "empty string" in err


def test_a_successful_run_prints_no_warnings(tmp_path: Path) -> None:
    # Characters the bundled fonts lack made matplotlib warn once per glyph on stderr.
    table = sim_table(title="日本語 😀 test", clients=[1, 3], repeat=1,
                      strategies=[{"type": "Constant", "constant": 1.0, "name": "中 ✓ émoji 😀"}])
    config = tmp_path / "glyphs.toml"
    config.write_text(toml_text(table), "utf-8")
    done = _run([sys.executable, "-m", "sim", "run", str(config), "--out", "out", "--workers", "1"],
                tmp_path)
    assert done.returncode == 0
    assert done.stderr == ""
    assert len(list((tmp_path / "out").glob("*.png"))) == 2
