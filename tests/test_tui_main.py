"""``backoff-sim`` dispatch: headless ``run`` never imports Textual, and every bad argument,
config or events file is one ``error:`` line and exit status 2 before the app starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import hang_guard

from tui.main import main

TINY = Path(__file__).parent / "fixtures" / "tiny.toml"

PROBE = """
import json, sys
from tui.main import main
status = main(sys.argv[1:])
print(json.dumps({"status": status,
                  "textual": sorted(m for m in sys.modules if m == "textual" or m.startswith("textual."))}))
"""


def test_run_dispatches_headless_without_importing_textual(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE, "run", str(TINY), "--out", str(tmp_path),
                          "--workers", "1", "--quiet"], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report == {"status": 0, "textual": []}
    assert (tmp_path / "Tiny_Locking_events.csv").is_file()
    assert (tmp_path / "Tiny_OCC_metrics.png").is_file()


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")
    return err


def test_config_errors_exit_2_before_the_app(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(TINY.read_text().replace("repeat = ", 'repeat = "many" #', 1))
    assert main([str(bad)]) == 2
    assert "bad.toml" in one_error_line(capsys)
    assert main([str(tmp_path / "missing.toml")]) == 2
    assert "no such file" in one_error_line(capsys)


@pytest.mark.parametrize("content, why", [
    ("", "empty file"),
    ("simulation,strategy\n", "wrong header"),
    ("simulation,strategy,clients,repetition,time,client_id,event_type,event_detail\n"
     "t,Constant,3,0,0.0,0,client_requests_write,\nt,Constant,3,0,1.0,0,client_req", "truncated"),
])
def test_replay_of_a_bad_file_exits_2_with_one_line(tmp_path: Path, capsys, content: str,
                                                     why: str) -> None:
    path = tmp_path / "events.csv"
    path.write_text(content)
    assert main(["replay", str(path)]) == 2
    assert why in one_error_line(capsys)


def test_replay_of_a_missing_file(tmp_path: Path, capsys) -> None:
    assert main(["replay", str(tmp_path / "nope.csv")]) == 2
    assert "no such file" in one_error_line(capsys)


def test_unknown_theme(capsys) -> None:
    assert main(["--theme", "neon"]) == 2
    assert "backoff-contrast" in one_error_line(capsys)


def test_help_names_every_mode(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for words in ("backoff-sim [CONFIG]", "replay FILE", "run [CONFIG]", "--no-animation",
                  "--theme", "--seed", "--workers"):
        assert words in out


def _read_until(fd: int, proc, until) -> bytes:
    """The app's terminal output until ``until(buf, proc)`` holds or the terminal closes (the
    caller's ``hang_guard`` kills a stuck app, which closes it)."""
    import os

    buf = b""
    while not until(buf, proc):
        try:
            chunk = os.read(fd, 65536)  # blocks until the app writes, or the terminal closes
        except OSError:  # the terminal closed with the app
            break
        if not chunk:
            break
        buf += chunk
    return buf


# SIGHUP's clean close in the default run; SIGTERM's, a second signal of it, under -m slow.
@pytest.mark.parametrize("signum", [pytest.param(15, marks=pytest.mark.slow), 1], ids=["SIGTERM", "SIGHUP"])
def test_the_app_closes_cleanly_on_a_stop_signal(tmp_path: Path, signum: int) -> None:
    """By default the signal killed the app mid-screen: terminal left in the alternate screen,
    cursor hidden. Now it closes as q does, restores the terminal and exits 128 + signal."""
    import os
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tui.main", str(TINY), "--workers", "1"],
                            stdin=slave, stdout=slave, stderr=slave, cwd=tmp_path,
                            start_new_session=True)
    os.close(slave)
    try:
        with hang_guard(proc):
            started = _read_until(master, proc, lambda buf, p: b"Tiny_Locking" in buf or p.poll() is not None)
            assert b"Tiny_Locking" in started
            proc.send_signal(signum)
            rest = _read_until(master, proc, lambda buf, p: p.poll() is not None)
            assert proc.wait() == 128 + signum
        assert b"\x1b[?1049l" in rest and b"\x1b[?25h" in rest  # alternate screen left, cursor shown
        assert b"Traceback" not in rest
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
