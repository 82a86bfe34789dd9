"""A camera's figures, kept from its records (`stages.records.Record.measure`): gauges, counters and histograms by
name and label values, plain Python (serve turns them into Prometheus families at scrape time,
`serve.tallies.analytics_metrics`, and its JSON from the same numbers). A record says what it adds; nothing counts
a stage's work a second time.

Bounded by what a camera has: one value per family and label values (its labels, zones and lines)."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field

KINDS = ("gauge", "counter", "histogram")


@dataclass(frozen=True, kw_only=True)
class Family:
    """A figure's declaration: its kind, its name (Prometheus' form: `zerocopy_…`; a counter's without `_total`), one
    line of help, the names of its labels besides `camera`, and a histogram's bucket bounds (seconds, say)."""

    kind: str
    name: str
    help: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"a figure is one of {KINDS}, not {self.kind!r}")
        if self.kind == "histogram" and list(self.buckets) != sorted(set(self.buckets)):
            raise ValueError(f"{self.name}: a histogram's buckets rise, each once")


@dataclass
class Histogram:
    """Observations in buckets: `counts[i]` those <= `buckets[i]` and above the bound before (the last: above all)."""

    buckets: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    sum: float = 0.0

    def __post_init__(self) -> None:
        self.counts = self.counts or [0] * (len(self.buckets) + 1)

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.sum += value

    @property
    def count(self) -> int:
        return sum(self.counts)

    def cumulative(self) -> list[tuple[str, int]]:
        """Prometheus' form: (upper bound, observations at or below it), `+Inf` last."""
        out, total = [], 0
        for bound, n in zip((*(repr(float(b)) for b in self.buckets), "+Inf"), self.counts, strict=True):
            total += n
            out.append((bound, total))
        return out


Value = float | Histogram


class Figures:
    """One camera's figures. Not thread-safe: its owner updates and reads it under one lock (serve's camera)."""

    def __init__(self) -> None:
        self._values: dict[Family, dict[tuple[str, ...], Value]] = {}

    def set(self, family: Family, labels: tuple[str, ...], value: float) -> None:
        """A gauge's value now (or a counter's total, as its stage counted it)."""
        self._check(family, labels, ("gauge", "counter"))[labels] = float(value)

    def add(self, family: Family, labels: tuple[str, ...], amount: float = 1.0) -> None:
        """A counter's increase."""
        values = self._check(family, labels, ("counter",))
        values[labels] = float(values.get(labels, 0.0)) + amount  # type: ignore[arg-type]

    def observe(self, family: Family, labels: tuple[str, ...], value: float) -> None:
        """One observation of a histogram."""
        values = self._check(family, labels, ("histogram",))
        histogram = values.setdefault(labels, Histogram(family.buckets))
        assert isinstance(histogram, Histogram)
        histogram.observe(value)

    def _check(self, family: Family, labels: tuple[str, ...], kinds: tuple[str, ...]) -> dict[tuple[str, ...], Value]:
        if family.kind not in kinds or len(labels) != len(family.labels):
            raise ValueError(f"{family.name}: a {family.kind} with labels {family.labels}, given {labels}")
        return self._values.setdefault(family, {})

    def get(self, family: Family) -> dict[tuple[str, ...], Value]:
        """The values of one family, by label values (empty if none yet)."""
        return dict(self._values.get(family, {}))

    def __iter__(self) -> Iterator[tuple[Family, dict[tuple[str, ...], Value]]]:
        return iter([(family, dict(values)) for family, values in self._values.items()])

    def copy(self) -> Figures:
        """A copy that the owner's later updates do not change (for a reader on another thread)."""
        out = Figures()
        for family, values in self._values.items():
            out._values[family] = {k: (Histogram(v.buckets, list(v.counts), v.sum) if isinstance(v, Histogram)
                                       else v) for k, v in values.items()}
        return out
