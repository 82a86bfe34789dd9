"""The small checks every table of `zerocopy serve`'s config uses: problems collected one line each, unknown keys
with a close match suggested, tables and booleans of the right type."""

from __future__ import annotations

import difflib
from collections.abc import Callable


class Problems:
    def __init__(self):
        self.lines: list[str] = []

    def __call__(self, where: str, what: str) -> None:
        self.lines.append(f"[{where}] {what}" if where else what)


def unknown_keys(where: str, keys: list[str], known: list[str], problem: Callable[[str, str], None], what: str) -> None:
    for key in keys:
        close = difflib.get_close_matches(key, known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        problem(where, f"unknown key {key!r}{hint}; {what}")


def table_of(raw: dict, key: str, problem: Callable[[str, str], None]) -> dict | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        problem("", f"{key} must be a table ([{key}]), not a {type(value).__name__}")
        return None
    return value


def bool_value(table: dict, key: str, where: str, default: bool, problem: Callable[[str, str], None]) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        problem(where, f"{key} must be true or false, not a {type(value).__name__}")
        return default
    return value
