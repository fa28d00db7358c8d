"""Experiments as TOML files: the presets shipped here, one per classic
study, or a user's own file of the same shape (docs/presets.md).

`load_experiment(name)` reads and checks one before anything runs and
returns an `Experiment`: the parsed table, the exact TOML text and where
it came from.  The store keeps the text with the run, so
`parse_experiment(text, origin)` can bring a run's experiment back after
the file is gone."""

import string
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .. import schema
from ..errors import UsageError
from ..figures import Figure, can_show, units_for
from ..tomlfile import Shipped, locate, read_text

PRESET_DIR = Path(__file__).resolve().parent
PRESETS = Shipped("experiment", "preset", PRESET_DIR, " (see 'pario presets')")

_TOP = {
    "name": schema.LINE,
    "kind": schema.STRING,
    "title": schema.LINE,
    "summary": schema.STRING,
    "sweep": schema.TABLE,
    "quick": schema.TABLE,
    "test": schema.Type("array of tables [[test]]",
                        lambda v: None if isinstance(v, list) and v and all(isinstance(t, dict) for t in v)
                        else "is not an array of [[test]] tables"),
    "figure": schema.Type("array of tables [[figure]]",
                          lambda v: None if isinstance(v, list) and all(isinstance(t, dict) for t in v)
                          else "is not an array of [[figure]] tables"),
}

_LINES = schema.Type("list of [y, \"label\"]", lambda v: None if isinstance(v, list) and all(
    isinstance(x, list) and len(x) == 2 and isinstance(x[0], (int, float)) and not isinstance(x[0], bool)
    and isinstance(x[1], str) for x in v) else "is not a list of [y, \"label\"] pairs")

_FIGURE = {
    "id": schema.ID, "title": schema.LINE, "number": schema.STRING, "x": schema.STRING,
    "y": schema.STRING, "series": schema.NAMES, "where": schema.TABLE, "unit": schema.STRING,
    "spread": schema.BOOL, "note": schema.STRING, "lines": _LINES, "log_y": schema.BOOL,
    "normalise": schema.Type("table of parameter = value", lambda v: None if isinstance(v, dict) and v and all(
        isinstance(x, (str, int, float, bool)) for x in v.values())
        else "is not a table of one value per parameter, e.g. { background = 0 }"),
    "annotate": schema.STRING, "plot": schema.BOOL, "beside": schema.NAMES,
}


@dataclass
class Experiment:
    data: dict          # the parsed, checked TOML
    text: str           # the file's text, as stored with a run
    origin: str         # the preset's name or the file's path

    @property
    def name(self):
        return self.data["name"]


def preset_names():
    return PRESETS.names()


def load_experiment(name):
    path = locate(str(name), PRESETS)
    text = read_text(path, "experiment")
    origin = path.stem if path.parent == PRESET_DIR else str(path)
    return Experiment(parse_experiment(text, path), text, origin)


