"""textual-serve's server, with the app processes it starts tracked, so that a stop ends them.

Imported only once ``tui.serve`` has found the ``serve`` extra. textual-serve starts one app
process per browser session (``AppService``) and stops it when the browser leaves; on SIGINT or
SIGTERM it leaves the web server, but a session's app may outlive it, and SIGHUP it does not
handle at all. Here every app process is recorded as it starts; a stop signal (any of the
three) sends each SIGTERM, closes the browsers' connections, leaves the web server, and kills
what is still running after a moment (``sim.commands.teardown``), the exit status 128 + the signal's.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from typing import Any

from aiohttp import web
from aiohttp.web_runner import GracefulExit
from textual_serve import server as textual_server
from textual_serve.app_service import AppService

# After a stop signal: each browser's answer to the close is awaited CLOSE_SECONDS at most, the
# sessions' handlers SHUTDOWN_SECONDS, the apps' own exit GRACE_SECONDS; STOP_SECONDS bounds it
# all (``sim.commands.teardown.arm_exit_deadline``), whatever the shutdown meets.
CLOSE_SECONDS = 0.5
SHUTDOWN_SECONDS = 1.5
GRACE_SECONDS = 1.0
STOP_SECONDS = 5.0
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))

# The app processes of open sessions, and the sessions (to close their connections on a stop).
_sessions: set[TrackedAppService] = set()


class TrackedAppService(AppService):
    """textual-serve's session: one app process, recorded while it runs."""

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
        process = await super()._open_app_process(width, height)
        _sessions.add(self)
        return process

    async def stop(self) -> None:
        await super().stop()
        _sessions.discard(self)

    async def exited(self, seconds: float) -> None:
        """Wait at most ``seconds`` for the app process to end."""
        process = self._process
        if process is not None:
            try:
                await asyncio.wait_for(process.wait(), seconds)
            except asyncio.TimeoutError:
                pass  # killed once the web server has stopped (``end_app_processes``)

    def terminate(self) -> None:
        """SIGTERM the app process (the app closes as ``q`` does), if it still runs."""
        process = self._process
        if process is not None and process.returncode is None:
            try:
                process.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass


# The one seam: textual-serve's server makes each session with the ``AppService`` its module
# names; this process serves only the app, so the module's name is ours.
textual_server.AppService = TrackedAppService


async def _close(session: TrackedAppService) -> None:
    try:
        await asyncio.wait_for(session.remote_close(), CLOSE_SECONDS)
    except Exception:  # noqa: BLE001 - a browser gone or silent: its connection is dropped anyway
        pass


class AppServer(textual_server.Server):
    """The server of ``backoff-sim serve``: textual-serve's, stopped by any stop signal with
    every app process it started."""

    stopped_by: int | None = None

    async def on_startup(self, app: web.Application) -> None:
        self.console.print(f"backoff-sim serve: open {self.public_url} in a browser "
                           "(Ctrl-C stops the server and every app it started)", highlight=False)

    async def on_shutdown(self, app: web.Application) -> None:
        """Before the web server waits for its sessions: end their apps and close their
        connections, waiting at most ``CLOSE_SECONDS`` for each browser's answer (a browser that
        does not answer would hold the close for aiohttp's 10 s)."""
        sessions = list(_sessions)
        for session in sessions:
            session.terminate()
        await asyncio.gather(*(_close(session) for session in sessions))
        # Each app closing as ``q`` does, while the web server waits: then nothing is left to kill.
        await asyncio.gather(*(session.exited(GRACE_SECONDS) for session in sessions))

    def _stop(self, signum: int) -> None:
        from sim.commands.teardown import arm_exit_deadline

        if self.stopped_by is not None:
            return
        self.stopped_by = signum
        for session in list(_sessions):
            session.terminate()
        arm_exit_deadline(128 + signum, STOP_SECONDS)  # whatever the web server's shutdown meets
        raise GracefulExit()

    def run(self) -> int:
        """Serve until a stop signal; then end every app process; return the exit status."""
        self.initialize_logging()
        # An app that outlives the loop by a moment (killed in ``end_app_processes``) is no
        # warning for the person who stopped the server.
        logging.getLogger("asyncio").setLevel(logging.ERROR)
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, self._stop, sig)
        web.run_app(self._make_app(), host=self.host, port=self.port, handle_signals=False,
                    loop=loop, print=lambda *args: None, shutdown_timeout=SHUTDOWN_SECONDS)
        end_app_processes(GRACE_SECONDS)
        return 128 + self.stopped_by if self.stopped_by is not None else 0


def end_app_processes(grace: float) -> None:
    """Give the apps ``grace`` seconds to close, then kill every process still below this one
    (an app, or a sweep's workers it had not ended) and collect them."""
    from sim.commands.teardown import descendants, kill_descendants, reap_children

    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        reap_children(0.0)
        if not descendants():
            return
        time.sleep(0.05)
    kill_descendants()
    reap_children(0.2)


__all__ = ["AppServer", "TrackedAppService", "end_app_processes"]
