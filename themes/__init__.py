"""Theme files shared by the terminal app and the PNG export (plain TOML, no code)."""

from pathlib import Path

THEMES_DIR = Path(__file__).parent
