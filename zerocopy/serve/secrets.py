"""Secrets in `zerocopy serve`'s config: `${NAME}` (the environment variable NAME) and `${file:PATH}` (the
contents of PATH, its trailing newline removed: Docker and systemd credentials) in string values; `$$` is a
literal `$`. What was filled in is remembered so that every message can mask it: the config's problems here,
everything serve shows while it runs through `redaction.masking`."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zerocopy.redaction import MASK, MIN_MASKED, redact_text

REFERENCE = re.compile(r"\$(\$|\{([^}]*)\})")


class Filler:
    """Fills `${NAME}` and `${file:PATH}` in strings; keeps what it filled in, to mask it in messages."""

    def __init__(self, env: dict[str, str], base: Path, problem: Callable[[str, str], None]):
        self.env, self.base, self.problem = env, base, problem
        self.filled: set[str] = set()
        self.unfilled: set[tuple[str, ...]] = set()  # where a value could not be filled in (said once)

    def table(self, raw: dict[str, Any], where: tuple[str, ...] = ()) -> dict[str, Any]:
        """`raw` filled in; a key whose value could not be (said once, naming its table and key) is left out."""
        out = {}
        for key, value in raw.items():
            try:
                out[key] = self._value(value, (*where, key))
            except Unfilled:
                self.unfilled.add((*where, key))  # (its table's checks need not say it is missing too)
                continue
        return out

    def _value(self, value: Any, where: tuple[str, ...]) -> Any:
        if isinstance(value, str):
            return REFERENCE.sub(lambda m: self._one(m, where), value)
        if isinstance(value, list):
            return [self._value(v, where) for v in value]
        if isinstance(value, dict):
            return self.table(value, where)
        return value

    def _one(self, m: re.Match, where: tuple[str, ...]) -> str:
        if m.group(1) == "$":
            return "$"
        ref = m.group(2).strip()
        key = where[-1]
        table = ".".join(where[:-1])
        if ref.startswith("file:"):
            path = Path(os.path.expanduser(ref[5:].strip()))
            path = path if path.is_absolute() else self.base / path
            try:
                value = path.read_text().rstrip("\r\n")
            except (OSError, UnicodeDecodeError) as e:
                self.problem(table, f"{key}: cannot read the secret file {path}: "
                             f"{getattr(e, 'strerror', None) or e}")
                raise Unfilled from None
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ref):
            if ref not in self.env:
                elsewhere = " (nor a file of that name in the secrets folder: /run/secrets or $CREDENTIALS_DIRECTORY)" \
                    if ref.startswith("FRIGATE_") else ""  # a Frigate config's {FRIGATE_…} is looked for in both
                self.problem(table, f"{key}: the environment variable {ref} is not set{elsewhere}")
                raise Unfilled
            value = self.env[ref]
        else:
            self.problem(table, f"{key}: ${{{ref}}} is neither ${{NAME}} (an environment variable) nor "
                         "${file:PATH}")
            raise Unfilled
        if len(value) >= MIN_MASKED:
            self.filled.add(value)
        return value

    def mask(self, text: str) -> str:
        for value in sorted(self.filled, key=len, reverse=True):
            text = text.replace(value, MASK)
        return redact_text(text)


class Unfilled(Exception):
    """A `${…}` that could not be filled in (already reported)."""
