"""Where the app writes its exports unless told otherwise (read by the launcher and the app)."""

from __future__ import annotations

from pathlib import Path

DEFAULT_OUT = Path("backoff-sim-out")  # the app's export folder, under the current directory
