"""Experiments as TOML presets, one per classic study."""

import tomllib
from pathlib import Path

from ..errors import UsageError

PRESET_DIR = Path(__file__).resolve().parent


def preset_names():
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def load_preset(name):
    """A preset by name, or a path to a TOML file of the same shape."""
    path = Path(name)
    if not (path.suffix == ".toml" and path.exists()):
        path = PRESET_DIR / f"{name}.toml"
    if not path.exists():
        raise UsageError(f"preset '{name}' is unknown: use one of {', '.join(preset_names())} "
                         "(see 'pario presets') or a .toml file")
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"preset {path}: {exc}") from exc
    for key in ("name", "sweep", "test"):
        if key not in data:
            raise UsageError(f"preset {path} has no '{key}': see presets/cfs.toml for the shape")
    return data
