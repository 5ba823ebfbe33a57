"""``backoff-sim serve [CONFIG]``: the app in a browser, through Textual's ``textual-serve``.

Each browser tab that opens the page gets an app process of its own (``backoff-sim CONFIG``
under Textual's web driver), with the same keys and screens as in a terminal. The server
listens on the loopback address unless ``--host`` names another, which prints a warning: anyone
who can reach that address can run simulations and write files where the app writes. Over SSH,
forward the port instead (``ssh -L 8000:127.0.0.1:8000 host``).

A stop (Ctrl-C, SIGTERM, SIGHUP) ends every app process the server started: each is sent
SIGTERM (it closes as ``q`` does), the browsers' connections are closed, and whatever is still
running a moment later is killed (``sim.commands.teardown``), within ``tui.web.STOP_SECONDS``.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import shlex
import sys
from pathlib import Path

from sim.commands.cli import OneLineParser, int_at_least, output_dir
from sim.vocabulary.errors import EXIT_USER_ERROR
from tui.state.paths import DEFAULT_OUT

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
# What textual-serve sets for the app processes it starts (``AppService._build_environment``).
WEB_DRIVER = "textual.drivers.web_driver:WebDriver"
EXTRA_HINT = "backoff-sim serve needs the serve extra: pip install 'backoff-sim[serve]'"

DESCRIPTION = """\
Serve the app to a web browser (textual-serve): every tab that opens the page gets its own app
on CONFIG, with the same keys and screens. It listens on 127.0.0.1 unless --host says otherwise;
from another machine, forward the port over SSH:

  ssh -L 8000:127.0.0.1:8000 HOST     then open http://127.0.0.1:8000 there

Ctrl-C (or SIGTERM, SIGHUP) stops the server and every app it started.
"""


def served() -> bool:
    """True in an app process that textual-serve started (it draws in a browser, its standard
    streams are pipes: no terminal to check or watch)."""
    return os.environ.get("TEXTUAL_DRIVER") == WEB_DRIVER


def build_serve_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="backoff-sim serve", description=DESCRIPTION,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", nargs="?", metavar="CONFIG", type=Path,
                        help="TOML config the app opens (default: the bundled sample)")
    parser.add_argument("--host", metavar="ADDRESS", default=DEFAULT_HOST,
                        help=f"address to listen on (default: {DEFAULT_HOST}, this machine only)")
    parser.add_argument("--port", metavar="N", type=int_at_least(1, 65535), default=DEFAULT_PORT,
                        help=f"port to listen on (default: {DEFAULT_PORT})")
    parser.add_argument("--out", "-o", metavar="DIR", type=output_dir, default=DEFAULT_OUT,
                        help=f"directory the apps' export key (e) writes to (default: ./{DEFAULT_OUT})")
    return parser


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (``127.0.0.1``, ``::1``, ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def public_url(host: str, port: int) -> str | None:
    """The address the page tells the browser to connect back to: this machine's name when the
    server listens on every address (``0.0.0.0``, ``::``: no browser can reach those), else the
    address as given (textual-serve's default)."""
    if host.strip("[]") in ("0.0.0.0", "::", ""):
        import socket

        return f"http://{socket.gethostname()}:{port}"
    return None


def app_command(config: Path | None, out: Path) -> str:
    """The shell command each browser session's app runs: this Python, ``backoff-sim``'s entry
    point, the config and the export folder (``exec``: the app is the process textual-serve
    started, so stopping it stops the app). Each app is a process group of its own: a Ctrl-C
    in the server's terminal reaches the server, which ends the apps (``tui.web``), and not the
    apps halfway through a frame."""
    code = "import os, sys; os.setpgrp(); from tui.entry import main; sys.exit(main())"
    args = [sys.executable, "-c", code, *([str(config.resolve())] if config is not None else []),
            "--out", str(out.resolve())]
    return "exec " + " ".join(shlex.quote(a) for a in args)


def serve_main(argv: list[str]) -> int:
    """``backoff-sim serve``: check the config and the extra, then serve until stopped; return
    the exit status (2 for a mistake; 130, 143 or 129 after SIGINT, SIGTERM or SIGHUP)."""
    from sim.vocabulary.errors import UserError
    from sim.commands.stdout import stderr_line

    args = build_serve_parser().parse_args(argv)
    try:
        import textual_serve.server  # noqa: F401 - the extra, before any other work
    except ImportError:
        stderr_line(f"error: {EXTRA_HINT}")
        return EXIT_USER_ERROR
    try:
        from sim.pipeline import load, sample_path

        load(args.config if args.config is not None else sample_path())  # one line per mistake, now
    except UserError as exc:
        for line in exc.lines():
            stderr_line(f"error: {line}")
        return EXIT_USER_ERROR
    if not is_loopback(args.host):
        stderr_line(f"warning: serving on {args.host}: anyone who can reach it can run simulations "
                    f"and write files where the app writes ({Path(args.out).resolve()}); "
                    f"the default, {DEFAULT_HOST}, with ssh -L, keeps it to you")
    from tui.web import AppServer

    server = AppServer(app_command(args.config, args.out), host=args.host, port=args.port,
                       title="backoff-sim", public_url=public_url(args.host, args.port))
    try:
        status = server.run()
    except OSError as exc:  # the address is taken, or not this machine's
        stderr_line(f"error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc} "
                    "(choose another --port or --host)")
        return EXIT_USER_ERROR
    from sim.commands.teardown import emergency_exit, is_armed

    if is_armed():  # stopped by a signal: end here, as the app does (``tui.main._finish``), so
        emergency_exit(status)  # no finalizer meets the closed event loop or a pipe that is gone
    return status
