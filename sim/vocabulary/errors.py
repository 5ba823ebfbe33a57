"""User-facing errors: one clear line each, turned into exit status 2 by the CLIs."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, fields
from typing import Any, TypeVar

T = TypeVar("T")


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


def build_every_mistake(cls: Callable[..., T], args: Mapping[str, Any],
                        said: Iterable[str] | Mapping[str, Any] = ()) -> tuple[T | None, list[ParamError]]:
    """Construct a model (a dataclass checking its fields in ``__post_init__``), with every
    ``ParamError`` it would raise, not only the first. A model stops at its first mistake: to
    find the others, the faulty key is left out (its default taken), or a required number set
    to 1, and the model built again, until it builds or nothing is left to try. ``said``: keys
    whose mistakes the caller already reported (their values stand-ins); a later mistake that
    names such a key, or one set aside here, is its consequence, not the user's: left out. A
    mapping for ``said`` gives each such key a stand-in, taken if the model needs the key after
    all (an optional number refused, its default None then "missing")."""
    args = dict(args)
    stand_ins = dict(said) if isinstance(said, Mapping) else {}
    defaults = ({f.name for f in fields(cls) if f.default is not MISSING or f.default_factory is not MISSING}
                if isinstance(cls, type) else set())
    reported: set[str] = set(said)
    problems: list[ParamError] = []
    left_out: dict[str, Any] = {}
    while True:
        try:
            built = cls(**args)
        except ParamError as exc:
            text = f"{exc.message} {exc.hint or ''}"
            follows = any(re.search(rf"\b{re.escape(key)}\b", text) for key in reported)
            if exc.key not in reported and not follows:
                problems.append(exc)
            reported.add(exc.key)
            value = args.get(exc.key, left_out.get(exc.key))
            if exc.key in args and exc.key in defaults and exc.key not in left_out:
                left_out[exc.key] = args.pop(exc.key)
            elif exc.key not in args and stand_ins.get(exc.key) is not None:
                args[exc.key] = stand_ins.pop(exc.key)
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and value != 1:
                args[exc.key] = type(value)(1)  # a number needed after all: one most checks pass
                left_out[exc.key] = 1
            else:
                return None, problems
            continue
        except TypeError:
            if reported:  # a stand-in's consequence (a required key left without one)
                return None, problems
            raise
        return (None if reported else built), problems


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
