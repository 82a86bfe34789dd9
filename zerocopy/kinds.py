"""How a setting's values are checked and read from the command line (`Kind`), and the kinds `config.RunConfig`'s
settings are made of."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zerocopy.errors import ConfigError
from zerocopy.names import NAME_RULE, is_name
from zerocopy.roi.tasks import parse_task


@dataclass(frozen=True, kw_only=True)
class Kind:
    """How one setting's values are checked (`check`, for the API and the CLI alike) and read from
    the command line (`parse`: text → value; `flag`: a switch that takes no value)."""

    accepts: str  # what it accepts, for the error message: "an integer ≥ 1"
    test: Callable[[Any], bool]
    convert: Callable[[Any], Any] = lambda v: v
    parse: Callable[[str], Any] | None = str
    choices: tuple[str, ...] | None = None
    optional: bool = False  # None allowed (meaning `none`)
    none: str = ""  # what None means, where it is allowed: "auto"
    flag: bool = False
    repeat: bool = False  # given once per item on the command line (KEY=VALUE pairs)
    plain: Callable[[Any], Any] = lambda v: v  # a checked value as text and numbers (`RunConfig.to_dict`)

    def check(self, name: str, value: Any) -> Any:
        if value is None and self.optional:
            return None
        try:
            ok = self.test(value)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            also = f" (or None: {self.none})" if self.optional else ""
            raise ConfigError(name, f"{name} must be {self.accepts}{also}, not {value!r}")
        try:
            return self.convert(value)
        except ValueError as e:  # a value of the right shape that says something wrong (a zone crossing itself)
            raise ConfigError(name, str(e)) from None


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return (_is_int(v) or isinstance(v, float)) and math.isfinite(v)


def integer(low: int, optional: bool = True) -> Kind:
    return Kind(accepts=f"an integer ≥ {low}", test=lambda v: _is_int(v) and v >= low, parse=int, optional=optional,
                none="auto")


def choice(*values: str, optional: bool = False) -> Kind:
    return Kind(accepts=f"one of {', '.join(values)}", test=lambda v: v in values, choices=values, optional=optional,
                none="per model")


def text(optional: bool = True) -> Kind:
    return Kind(accepts="a string", test=lambda v: isinstance(v, str | Path) and str(v) != "", convert=str,
                optional=optional, none="unset")


def _pair(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"expected KEY=VALUE, got {item!r}")
    return key.strip(), value.strip()


def _names(v: Any) -> tuple[str, ...]:
    """Class names from a comma-separated string or a sequence of names."""
    items = v.split(",") if isinstance(v, str) else list(v)
    return tuple(str(n).strip() for n in items)


NAMES = Kind(accepts="class names (a sequence of names, or one comma-separated string)",
             test=lambda v: (isinstance(v, str) or (isinstance(v, Iterable) and all(isinstance(n, str) for n in v)))
             and len(_names(v)) > 0 and all(_names(v)),
             convert=_names, parse=_names, optional=True, none="every class")
def _items(v: Any) -> tuple[str, ...]:
    return (v,) if isinstance(v, str) else tuple(v)


TASKS = Kind(accepts="MODEL or MODEL:LABEL,... (a model, then the labels of the boxes it runs on; in the API, one such "
             "string or a list of them)",
             test=lambda v: (isinstance(v, str) or (isinstance(v, Iterable) and all(isinstance(n, str) for n in v)))
             and all(s.strip() for s in _items(v)),
             # the grammar's one reading (`roi.tasks.parse_task`, which names what is wrong), its items written back
             convert=lambda v: tuple(parse_task(s).text for s in _items(v)), parse=str, repeat=True)
SWITCH = Kind(accepts="True or False", test=lambda v: isinstance(v, bool), parse=None, flag=True)
SCORE = Kind(accepts="a number in (0, 1]", test=lambda v: _is_number(v) and 0 < v <= 1, convert=float, parse=float,
             optional=True, none="the model's own")
SECONDS = Kind(accepts="a number of seconds > 0", test=lambda v: _is_number(v) and v > 0, convert=float, parse=float)
RATE = Kind(accepts="a number of frames per second > 0", test=lambda v: _is_number(v) and v > 0, convert=float,
            parse=float, optional=True, none="every frame")
TILE_ROWS = Kind(accepts="an integer from 0 to 4", test=lambda v: _is_int(v) and 0 <= v <= 4, parse=int)
NODE = Kind(accepts=f"{NAME_RULE} (it becomes an MQTT topic level)", test=is_name, optional=True, none="the host name")
PROPERTIES = Kind(accepts="a mapping of OpenVINO property names to values",
                  test=lambda v: v is None or (isinstance(v, Mapping) and all(isinstance(k, str) and k for k in v)),
                  convert=lambda v: dict(v or {}), parse=_pair, repeat=True)
LEVEL = Kind(accepts="an integer from 1 to 255", test=lambda v: _is_int(v) and 1 <= v <= 255, parse=int)
