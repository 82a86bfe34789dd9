"""Zones, lines and motion masks as settings: read once, from the command line's text or the API's and serve's
mappings, into their specs (`ZoneSpec`, `LineSpec`, `MaskSpec`), which `RunConfig` keeps and every stage, the
overlay and serve's checks take; each has one text form (`text`), the one `RunConfig.to_dict` prints.

    --zone NAME:x1,y1,x2,y2,x3,y3[,...][:labels=A,B][:min_frames=N][:loiter_s=S]
    --line NAME:x1,y1,x2,y2[:labels=A,B]
    --motion-mask x1,y1,x2,y2,x3,y3[,...]

Points are source-frame pixels, or fractions of the frame when every value is ≤ 1."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from zerocopy.analytics.geometry import Points, check_polygon, check_segment, read_points, write_points
from zerocopy.kinds import Kind
from zerocopy.names import NAME_RULE, is_name

ZONE_OPTIONS = ("labels", "min_frames", "loiter_s")
LINE_OPTIONS = ("labels",)


class _Labelled:
    """A shape that may count only some labels (`labels`, compared case-insensitively)."""

    labels: tuple[str, ...]

    @cached_property
    def _lowered(self) -> frozenset[str]:
        return frozenset(n.lower() for n in self.labels)

    def counts(self, label: str) -> bool:
        """Whether objects of `label` count here."""
        return not self.labels or label.lower() in self._lowered


@dataclass(frozen=True, kw_only=True)
class ZoneSpec(_Labelled):
    """A zone: an object is in it when its box's bottom-centre is, for `min_frames` inferred frames in a row
    (Frigate's inertia); `loiter_s`: one `loiter` event when it stays that long; `labels`: only these count."""

    name: str
    points: Points
    labels: tuple[str, ...] = ()
    min_frames: int = 3
    loiter_s: float | None = None

    @property
    def text(self) -> str:
        extra = [f"labels={','.join(self.labels)}"] if self.labels else []
        extra += [f"min_frames={self.min_frames}"] if self.min_frames != 3 else []
        extra += [f"loiter_s={self.loiter_s:g}"] if self.loiter_s is not None else []
        return ":".join([self.name, write_points(self.points), *extra])


@dataclass(frozen=True, kw_only=True)
class LineSpec(_Labelled):
    """A line objects are counted crossing (`in`: from its right-hand side to its left, looking from its first
    point to its second); `labels`: only these count."""

    name: str
    points: Points
    labels: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return ":".join([self.name, write_points(self.points)] + ([f"labels={','.join(self.labels)}"]
                                                                   if self.labels else []))


@dataclass(frozen=True)
class MaskSpec:
    """A motion mask: a polygon where motion is ignored."""

    points: Points

    @property
    def text(self) -> str:
        return write_points(self.points)


def _options(parts: list[str], allowed: tuple[str, ...], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or key.strip() not in allowed:
            raise ValueError(f"{what}: {part!r} is not one of {', '.join(o + '=...' for o in allowed)}")
        out[key.strip()] = value.strip()
    return out


# names that are topic levels of their own under a camera (`CAMERA/lines/LINE`, `CAMERA/events`, ...)
RESERVED = ("lines", "events", "detections", "snapshot", "available", "motion")  # `motion`: the gate's ON/OFF


def _name(name: str, what: str) -> str:
    if not is_name(name):
        raise ValueError(f"{what} name {name!r} must be {NAME_RULE} (it becomes an MQTT topic level)")
    if name.lower() in RESERVED:
        raise ValueError(f"{what} name {name!r} is a topic of its own under a camera ({', '.join(RESERVED)}): "
                         "choose another")
    return name


def _labels(value: Any) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else list(value)
    labels = tuple(str(v).strip() for v in items)
    if not labels or not all(labels):
        raise ValueError(f"labels are names, comma-separated: {value!r}")
    return labels


def _read(text: str, what: str, form: str, options: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """`NAME:POINTS[:KEY=VALUE]...` → (NAME, {"points": POINTS, KEY: VALUE, ...})."""
    name, _, rest = text.strip().partition(":")
    parts = rest.split(":") if rest else []
    if not parts:
        raise ValueError(f"a {what} is {form}, not {text!r}")
    return _name(name.strip(), what), {"points": parts[0], **_options(parts[1:], options, f"{what} {name}")}


def parse_zone(text: str) -> ZoneSpec:
    return zone_from(*_read(text, "zone", "NAME:x1,y1,x2,y2,x3,y3[,...]", ZONE_OPTIONS))


def zone_from(name: str, given: Mapping[str, Any]) -> ZoneSpec:
    """A zone from a mapping (serve's `[cameras.X.zones.NAME]`, the API): `points` (text or numbers), and the
    optional `labels`, `min_frames`, `loiter_s`."""
    points, labels = _shape("zone", name, given, ZONE_OPTIONS, check_polygon)
    min_frames, loiter = given.get("min_frames", 3), given.get("loiter_s")
    try:
        min_frames = int(min_frames) if not isinstance(min_frames, bool | float) else None
        loiter = None if loiter is None else float(loiter) if not isinstance(loiter, bool) else 0.0
    except (TypeError, ValueError):
        min_frames = None
    if min_frames is None or min_frames < 1 or (loiter is not None and loiter <= 0):
        raise ValueError(f"zone {name}: min_frames is an integer ≥ 1 and loiter_s a number of seconds > 0, not "
                         f"{given.get('min_frames', 3)!r} and {given.get('loiter_s')!r}")
    return ZoneSpec(name=_name(name, "zone"), points=points, labels=labels, min_frames=min_frames,
                    loiter_s=loiter)


def parse_line(text: str) -> LineSpec:
    return line_from(*_read(text, "line", "NAME:x1,y1,x2,y2", LINE_OPTIONS))


def line_from(name: str, given: Mapping[str, Any]) -> LineSpec:
    """A line from a mapping (serve's `[cameras.X.lines.NAME]`, the API): `points`, optional `labels`."""
    points, labels = _shape("line", name, given, LINE_OPTIONS, check_segment)
    return LineSpec(name=_name(name, "line"), points=points, labels=labels)


def _shape(what: str, name: str, given: Mapping[str, Any], options: tuple[str, ...],
           check: Callable[[Points], Any]) -> tuple[Points, tuple[str, ...]]:
    """What zones and lines read alike from a mapping: no unknown key, the points (checked), the labels."""
    unknown = sorted(set(given) - {"points", *options})
    if unknown:
        raise ValueError(f"{what} {name}: unknown key {unknown[0]!r} (points, {', '.join(options)})")
    points = _checked(given.get("points"), f"{what} {name}", check)
    return points, _labels(given["labels"]) if "labels" in given else ()


def parse_mask(text: Any) -> Points:
    return _checked(text, "motion mask", check_polygon)


def _checked(value: Any, what: str, check: Callable[[Points], Any]) -> Points:
    points = _points(value, what)
    try:
        check(points)
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None
    return points


def _points(value: Any, what: str) -> Points:
    if value is None:
        raise ValueError(f"{what}: no points")
    if isinstance(value, str):
        return read_points(value)
    flat = [v for p in value for v in (p if isinstance(p, Iterable) else (p,))]
    return read_points(",".join(str(v) for v in flat))


def _items(value: Any, parse: Callable[[str], Any], build: Callable[[str, Mapping[str, Any]], Any],
           spec: type) -> list:
    """Texts (one, or a sequence of them), specs already read, or a mapping NAME → settings, each read into a
    spec (`spec`)."""
    if isinstance(value, Mapping):
        return [build(str(name), given) for name, given in value.items()]
    out = []
    for v in (value,) if isinstance(value, str) else value:
        if not isinstance(v, str | spec):
            raise ValueError(f"a {spec.__name__[:-4].lower()} is text or a mapping, not {v!r}")
        out.append(parse(v) if isinstance(v, str) else v)
    return out


def zone_specs(value: Any) -> tuple[ZoneSpec, ...]:
    """Zones as `RunConfig.zones` keeps them: each read once into its spec; two with one name are an error."""
    return _unique(_items(value, parse_zone, zone_from, ZoneSpec), "zone")


def line_specs(value: Any) -> tuple[LineSpec, ...]:
    return _unique(_items(value, parse_line, line_from, LineSpec), "line")


def _is_pair(v: Any) -> bool:
    return isinstance(v, list | tuple) and len(v) == 2 and all(isinstance(x, int | float) for x in v)


def mask_specs(value: Any) -> tuple[MaskSpec, ...]:
    """Polygons: texts, or one polygon as numbers ([x1, y1, ...]) or pairs ([[x1, y1], ...]), or a list of those,
    each read once into its spec (a spec already read is taken as it is)."""
    items = (value,) if isinstance(value, str | MaskSpec) else tuple(value)
    if items and (all(isinstance(v, int | float) for v in items) or all(_is_pair(v) for v in items)):
        items = (items,)  # one polygon
    return tuple(v if isinstance(v, MaskSpec) else MaskSpec(parse_mask(v)) for v in items)


def _unique(specs: list, what: str) -> tuple:
    names = [s.name for s in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"two {what}s are named {twice[0]!r}")
    return tuple(specs)


def _texts(specs: Iterable[ZoneSpec | LineSpec | MaskSpec]) -> tuple[str, ...]:
    return tuple(s.text for s in specs)


# The settings' kinds (`kinds.Kind`): `config.RunConfig`'s zones, lines and motion masks, kept as specs (points)
# and printed in their one text form (`plain`: the report's config, the bench's JSON for its workers)
def _texts_or_mapping(v: Any) -> bool:
    return isinstance(v, str | Mapping) or (isinstance(v, Iterable) and not isinstance(v, bytes))


ZONES = Kind(accepts="NAME:x1,y1,x2,y2,x3,y3[,...][:labels=A,B][:min_frames=N][:loiter_s=S] (repeatable; in the API "
             "also a mapping NAME → {points, labels, min_frames, loiter_s})",
             test=_texts_or_mapping, convert=zone_specs, parse=str, repeat=True, plain=_texts)
LINES = Kind(accepts="NAME:x1,y1,x2,y2[:labels=A,B] (repeatable; in the API also a mapping NAME → {points, labels})",
             test=_texts_or_mapping, convert=line_specs, parse=str, repeat=True, plain=_texts)
MASKS = Kind(accepts="x1,y1,x2,y2,x3,y3[,...] (repeatable: one polygon each)", test=_texts_or_mapping,
             convert=mask_specs, parse=str, repeat=True, plain=_texts)
