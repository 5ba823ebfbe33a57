"""``backoff-sim serve``: the app in a browser through textual-serve, on loopback only here.

Headless Chromium (``tests/browser.py``) loads the page and the app's first screen is drawn in
its terminal element; a stop signal to the server ends every app process it started. Every wait
is bounded (``HANG_GUARD``) and follows what it waits for (a port that answers, a page that has
drawn, a process that exited), never a clock.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from browser import Browser, distinct_colours
from sim.commands.teardown import descendants
from support import HANG_GUARD, hang_guard, one_error_line, wait_for_exit
from tui.serve import is_loopback, public_url

FIXTURES = Path(__file__).parent / "fixtures"
TINY = FIXTURES / "tiny.toml"
ENTRY = "import sys; from tui.entry import main; sys.exit(main())"  # `backoff-sim` itself

# Keeps every binary frame the page's websocket receives (the app's output, as the terminal
# element is given it), before the page's own script makes its socket.
RECORD_SOCKET = r"""
window.__appText = '';
(function () {
  var Native = window.WebSocket, decoder = new TextDecoder();
  function Recording(url, protocols) {
    var ws = protocols === undefined ? new Native(url) : new Native(url, protocols);
    ws.addEventListener('message', function (e) {
      if (typeof e.data !== 'string') window.__appText += decoder.decode(new Uint8Array(e.data), {stream: true});
    });
    return ws;
  }
  Recording.prototype = Native.prototype;
  window.WebSocket = Recording;
})();
"""
ANSI = re.compile(r"\x1b\[[0-9;?$]*[A-Za-z]|\x1b\][^\x07]*\x07")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def backoff_sim(*args: str, env: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", ENTRY, *args], env=env, text=True, **kwargs)


@contextmanager
def serving(tmp_path: Path) -> Iterator[tuple[subprocess.Popen, int]]:
    """``backoff-sim serve tiny.toml`` on a free loopback port, answering; killed if a test
    leaves it running."""
    port = free_port()
    proc = backoff_sim("serve", str(TINY), "--port", str(port), "--out", str(tmp_path / "exports"),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        with hang_guard(proc):  # a server that never answers is killed: the loop then fails
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    assert proc.poll() is None, proc.stderr.read()
                    time.sleep(0.1)
            yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stderr.close()


def stop_and_check(proc: subprocess.Popen, sig: int) -> None:
    """Stop the server with ``sig``: it exits with 128 + sig and every app it started is gone."""
    apps = descendants(proc.pid)
    assert apps, "no app process was started"
    proc.send_signal(sig)
    assert proc.wait(timeout=HANG_GUARD) == 128 + sig
    assert wait_for_exit(apps) == []


def test_the_browser_draws_the_apps_first_screen_and_sigterm_ends_the_apps(tmp_path: Path) -> None:
    with serving(tmp_path) as (proc, port), Browser(size=(1280, 800)) as browser:
        tab = browser.page("about:blank")
        tab.before_load(RECORD_SOCKET)
        tab.goto(f"http://127.0.0.1:{port}/")
        # The page's script marks the body once the terminal element was written to; the app's
        # first screen has the simulation, server and strategy in its title bar.
        tab.wait_for("document.body.classList.contains('-first-byte')")
        tab.wait_for("document.querySelector('#terminal .xterm-screen canvas') !== null")
        screen = tab.wait_for("window.__appText.indexOf('Event log') >= 0 && window.__appText")
        text = ANSI.sub("", screen)
        assert "Tiny_Locking · LockingServer · Constant" in text
        assert distinct_colours(tab.screenshot(tmp_path / "served.png")) > 20
        stop_and_check(proc, signal.SIGTERM)


# SIGTERM's stop is the first test's; the hang-up and Ctrl-C take the same path (-m slow).
@pytest.mark.parametrize("sig", [pytest.param(signal.SIGHUP, id="SIGHUP", marks=pytest.mark.slow),
                                 pytest.param(signal.SIGINT, id="SIGINT", marks=pytest.mark.slow)])
def test_a_stop_signal_ends_every_app_the_server_started(tmp_path: Path, sig: int) -> None:
    with serving(tmp_path) as (proc, port):
        # Two sessions, as two tabs: two app processes; the sockets stay open after they draw.
        loop = asyncio.new_event_loop()
        try:
            import aiohttp

            async def two() -> list:
                session = aiohttp.ClientSession()
                sockets = []
                for _ in range(2):
                    ws = await session.ws_connect(f"http://127.0.0.1:{port}/ws?width=100&height=30")
                    async for message in ws:
                        if message.type == aiohttp.WSMsgType.BINARY and b"Tiny_Locking" in message.data:
                            break
                    sockets.append(ws)
                return [session, *sockets]

            opened = loop.run_until_complete(asyncio.wait_for(two(), HANG_GUARD))
            assert len([p for p in descendants(proc.pid) if _is_app(p)]) == 2
            stop_and_check(proc, sig)

            async def close() -> None:  # the server is gone: each socket closes at once
                for ws in opened[1:]:
                    await ws.close()
                await opened[0].close()
            loop.run_until_complete(asyncio.wait_for(close(), HANG_GUARD))
        finally:
            loop.close()


def _is_app(pid: int) -> bool:
    try:
        return "tui.entry" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


def test_without_the_extra_serve_says_which_to_install(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked" / "textual_serve"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ImportError('not installed')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocked.parent), os.environ.get("PYTHONPATH", "")])}
    proc = backoff_sim("serve", str(TINY), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=HANG_GUARD)
    assert proc.returncode == 2
    assert one_error_line(err) == "error: backoff-sim serve needs the serve extra: pip install 'backoff-sim[serve]'"


def test_serve_checks_the_config_first(tmp_path: Path) -> None:
    proc = backoff_sim("serve", str(tmp_path / "missing.toml"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=HANG_GUARD)
    assert proc.returncode == 2
    assert "missing.toml" in one_error_line(err)


def test_another_address_is_warned_about(tmp_path: Path) -> None:
    # 192.0.2.1 (TEST-NET-1) is no address of this machine: the warning, then a refusal to
    # listen there, without serving anything.
    proc = backoff_sim("serve", str(TINY), "--host", "192.0.2.1", "--port", str(free_port()),
                       "--out", str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=HANG_GUARD)
    warning, error = err.strip().splitlines()
    assert warning.startswith("warning: serving on 192.0.2.1: anyone who can reach it can run "
                              "simulations and write files where the app writes")
    assert error.startswith("error: cannot listen on 192.0.2.1:")
    assert proc.returncode == 2


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                                ("[::1]", True), ("127.0.0.2", True), ("0.0.0.0", False),
                                                ("::", False), ("192.168.1.5", False), ("example.org", False)])
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_server_on_every_address_sends_browsers_to_the_machines_name() -> None:
    assert public_url("0.0.0.0", 8000) == f"http://{socket.gethostname()}:8000"
    assert public_url("::", 9000) == f"http://{socket.gethostname()}:9000"
    assert public_url("127.0.0.1", 8000) is None  # textual-serve's own: the address as given
