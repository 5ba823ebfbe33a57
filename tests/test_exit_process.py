"""How a command's process ends (``sim.commands.entry.exit_process``): at once, without the
interpreter's finalization, yet with every exit handler run and both streams flushed; with
another thread still running, the interpreter's usual exit, which waits for it."""

from __future__ import annotations

import subprocess
import sys

ALONE = """
import atexit, sys
from sim.commands.entry import exit_process
atexit.register(lambda: print("handler ran", flush=False))
sys.stdout.write("buffered ")
sys.stderr.write("to stderr")
exit_process(3)
print("never")
"""

WITH_A_THREAD = """
import threading, time
from sim.commands.entry import exit_process
def late():
    time.sleep(0.2)
    print("the thread finished", flush=True)
threading.Thread(target=late).start()
exit_process(4)
"""


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_the_process_ends_with_the_status_its_handlers_run_and_its_output_flushed() -> None:
    done = _python(ALONE)
    assert done.returncode == 3
    assert done.stdout == "buffered handler ran\n"
    assert done.stderr == "to stderr"


def test_another_thread_still_running_is_waited_for() -> None:
    done = _python(WITH_A_THREAD)
    assert done.returncode == 4
    assert done.stdout == "the thread finished\n"
