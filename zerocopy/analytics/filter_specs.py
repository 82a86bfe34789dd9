"""Per-label object filters as a setting (`RunConfig.filters`, Frigate's `objects.filters`): read once, from the
command line's text or the API's and serve's mappings, into their specs (`FilterSpec`), which the filter stage
(`stages.filters`) and the tracker's confirmation (`track.object_events`) take; each has one text form (`text`).

    --filter LABEL[:min_score=S][:threshold=S][:min_area=A][:max_area=A][:min_ratio=R][:max_ratio=R][:mask=x1,y1,...]

`min_score` drops a box scored below it; `threshold` confirms an object (its `new` event) only once the median of
its scores reaches it (Frigate's rule, except that Frigate counts a frame the object was missed in as 0.0
and zerocopy does not); `min_area`/`max_area` bound a box's area, a fraction of the frame's area when
the value is below 1, else source-frame pixels (1: one pixel); `min_ratio`/`max_ratio` its width ÷ height;
`mask` (repeatable) a polygon where a box whose bottom-centre falls is dropped, its points pixels or fractions as
a zone's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from zerocopy.analytics.geometry import Points, write_points
from zerocopy.analytics.specs import mask_specs
from zerocopy.kinds import Kind

SCORES = ("min_score", "threshold")  # in (0, 1]
BOUNDS = ("min_area", "max_area", "min_ratio", "max_ratio")  # numbers ≥ 0
FILTER_OPTIONS = (*SCORES, *BOUNDS, "mask")


@dataclass(frozen=True, kw_only=True)
class FilterSpec:
    """One label's filters (`label` compared case-insensitively with the model's labels); None: not filtered so."""

    label: str
    min_score: float | None = None
    threshold: float | None = None
    min_area: float | None = None
    max_area: float | None = None
    min_ratio: float | None = None
    max_ratio: float | None = None
    mask: tuple[Points, ...] = ()

    def bounds(self) -> dict[str, float]:
        """Its area and ratio bounds that are set, by name (`BOUNDS`)."""
        given = dict(zip(BOUNDS, (self.min_area, self.max_area, self.min_ratio, self.max_ratio), strict=True))
        return {key: value for key, value in given.items() if value is not None}

    @property
    def drops(self) -> bool:
        """Whether it drops boxes (any filter but `threshold`, which only holds an object's `new` back)."""
        return any(getattr(self, key) is not None for key in ("min_score", *BOUNDS)) or bool(self.mask)

    @property
    def text(self) -> str:
        given = [f"{key}={getattr(self, key):g}" for key in (*SCORES, *BOUNDS) if getattr(self, key) is not None]
        return ":".join([self.label, *given, *(f"mask={write_points(p)}" for p in self.mask)])


def parse_filter(text: str) -> FilterSpec:
    """`LABEL:key=value[:key=value]...` (`mask=` repeatable) → its spec."""
    label, _, rest = text.strip().partition(":")
    given: dict[str, Any] = {}
    for part in rest.split(":") if rest else []:
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep or key not in FILTER_OPTIONS:
            raise ValueError(f"filter {label}: {part!r} is not one of {', '.join(o + '=...' for o in FILTER_OPTIONS)}")
        if key == "mask":
            given.setdefault("mask", []).append(value)
        elif key in given:
            raise ValueError(f"filter {label}: {key} is given twice")
        else:
            given[key] = value
    if not given:
        raise ValueError(f"a filter is LABEL:key=value[:key=value]... (min_score, threshold, min_area, max_area, "
                         f"min_ratio, max_ratio, mask), not {text!r}")
    return filter_from(label, given)


def _number(label: str, key: str, value: Any) -> float:
    try:
        number = float(value) if not isinstance(value, bool) else float("nan")
    except (TypeError, ValueError):
        number = float("nan")
    ok = 0 < number <= 1 if key in SCORES else 0 <= number < float("inf")
    if not ok:
        area = "a number ≥ 0 (an area: a fraction of the frame when below 1, else pixels)"
        raise ValueError(f"filter {label}: {key} is " + ("a score in (0, 1]" if key in SCORES else area) +
                         f", not {value!r}")
    return number


def _masks(value: Any) -> tuple[Points, ...]:
    """One polygon (text, numbers or x,y pairs) or a list of them, read as a motion mask's are."""
    try:
        return tuple(m.points for m in mask_specs(value))
    except ValueError as e:
        raise ValueError(str(e).removeprefix("motion mask: ")) from None


def filter_from(label: str, given: Mapping[str, Any]) -> FilterSpec:
    """A label's filters from a mapping (serve's `[cameras.X.filters.LABEL]`, the API's `{"person": {…}}`)."""
    label = str(label).strip()
    if not label or ":" in label:
        raise ValueError(f"a filter's label is a name of the model's labels, not {label!r}")
    if not isinstance(given, Mapping):
        raise ValueError(f"filter {label}: a table of {', '.join(FILTER_OPTIONS)}, not {given!r}")
    unknown = sorted(set(given) - set(FILTER_OPTIONS))
    if unknown:
        raise ValueError(f"filter {label}: unknown key {unknown[0]!r} ({', '.join(FILTER_OPTIONS)})")
    values = {key: _number(label, key, v) for key, v in given.items() if key != "mask" and v is not None}
    try:
        mask = _masks(given.get("mask") or ())
    except ValueError as e:
        raise ValueError(f"filter {label}: mask: {e}") from None
    for low, high in (("min_area", "max_area"), ("min_ratio", "max_ratio")):
        a, b = values.get(low), values.get(high)
        same_unit = low == "min_ratio" or (a is not None and b is not None and (a < 1) == (b < 1))
        if a is not None and b is not None and same_unit and a > b:
            raise ValueError(f"filter {label}: {low} {a:g} is above {high} {b:g}: nothing would be kept")
    return FilterSpec(label=label, mask=mask, **values)


def filter_specs(value: Any) -> tuple[FilterSpec, ...]:
    """Filters as `RunConfig.filters` keeps them: texts (one, or a sequence), specs already read, or a mapping
    LABEL → its filters, each read once into its spec; two for one label are an error."""
    if isinstance(value, Mapping):
        specs = [filter_from(str(label), given) for label, given in value.items()]
    else:
        specs = []
        for v in (value,) if isinstance(value, str | FilterSpec) else value:
            if not isinstance(v, str | FilterSpec):
                raise ValueError(f"a filter is text or a mapping, not {v!r}")
            specs.append(parse_filter(v) if isinstance(v, str) else v)
    labels = [s.label.lower() for s in specs]
    twice = sorted({n for n in labels if labels.count(n) > 1})
    if twice:
        raise ValueError(f"two filters are for the label {twice[0]!r}: give its keys in one")
    return tuple(specs)


def by_label(specs: Iterable[FilterSpec]) -> dict[str, FilterSpec]:
    """The specs by their label, lowercased."""
    return {s.label.lower(): s for s in specs}


def _texts_or_mapping(v: Any) -> bool:
    return isinstance(v, str | Mapping | FilterSpec) or (isinstance(v, Iterable) and not isinstance(v, bytes))


# The setting's kind (`kinds.Kind`): `config.RunConfig.filters`, kept as specs and printed in their one text form
FILTERS = Kind(accepts="LABEL:key=value[:key=value]... with min_score, threshold, min_area, max_area, min_ratio, "
               "max_ratio, mask (repeatable; in the API also a mapping LABEL → {min_area: 5000, ...})",
               test=_texts_or_mapping, convert=filter_specs, parse=str, repeat=True,
               plain=lambda specs: tuple(s.text for s in specs))
