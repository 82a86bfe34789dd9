"""One input's own settings (serve's cameras; `Detector.run(per_input=…)`): those declared `per_input` in
`config.RunConfig`, each None where the input leaves the run's; and `declared(key)`, every setting declared with a
keyword of `config.setting` (where else a setting may appear)."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import field
from typing import Any

from zerocopy.config import RunConfig
from zerocopy.errors import ConfigError
from zerocopy.serve.checks import did_you_mean


def declared(key: str) -> dict[str, Any]:
    """Every setting declared with `key` (a keyword of `setting`: "per_input", "serve_sets", "camera_default",
    "not_camera"), by name, in the declarations' order: its value there."""
    return {f.name: f.metadata[key] for f in RunConfig.settings() if key in f.metadata}


# the settings one input of a run may have of its own (serve's cameras): those declared `per_input`
INPUT_SETTINGS = tuple(declared("per_input"))


class _OwnSettings:
    """What one input's own settings do; their fields (`InputSettings`) are made from the declarations."""

    @classmethod
    def of(cls, config: RunConfig) -> InputSettings:
        """Every one of `config`'s settings an input may have of its own (a serve camera's, from its record)."""
        return cls(**{name: getattr(config, name) for name in INPUT_SETTINGS})  # type: ignore[return-value]

    def given(self) -> dict[str, Any]:
        """The settings this input has of its own, by name."""
        return {name: getattr(self, name) for name in INPUT_SETTINGS if getattr(self, name) is not None}

    def of_run(self, config: RunConfig) -> RunConfig:
        """`config` with this input's own settings in place of the run's (its `classes` are read by the stages,
        from `InputInfo.classes`)."""
        own = {k: v for k, v in self.given().items() if k != "classes"}
        return config.replace(**own) if own else config


_TYPES = typing.get_type_hints(RunConfig)  # (the settings' types themselves, not their names)

# One input's own settings (serve's cameras; `Detector.run(per_input=…)`), a frozen record with one field per
# setting declared `per_input`: its type, or None, which leaves the run's
InputSettings = dataclasses.make_dataclass(
    "InputSettings", [(name, _TYPES[name] | None, field(default=None)) for name in INPUT_SETTINGS],
    bases=(_OwnSettings,), frozen=True, kw_only=True)
InputSettings.__module__, InputSettings.__doc__ = __name__, "One input's own settings (those declared `per_input`)."


def input_settings(given: Mapping[str, Any] | None, where: str = "per_input") -> InputSettings:
    """One input's own settings (`INPUT_SETTINGS`), checked as the run's are; what it leaves out is the run's."""
    if isinstance(given, _OwnSettings):
        return given  # (made from a checked configuration: `InputSettings.of`)
    given = dict(given or {})
    unknown = sorted(set(given) - set(INPUT_SETTINGS))
    if unknown:
        runs = {f.name for f in RunConfig.settings()}  # (a setting of the run an input may not have of its own)
        named = ", ".join(f"{key!r}" + (" (a setting of the whole run)" if key in runs else
                                        did_you_mean(key, INPUT_SETTINGS)) for key in unknown)
        raise ConfigError(where, f"{where}: an input may set only {', '.join(INPUT_SETTINGS)}, not {named}")
    kinds = {f.name: f.metadata["kind"] for f in RunConfig.settings() if f.name in INPUT_SETTINGS}
    checked = {name: kinds[name].check(name, value) for name, value in given.items() if value is not None}
    return InputSettings(**checked)
