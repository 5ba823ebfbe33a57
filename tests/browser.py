"""A small headless-Chromium driver for the browser tests: the DevTools protocol over a pipe.

Chromium (Debian's ``chromium``; ``.ci/run`` installs it) is started with
``--remote-debugging-pipe``: it reads protocol messages on its fd 3 and writes them on its fd 4,
each a JSON object ended by a NUL byte. No port, no websocket library, no network: the flags
turn off everything that would reach out (updates, sync, QUIC, background requests), and the
host resolver answers nothing but loopback. Every wait is bounded (``TIMEOUT``) and polls a
condition in the page, so a slow machine only waits longer, never fails for being slow.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

TIMEOUT = 60.0  # seconds: a generous bound on any one wait, never a measure of speed
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio", "--disable-dev-shm-usage",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
         "--remote-debugging-pipe")


def chromium_binary() -> str:
    """Debian's ``chromium`` (or another Chromium on PATH); the tests need one."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError("no Chromium on PATH: install Debian's chromium (.ci/run does)")


class ProtocolError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with a fresh profile; ``page(url)`` opens a tab."""

    def __init__(self, size: tuple[int, int] = (1280, 900)) -> None:
        self.profile = tempfile.mkdtemp(prefix="backoff-sim-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def into_3_and_4() -> None:  # in the child: the pipe ends where Chromium looks for them
            read, write = os.dup(to_chrome_r), os.dup(from_chrome_w)  # above 4, whatever they were
            os.dup2(read, 3)
            os.dup2(write, 4)

        self.process = subprocess.Popen(
            [chromium_binary(), *FLAGS, f"--user-data-dir={self.profile}",
             f"--window-size={size[0]},{size[1]}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=into_3_and_4, close_fds=False)  # closing fds would close 3 and 4 too
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._next = 0
        self._replies: dict[int, dict] = {}
        self._events: list[dict] = []
        self._lock = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="cdp-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_chrome, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._lock:
                    self._lock.notify_all()
                return
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            with self._lock:
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message:
                        self._replies[message["id"]] = message
                    else:
                        self._events.append(message)
                self._lock.notify_all()

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        """Send one command and wait (bounded) for its reply."""
        with self._lock:
            self._next += 1
            ident = self._next
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        with self._lock:
            while ident not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    raise ProtocolError(f"no reply to {method} within {TIMEOUT:g} s")
                self._lock.wait(min(left, 0.5))
            reply = self._replies.pop(ident)
        if "error" in reply:
            raise ProtocolError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def page(self, url: str) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        self.call("Page.enable", session=session)
        self.call("Runtime.enable", session=session)
        return page

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (ProtocolError, OSError):
            pass
        try:
            self.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    """A tab, driven by the protocol's Page and Runtime domains."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    def call(self, method: str, params: dict | None = None) -> dict:
        return self.browser.call(method, params, self.session)

    def before_load(self, script: str) -> None:
        """Run ``script`` in every document this tab loads, before the page's own scripts."""
        self.call("Page.addScriptToEvaluateOnNewDocument", {"source": script})

    def goto(self, url: str) -> None:
        self.call("Page.navigate", {"url": url})
        self.wait_for("document.readyState === 'complete'")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise ProtocolError(f"{expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = TIMEOUT) -> Any:
        """Poll ``expression`` until it is truthy (bounded by ``timeout``); return its value."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.evaluate(expression)
            except ProtocolError:
                value = None  # a page between two documents
            if value:
                return value
            if time.monotonic() > deadline:
                raise ProtocolError(f"{expression!r} not true within {timeout:g} s")
            time.sleep(0.1)

    def screenshot(self, path: Path | None = None, full_page: bool = False) -> bytes:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": size["height"],
                              "scale": 1}
            params["captureBeyondViewport"] = True
        data = base64.b64decode(self.call("Page.captureScreenshot", params)["data"])
        if path is not None:
            path.write_bytes(data)
        return data


def distinct_colours(png: bytes) -> int:
    """How many colours a screenshot has (a blank page has one)."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    return len(image.getcolors(maxcolors=1 << 24) or ())
