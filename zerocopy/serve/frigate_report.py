"""What the Frigate mapping says (`Report`: notes, said once, and problems) and what every section's mapping shares:
Frigate's coordinates made fractions of the frame, its label names matched to the model's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zerocopy.serve.frigate_keys import unknown


@dataclass
class Report:
    """What the mapping says: notes (not mapped, said once each) and problems (refused: they change detection)."""

    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def note(self, where: str, key: str, why: str = "") -> None:
        """Key `key` at `where` is not mapped: said once; a problem instead if Frigate has no such key (a typo)."""
        wrong = unknown(where, key)
        if wrong is not None:
            self.problem(where or "top level", wrong)
            return
        line = f"{where}.{key}" if where else key
        line += ": not mapped" + (f" ({why})" if why else "")
        if line not in self.notes:
            self.notes.append(line)

    def said(self, line: str) -> None:
        if line not in self.notes:
            self.notes.append(line)

    def problem(self, where: str, what: str) -> None:
        self.problems.append(f"[{where}] {what}")


def polygon(value: Any, size: tuple[float, float] | None) -> str:
    """Frigate's coordinates (`x1,y1,x2,y2,…`, or a list of `x,y`) as fractions of the frame: pixels of the detect
    size divided by it; fractions (every value ≤ 1) kept; pixels without a detect size kept (the stream's pixels)."""
    text = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
    values = [float(v) for v in text.split(",")]  # ValueError: said by the caller
    if size is None or all(v <= 1 for v in values):
        return ",".join(f"{v:g}" for v in values)
    return ",".join(f"{min(max(v / size[i % 2], 0.0), 1.0):.6g}" for i, v in enumerate(values))


def masks(value: Any, size: tuple[float, float] | None) -> list[str]:
    """A Frigate mask: one polygon (a string) or several (a list of strings)."""
    return [polygon(v, size) for v in (value if isinstance(value, list) else [value]) if v]


def known_labels(names: Any, labels: tuple[str, ...] | None, model: str, where: str, report: Report) -> list[str]:
    """Frigate's label names that the model has (case-insensitively); each it lacks said once and dropped."""
    names = [names] if isinstance(names, str) else list(names or [])
    if labels is None:
        return [str(n).lower() for n in names]
    kept = []
    for name in names:
        if str(name).lower() in labels:
            kept.append(str(name).lower())
        else:
            report.said(f"{where}: {name!r} is not a label of the model {model}: not detected (fewer objects than "
                        "Frigate's model would find)")
    return kept
