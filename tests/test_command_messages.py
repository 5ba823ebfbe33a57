"""What the commands print around the work: a closed pipe is quiet, a full device or a closed
stdout is one line (``--help`` and ``--version`` too), an ASCII-only stdout gets ASCII glyphs,
a Ctrl-C during the imports is one line, a tiny COLUMNS falls back to a readable width, the app
without a terminal says what to run instead, argument mistakes are one line, and a successful run
writes nothing to stderr (no matplotlib or font warnings)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # pragma: no cover - Python 3.10
    import tomli as tomllib
from support import section, sim_table, toml_text, without_progress

from sim.commands import cli
from sim.vocabulary.bounds import MAX_SEED
from sim.commands.stdout import ASCII_ERRORS, FALLBACK_WIDTH, PIPED_WIDTH, console_width

TINY = Path(__file__).parent / "fixtures" / "tiny.toml"
TINY_MAP = Path(__file__).parent / "fixtures" / "tiny_map.toml"
TINY_OUTAGE = Path(__file__).parent / "fixtures" / "tiny_outage.toml"
COMMANDS = {
    "backoff-sim": [sys.executable, "-m", "sim", "run", str(TINY), "--workers", "1"],
    "backoff-simulator": [sys.executable, "-m", "sim.commands.compat", "--config-file", str(TINY)],
    # Every cell simulated: the default (adaptive) method says on stderr what it simulated, and
    # these tests check that a command's output handling leaves stderr empty otherwise.
    "explore": [sys.executable, "-m", "sim", "explore", str(TINY_MAP), "--workers", "1", "--method", "simulate"],
    "phase": [sys.executable, "-m", "sim", "phase", str(TINY_OUTAGE), "--workers", "1", "--grid", "2",
              "--runs", "1", "--clients", "30"],
}
# backoff-sim's case in the default run; the same output handling through a second or third
# entry point (the same code path) under -m slow.
COMMAND_CASES = ["backoff-sim", *(pytest.param(name, marks=pytest.mark.slow) for name in COMMANDS
                                  if name != "backoff-sim")]
SCRIPTS = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]


def script(name: str, *args: str, before: str = "") -> list[str]:
    """The command line of console script ``name`` as pyproject declares it (the code pip writes
    into bin/, run from this tree), ``before`` run first."""
    module, function = SCRIPTS[name].split(":")
    code = f"{before}\nimport sys\nfrom {module} import {function}\nsys.exit({function}())"
    return [sys.executable, "-c", code, *args]


def _run(argv: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, **kwargs)


@pytest.mark.parametrize("command", COMMAND_CASES)
def test_a_closed_pipe_is_not_an_error(tmp_path: Path, command: str) -> None:
    # `... | head -1`: the reader takes one line and closes the pipe.
    shell = " ".join(f"'{a}'" for a in COMMANDS[command]) + " | head -1; exit ${PIPESTATUS[0]}"
    done = _run(["bash", "-c", shell], tmp_path)
    assert done.returncode == 0, done.stderr
    assert without_progress(done.stderr) == []  # a progress line, on a slow machine, is no error
    assert len(done.stdout.splitlines()) == 1


@pytest.mark.parametrize("command", COMMAND_CASES)
def test_a_full_stdout_is_one_line_and_exit_1(tmp_path: Path, command: str) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(COMMANDS[command], cwd=tmp_path, stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    assert done.returncode == 1
    # A progress line, on a slow machine, is no error.
    assert without_progress(done.stderr) == ["error: cannot write to standard output: No space left on device"]


def test_the_app_without_a_terminal_suggests_the_headless_command(tmp_path: Path) -> None:
    # Under CI or nohup: stdin, stdout and stderr are not a terminal.
    done = _run([sys.executable, "-m", "tui.main", str(TINY)], tmp_path, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "needs a terminal" in lines[0]
    assert f"backoff-sim run {TINY}" in lines[0]
    assert done.stdout == ""  # no escape codes


@pytest.mark.slow  # a second signal or size of a behaviour whose first stays in the default run
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


@pytest.mark.parametrize("typo, command", [("runn", "run"), ("explor", "explore"), ("phas", "phase"),
                                                 ("repaly", "replay")])
def test_a_mistyped_command_gets_did_you_mean(typo: str, command: str, tmp_path: Path, monkeypatch,
                                              capsys) -> None:
    from tui.main import main

    monkeypatch.chdir(tmp_path)
    assert main([typo, "x.toml"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"did you mean `backoff-sim {command}`?" in err


def test_a_word_far_from_any_command_is_still_a_missing_config(tmp_path: Path, monkeypatch, capsys) -> None:
    from tui.main import main

    monkeypatch.chdir(tmp_path)
    assert main(["zzz"]) == 2
    err = capsys.readouterr().err
    assert "zzz: no such file" in err and "did you mean" not in err


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
    assert without_progress(done.stderr) == []
    assert len(list((tmp_path / "out").glob("*.png"))) == 2


@pytest.mark.slow  # a crowded figure's warnings; a successful run's warnings test stays by default
@pytest.mark.parametrize("command", ["run", "explore"])
def test_matplotlib_s_layout_warnings_stay_off_stderr(tmp_path: Path, command: str) -> None:
    # A long title and a dozen long strategy names: "constrained_layout not applied" reached
    # stderr, from the savefig of every figure that could not fit them.
    strategies = [{"type": "Constant", "constant": 0.5 + i, "name": f"constant number {i} with a long name " * 4}
                  for i in range(12)]
    config = tmp_path / "crowded.toml"
    config.write_text(toml_text(sim_table(title="W" * 120, clients=[3], repeat=1, strategies=strategies))
                      + section("explore", {"axes": [{"key": "write_mu", "values": [1.0, 2.0]}]}), "utf-8")
    done = _run([sys.executable, "-m", "sim", command, str(config), "--out", "out", "--workers", "2", "-q"],
                tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert list((tmp_path / "out").glob("*.png"))


@pytest.mark.parametrize("command", COMMAND_CASES)
def test_a_closed_stdout_is_one_line_and_exit_1(tmp_path: Path, command: str) -> None:
    # `>&-`: no stdout at all. The files are written whole (none of them took descriptor 1), and
    # the command says in one line that it could not print, as for a full disk.
    done = _run(["bash", "-c", 'exec "$@" >&-', "--", *COMMANDS[command]], tmp_path)
    assert done.returncode == 1
    assert without_progress(done.stderr) == ["error: cannot write to standard output: it is closed"]
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written and not [n for n in written if n.startswith((".backoff-sim-staging", ".backoff-sim.lock"))]
    for png in tmp_path.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("command", COMMAND_CASES)
def test_an_ascii_only_stdout_gets_ascii_glyphs(tmp_path: Path, command: str) -> None:
    # PYTHONIOENCODING=ascii: ★, ±, ✓ and the others have ASCII stand-ins instead of a crash.
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    done = subprocess.run(COMMANDS[command], cwd=tmp_path, capture_output=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert without_progress(done.stderr.decode("ascii")) == []  # progress lines are ASCII too
    out = done.stdout.decode("ascii")  # nothing else
    assert "?" not in out.replace("(?", "")
    if command == "backoff-sim":
        assert "* best" in out and " +-" in out
    if command == "explore":
        assert "v recovered in >= 90% of the runs" in out


def test_the_ascii_stand_ins_keep_a_table_cell_s_width() -> None:
    text = "│ 13.1 ± 20.9 │ ★ best │ ✓ 1,000–4,000 · ✗ 16,000 │ 日"
    ascii_text = text.encode("ascii", ASCII_ERRORS).decode("ascii")
    assert ascii_text == "? 13.1 +-20.9 ? * best ? v 1,000-4,000 - x 16,000 ? ?"
    assert len(ascii_text) == len(text)


# run's and the app's in the default run; a second and third command (explore, the drop-in) slow.
@pytest.mark.parametrize("name, args", [
    ("backoff-sim", ["run", str(TINY), "--workers", "1"]),
    pytest.param("backoff-sim", ["explore", str(TINY_MAP), "--workers", "1"], marks=pytest.mark.slow),
    ("backoff-sim", [str(TINY)]),
    pytest.param("backoff-simulator", ["--config-file", str(TINY)], marks=pytest.mark.slow),
])
def test_ctrl_c_during_the_imports_is_one_line_and_130(tmp_path: Path, name: str, args: list[str]) -> None:
    # A real SIGINT, sent by the process to itself when the first heavy module (numpy) is about
    # to be imported: the moment a Ctrl-C 0.1 s after the start lands in.
    hook = ("import os, signal, sys\n"
            "class CtrlC:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'numpy':\n"
            "            os.kill(os.getpid(), signal.SIGINT)\n"
            "sys.meta_path.insert(0, CtrlC())")
    done = _run(script(name, *args, before=hook), tmp_path, stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stderr, done.stdout) == (130, "interrupted\n", "")
    assert list(tmp_path.iterdir()) == []


def test_python_m_sim_too(tmp_path: Path) -> None:
    hook = ("import os, runpy, signal, sys\n"
            "class CtrlC:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'numpy':\n"
            "            os.kill(os.getpid(), signal.SIGINT)\n"
            "sys.meta_path.insert(0, CtrlC())\n"
            "sys.argv[1:] = ['run', sys.argv[1]]\n"
            "runpy.run_module('sim', run_name='__main__', alter_sys=True)")
    done = _run([sys.executable, "-c", hook, str(TINY)], tmp_path)
    assert (done.returncode, done.stderr) == (130, "interrupted\n")


HELP_AND_VERSION = [
    script("backoff-sim", "--help"), script("backoff-sim", "--version"),
    script("backoff-sim", "run", "--help"), script("backoff-sim", "explore", "--help"),
    script("backoff-sim", "phase", "--help"),
    script("backoff-simulator", "--help"), [sys.executable, "-m", "sim", "--help"],
]


# Every command line buffered; unbuffered, the first only by default (the others are a second
# signal of the same behaviour) and the rest under -m slow.
@pytest.mark.parametrize("buffered, argv", [
    pytest.param(buffered, argv, id=f"{buffered}-argv{i}",
                 marks=pytest.mark.slow if not buffered and i > 0 else ())
    for buffered in (True, False) for i, argv in enumerate(HELP_AND_VERSION)])
def test_help_and_version_to_a_full_stdout_fail(tmp_path: Path, argv: list[str], buffered: bool) -> None:
    # argparse swallows the write error and exits 0; the entry point still knows.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED" or not buffered}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    with open("/dev/full", "w") as full:
        done = subprocess.run(argv, cwd=tmp_path, stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=120, env=env)
    assert done.returncode == 1
    assert done.stderr.splitlines() == ["error: cannot write to standard output: No space left on device"]


def test_help_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    shell = " ".join(f"'{a}'" for a in script("backoff-sim", "run", "--help")) + " | head -1; exit ${PIPESTATUS[0]}"
    done = _run(["bash", "-c", shell], tmp_path)
    assert (done.returncode, done.stderr) == (0, "")


# Each case runs a whole command (~2 s): every case under -m slow, for the default run's budget.
@pytest.mark.slow
@pytest.mark.parametrize("columns", ["0", "20", "-3", "wide", "99999999999"])
def test_a_tiny_or_bad_columns_falls_back_to_a_readable_width(tmp_path: Path, columns: str,
                                                               monkeypatch, capsys) -> None:
    # COLUMNS=0 printed nothing at all, COLUMNS=20 tables of blank cells.
    argv = ["run", str(TINY), "--out", str(tmp_path), "--workers", "1"]
    assert cli.main([*argv, "--quiet"]) == 0
    listed = capsys.readouterr().out
    monkeypatch.setenv("COLUMNS", columns)
    assert cli.main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().out == listed  # the file list never depends on the width
    assert len(listed.splitlines()) == 12  # 6 files for each of the 2 simulations
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "FullJitteredExpo" in out and "client_requests_write" in out
    tables = [line for line in out.splitlines() if line[:1] in ("┏", "┃", "│", "└")]
    assert tables[0].startswith("┏") and len(tables[0]) == FALLBACK_WIDTH
    assert max(len(line) for line in tables) == FALLBACK_WIDTH


@pytest.mark.parametrize("columns, tty, width", [
    (None, False, PIPED_WIDTH), (None, True, None), ("100", False, 100), ("100", True, 100),
    ("39", True, FALLBACK_WIDTH), ("", False, FALLBACK_WIDTH), (" 60 ", False, 60),
])
def test_console_width(monkeypatch, columns: str | None, tty: bool, width: int | None) -> None:
    class Stream:
        def isatty(self) -> bool:
            return tty

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert console_width(Stream()) == width
