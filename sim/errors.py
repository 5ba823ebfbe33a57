"""User-facing errors: one clear line each, turned into exit status 2 by the CLIs."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in the user's input (config, arguments, files), reported as one line."""

    exit_status = 2


class ConfigError(UserError):
    """A problem in a config file, located by file, simulation title and key."""

    def __init__(self, message: str, *, file: str | None = None, simulation: str | None = None,
                 key: str | None = None, hint: str | None = None) -> None:
        self.message = message
        self.file = file
        self.simulation = simulation
        self.key = key
        self.hint = hint
        super().__init__(self.format())

    def format(self) -> str:
        where = []
        if self.file:
            where.append(str(self.file))
        if self.simulation is not None:
            where.append(f"simulation {self.simulation!r}")
        if self.key:
            where.append(f"key {self.key!r}")
        text = ": ".join(where + [self.message]) if where else self.message
        if self.hint:
            text += f" ({self.hint})"
        return text


class ParamError(ValueError):
    """A bad parameter value, raised by model constructors; the config loader adds the location."""

    def __init__(self, key: str, message: str, hint: str | None = None) -> None:
        self.key = key
        self.message = message
        self.hint = hint
        super().__init__(f"{key}: {message}")