def parse_experiment(text, path):
    """The checked experiment table of TOML text; errors name `path`."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML ({exc}): fix the file") from exc
    check_experiment(data, path)
    return data


def check_experiment(data, path):
    from ..studies import DEFAULT_KIND, kinds

    schema.check_table(path, "", data, _TOP, required=("name", "sweep", "test"))
    kind_name = data.get("kind", DEFAULT_KIND)
    known = kinds()
    if kind_name not in known:
        raise schema.PresetError(path, "kind", f"'{kind_name}' is unknown: use one of {', '.join(known)}")
    kind = known[kind_name]
    schema.check_table(path, "sweep.", data["sweep"], kind.sweep_keys, kind.required_sweep)
    schema.check_table(path, "quick.", data.get("quick", {}), kind.sweep_keys)
    ids = set()
    for i, test in enumerate(data["test"], 1):
        schema.check_table(path, f"test[{i}].", test, kind.test_keys, kind.required_test)
        if test.get("id") in ids:
            raise schema.PresetError(path, f"test[{i}].id", f"'{test['id']}' is used twice: ids must differ")
        ids.add(test.get("id"))
    figure_ids = set()
    for i, fig in enumerate(data.get("figure", []), 1):
        where = f"figure[{i}]."
        schema.check_table(path, where, fig, _FIGURE, required=("id", "title", "x", "y"))
        _check_title_fields(path, f"{where}title", fig["title"], kind)
        if fig["id"] in figure_ids:  # two figures' plots would be one file, the second over the first
            raise schema.PresetError(path, f"{where}id", f"'{fig['id']}' is used twice: ids must differ")
        figure_ids.add(fig["id"])
        for axis in ("x", *([fig["series"]] if isinstance(fig.get("series"), str) else fig.get("series", []))):
            name = fig["x"] if axis == "x" else axis
            if name not in kind.params:
                raise schema.PresetError(path, f"{where}{'x' if axis == 'x' else 'series'}",
                                         f"'{name}' is not a parameter of kind {kind.name}: use one of "
                                         f"{', '.join(kind.params)}")
        for table in ("where", "normalise"):
            for p, value in fig.get(table, {}).items():
                if p not in kind.params:
                    raise schema.PresetError(path, f"{where}{table}.{p}", f"not a parameter of kind "
                                             f"{kind.name}: use one of {', '.join(kind.params)}")
                if value == []:
                    raise schema.PresetError(path, f"{where}{table}.{p}", "an empty list selects no point: "
                                             "give the values to show, or drop the key to show every one")
        tests = fig.get("where", {}).get("test")
        for t in _names(fig.get("beside", ())):  # a reference test the figure does not select draws nothing
            if not isinstance(tests, list) or t not in tests:
                raise schema.PresetError(path, f"{where}beside", f"'{t}' is not among the figure's where.test: "
                                         "beside names tests it selects, drawn only with the others")
        if fig.get("normalise") and fig.get("unit"):
            raise schema.PresetError(path, f"{where}unit", "a normalised figure has no unit (its y is a "
                                     "ratio to the baseline): drop unit or normalise")
        if "annotate" in fig and fig["annotate"] not in kind.quantities:
            raise schema.PresetError(path, f"{where}annotate", f"'{fig['annotate']}' is not measured by kind "
                                     f"{kind.name}: use one of {', '.join(kind.quantities)}")
        if fig["y"] not in kind.quantities:
            raise schema.PresetError(path, f"{where}y", f"'{fig['y']}' is not measured by kind {kind.name}: "
                                     f"use one of {', '.join(kind.quantities)}")
        have = kind.quantities[fig["y"]].unit
        if fig.get("unit") and not can_show(have, fig["unit"]):
            raise schema.PresetError(path, f"{where}unit", f"'{fig['unit']}' cannot show {fig['y']} ({have}): "
                                     f"use one of {', '.join(units_for(have))}")
    kind.check(data, path)


def _check_title_fields(path, key, title, kind):
    """Each {name} of a figure's title is a parameter the kind's points
    carry (filled_title writes its value in): an unknown one stayed in the
    heading as written, '{nope}'."""
    try:
        fields = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(title) if f is not None]
    except ValueError:
        raise schema.PresetError(path, key, "has a brace with no partner: a {name} takes a parameter's "
                                 "value; write {{ and }} for a brace itself") from None
    known = [*kind.params, *kind.facts]
    for name, spec, conv in fields:
        if spec or conv:  # pario writes the value as its kind shows it (64 KiB), in no other form
            raise schema.PresetError(path, key, f"{{{name}{'!' + conv if conv else ''}"
                                     f"{':' + spec if spec else ''}}}: a placeholder is a parameter's name "
                                     f"alone, e.g. {{{name}}}")
        if name not in known:
            raise schema.PresetError(path, key, f"{{{name}}} is not a parameter of kind {kind.name}: use one of "
                                     f"{', '.join(kind.params)}, or {{{{ and }}}} for a brace itself")


def experiment_text(name, origin):
    """'preset cfs' for a shipped preset; 'experiment mine (mine.toml)' for
    a file of the user's, which is no preset of pario's."""
    if origin in (None, name):
        return f"preset {name}"
    return f"experiment {name} ({origin})"


def _names(value):
    """A string-or-list key as a tuple of names."""
    return (value,) if isinstance(value, str) else tuple(value)


def preset_figures(data):
    """The experiment's own [[figure]] tables as figure descriptions."""
    out = []
    for f in data.get("figure", []):
        series = f.get("series")
        out.append(Figure(id=f["id"], title=f["title"], x=f["x"], y=f["y"],
                          series=tuple(series) if isinstance(series, list) else series,
                          where=dict(f.get("where", {})), number=f.get("number", ""),
                          unit=f.get("unit", ""), spread=f.get("spread", True),
                          lines=tuple((float(y), t) for y, t in f.get("lines", [])),
                          note=f.get("note", ""), log_y=f.get("log_y", False),
                          normalise=dict(f.get("normalise", {})), annotate=f.get("annotate", ""),
                          plot=f.get("plot", True), beside=_names(f.get("beside", ()))))
    return out
