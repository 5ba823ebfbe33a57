"""User-facing errors: one clear line each, turned into exit status 2 by the CLIs."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in the user's input (config, arguments, files), reported as one line."""

    exit_status = 2

    def lines(self) -> list[str]:
        """The messages to print, one line each (several for a config with several mistakes)."""
        return [str(self)]


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

    @staticmethod
    def combine(errors: list[ConfigError]) -> ConfigError:
        """One error for several mistakes: the first's location, every message on its own line."""
        if len(errors) == 1:
            return errors[0]
        return ConfigErrors(errors)

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


class ConfigErrors(ConfigError):
    """Every mistake found in one config; ``str`` has one line per mistake."""

    def __init__(self, errors: list[ConfigError]) -> None:
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(first.message, file=first.file, simulation=first.simulation,
                         key=first.key, hint=first.hint)

    def lines(self) -> list[str]:
        return [e.format() for e in self.errors]

    def __str__(self) -> str:
        return "\n".join(self.lines())


class ParamError(ValueError):
    """A bad parameter value, raised by model constructors; the config loader adds the location."""

    def __init__(self, key: str, message: str, hint: str | None = None) -> None:
        self.key = key
        self.message = message
        self.hint = hint
        super().__init__(f"{key}: {message}")


class ArgumentValueError(UserError, ValueError):
    """A Python API argument out of its range (a ``ValueError``, and a ``UserError`` as the
    API's other mistakes are)."""


class ArgumentTypeError(UserError, TypeError):
    """A Python API argument of the wrong type (a ``TypeError``, and a ``UserError``)."""


# Exit statuses of every command (backoff-sim run/replay/explore, backoff-simulator, the app).
EXIT_OK = 0
EXIT_STDOUT_FAILED = 1  # standard output could not be written (a full disk, not a closed pipe)
EXIT_USER_ERROR = 2  # a mistake in the input: one line on stderr, never a traceback
EXIT_INTERRUPTED = 130  # 128 + SIGINT
