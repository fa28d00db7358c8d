"""Machine descriptions: TOML files of parameters, each with its source.

A machine file has `name`, `title`, `source` (the document it is read
from) and one table per part of the machine (`[network]`, `[io_node]`,
...).  Every parameter of the table in params.py must be there, each as
`key = { value = "...", source = "where this number comes from" }`.
`--set key=value` changes one parameter for one run; the result records
every override beside the machine's name."""

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..tomlfile import Shipped, locate, read_text
from ..units import engine_size, format_size
from .params import PARAMS, parse_value

MACHINE_DIR = Path(__file__).resolve().parent / "machines"
MACHINES = Shipped("machine", "machine", MACHINE_DIR,
                   " (or probe:RUN, this host as a stored 'pario probe' run measured it)")


def machine_names():
    return MACHINES.names()


@dataclass
class Machine:
    name: str
    title: str
    values: dict
    sources: dict
    overrides: dict = field(default_factory=dict)
    written: dict = field(default_factory=dict)  # each value as its file writes it
    # What --print-machine writes back: the name as its file gave it (a
    # file of the user's is shown as "NAME (from PATH)", which a printed
    # copy must not carry into the next file's name), and the document the
    # values come from (a report, or a probe run).
    file_name: str = ""
    source: str = ""
    # A host whose page cache the model leaves out (a probe's machine): its
    # cached regimes (reads that may hit the cache, writes without fsync)
    # are not predicted (model/scope.py refuses them).
    host_page_cache: bool = False
    # What a prediction from this machine must carry with it (a probe's
    # fitted line that misses its own rows, storage that was memory): one
    # line each, printed with the plan and stored in every point's warnings.
    warnings: list = field(default_factory=list)
    # What the "disks" are where not disks (a tmpfs probe's: memory), for
    # the bound lines (explain.py); "" = disks.
    storage: str = ""
    # The ranks a probe's machine was measured with (0: a described
    # machine, whose values hold for any number): a one-rank probe measured
    # nothing two ranks do to each other (probed.unmeasured_ranks).
    measured_ranks: int = 0
    # The trials whose best each value stands for (a probe's rows taken as
    # the best of a measured run's --iterations: probed.as_best_of); 0: a
    # description, whose predictions are one deterministic trial.  compare
    # holds a prediction against a measurement of that many trials.
    best_of: int = 0
    # --set keys given the value the machine had ({key: as its file wrote
    # it}): a prediction labelled with them would be the machine's own
    unchanged: dict = field(default_factory=dict)

    def __getitem__(self, key):
        return self.values[key]

    def describe(self):
        """The machine as stored with a predicted run."""
        return {"name": self.name, "title": self.title,
                "parameters": {k: {"value": self.values[k], "source": self.sources[k]}
                               for k in PARAMS},
                "overrides": dict(self.overrides), "warnings": list(self.warnings),
                "best_of": self.best_of}


# Where a write without fsync stops and what a read may find, by kind, as
# headings and compare name them (a measured run's: this host's page cache).
CACHE_NAMES = {"page": "the page cache", "io_node": "the I/O nodes' caches", "none": "no cache"}


def caches_of(values):
    """The caches of a machine's values, a key of CACHE_NAMES: "page" (a
    host's page cache), "io_node" (the I/O nodes' caches, which the
    clients' eviction before a read does not empty) or "none"."""
    if values.get("host.page_cache"):
        return "page"
    return "io_node" if values.get("io_node.cache") else "none"


def result_caches(doc):
    """A result document's machine's caches (caches_of): a
    prediction's target says it, one stored before it did takes it from
    its machine's stored parameters; None for a measured run."""
    caches = (doc.get("target") or {}).get("caches")
    if caches:
        return caches
    params = (doc.get("model") or {}).get("machine", {}).get("parameters")
    return caches_of({k: v.get("value") for k, v in params.items()}) if params else None


# A machine file's top-level keys besides its [part] tables.
_LABELS = ("name", "title", "source", "best_of")


def _flatten(data, path):
    out = {}
    for section, table in data.items():
        if section in _LABELS:
            continue
        if not isinstance(table, dict):
            raise UsageError(f"machine {path}: '{section}' must be a table such as [io_node]")
        for key, entry in table.items():
            name = f"{section}.{key}"
            if not isinstance(entry, dict) or set(entry) != {"value", "source"}:
                raise UsageError(f"machine {path}: {name} must be written "
                                 "{ value = ..., source = \"where it comes from\" }")
            out[name] = entry
    return out


def check_relations(values, where):
    """Relations between parameters that a value alone cannot break."""
    v = values
    problems = []
    if v["io_node.count"] < 1:
        problems.append("io_node.count must be at least 1")
    if v["io_node.disks"] < 1:
        problems.append("io_node.disks must be at least 1")
    disks = v["io_node.count"] * v["io_node.disks"]
    if disks >= 1 and not 1 <= v["stripe.count"] <= disks:
        problems.append(f"stripe.count ({v['stripe.count']:g}) must be between 1 and io_node.count x "
                        f"io_node.disks ({v['io_node.count']:g} x {v['io_node.disks']:g} = {disks:g}): "
                        f"--set stripe.count={max(1, min(v['stripe.count'], disks)):g}, or more I/O nodes "
                        "or disks")
    if v["stripe.unit"] <= 0:
        problems.append("stripe.unit must be more than 0")
    for rate in ("disk.rate", "disk.write_rate"):
        if v[rate] <= 0:
            problems.append(f"{rate} must be more than 0")
    # io_node.cache = 0 is "no cache" (params.py): every request goes to a
    # disk.  Any other size must hold a block, and the refusal says both.
    if v["io_node.cache"]:
        if v["io_node.cache_block"] != v["stripe.unit"]:
            problems.append(f"io_node.cache_block ({format_size(v['io_node.cache_block'])}) must equal "
                            f"stripe.unit ({format_size(v['stripe.unit'])}) when io_node.cache is set: "
                            f"--set io_node.cache_block={engine_size(v['stripe.unit'])} too")
        elif v["io_node.cache"] < v["io_node.cache_block"]:
            problems.append(f"io_node.cache must hold at least one io_node.cache_block "
                            f"({format_size(v['io_node.cache_block'])}), or be 0 for no cache")
    if v["io_node.prefetch"] < 1 or v["io_node.write_group"] < 1:
        problems.append("io_node.prefetch and io_node.write_group must be at least 1")
    if v["io_node.cache"] and v["io_node.prefetch"] * v["io_node.cache_block"] > v["io_node.cache"]:
        # one miss would bring in more than the cache holds
        problems.append(f"io_node.prefetch x io_node.cache_block must fit in io_node.cache: use "
                        f"io_node.prefetch at most {v['io_node.cache'] // v['io_node.cache_block']}")
    if v["io_node.readahead_at"] > v["io_node.prefetch"]:
        problems.append(f"io_node.readahead_at ({v['io_node.readahead_at']:g}) must be at most "
                        f"io_node.prefetch ({v['io_node.prefetch']:g}): --set "
                        f"io_node.readahead_at={v['io_node.prefetch']:g} too, or a larger io_node.prefetch")
    if v["host.page_cache"] and v["host.cached_read_rate"] <= 0:
        problems.append("host.cached_read_rate must be more than 0 when host.page_cache is set")
    if v["agent.cb_buffer"] and not v["host.cached_read_rate"] > 0:
        problems.append("agent.cb_buffer needs host.cached_read_rate (a buffer's holes are read "
                        "through the page cache)")
    if v["agent.message_overhead"] and not v["agent.message_rate"]:
        problems.append("agent.message_overhead needs agent.message_rate (0 = no messages)")
    if problems:
        raise UsageError(f"{where}: {problems[0]}")


def _check_label(path, key, value, empty=False):
    """A machine file's name, title and source are printed in every table,
    plot and report of its runs: a line of printable text (a control
    character would reach the user's terminal raw), not empty where
    `empty` is not allowed."""
    if not isinstance(value, str) or not (empty or value.strip()) or not value.isprintable():
        raise UsageError(f"machine {path}: '{key}' must be a line of printable text, "
                         f"e.g. {key} = \"my-host\"")


def _missing_text(path, missing):
    """The refusal of a machine file that leaves parameters out, most
    often one written by an older pario (--print-machine) before they were
    added: each named (three at most), the first's line to add, and where
    to read what a value means or get the whole file again."""
    shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    table, _, key = missing[0].partition(".")
    return (f"machine {path} does not set {shown} (a file written before pario had "
            f"{'them' if len(missing) > 1 else 'it'}?): add each under its table, e.g. [{table}] "
            f"{key} = {{ value = \"0\", source = \"...\" }} where 'pario model --parameters' says 0 "
            "leaves that part out, or write the file again with 'pario model --machine M "
            "--print-machine' (M: the shipped machine or probe:RUN it came from)")


def load_machine(name, overrides=()):
    """A machine by name (or a path to a .toml file), with `key=value`
    overrides applied and checked."""
    path = locate(name, MACHINES)
    text = read_text(path, "machine")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"machine {path}: {exc}") from exc
    if "name" not in data:
        raise UsageError(f"machine {path} has no 'name': see 'pario model --machine ipsc860 "
                         "--print-machine' for the shape")
    for key in ("name", "title", "source"):
        if key in data:
            _check_label(path, key, data[key], empty=key == "source")
    best_of = data.get("best_of", 0)
    if not isinstance(best_of, int) or isinstance(best_of, bool) or not 0 <= best_of <= 1000:
        raise UsageError(f"machine {path}: best_of must be a whole number of trials from 0 to 1000 "
                         "(0: one deterministic trial), as --print-machine writes it")
    entries = _flatten(data, path)
    unknown = sorted(set(entries) - set(PARAMS))
    if unknown:
        raise UsageError(f"machine {path}: '{unknown[0]}' is not a model parameter "
                         "(see docs/model.md for the list)")
    missing = [k for k in PARAMS if k not in entries]
    if missing:
        raise UsageError(_missing_text(path, missing))
    values, sources = {}, {}
    for key, entry in entries.items():
        try:
            values[key] = parse_value(key, entry["value"])
        except UsageError as exc:
            raise UsageError(f"machine {path}: {exc}") from None
        sources[key] = str(entry["source"])
    # A file of the user's is named with its path, so a run predicted from
    # an edited copy of a shipped machine never shows as the shipped one.
    shipped = path.resolve().parent == MACHINE_DIR.resolve()
    name = str(data["name"]) if shipped else f"{data['name']} (from {path})"
    machine = Machine(name=name, title=str(data.get("title", data["name"])),
                      values=values, sources=sources, file_name=str(data["name"]),
                      source=str(data.get("source", "")), best_of=best_of)
    check_relations(values, f"machine {path}")
    machine.written = {k: e["value"] for k, e in entries.items()}
    apply_overrides(machine, overrides)
    return machine


def apply_overrides(machine, overrides):
    """`--set key=value` items, each checked, then the relations again."""
    for item in overrides:
        key, sep, text = item.partition("=")
        key, text = key.strip(), text.strip()
        if sep and key and not text:
            raise UsageError(f"--set {key}= has an empty value: give one, e.g. --set io_node.cache=5MB")
        if not sep or not key:
            raise UsageError(f"--set '{item}' must be key=value, e.g. --set io_node.cache=5MB")
        if key in PARAMS and "," in text:  # no value is a list: a sweep of a parameter is several runs
            raise UsageError(f"--set {key}={text}: --set takes one value, not a list; run "
                             f"'pario model' once per value (--set {key}={text.split(',')[0].strip()}, "
                             "...)")
        value = parse_value(key, text)
        if value == machine.values[key]:  # a what-if that changes nothing: scope.check_sets refuses it
            machine.unchanged[key] = machine.written[key]
        machine.values[key] = value
        machine.sources[key] = f"--set {key}={text}"
        # as a machine file writes it: a count as a number, the rest as typed
        machine.written[key] = machine.values[key] if PARAMS[key].kind == "count" else text
        machine.overrides[key] = text
    check_relations(machine.values, "--set")


def refuse_repeated_keys(overrides):
    """Two --set of one key: which was meant cannot be known (and the
    probe's read-ahead would take the first where the rest take the last)."""
    seen = {}
    for item in overrides:
        key = item.partition("=")[0].strip()
        if key in seen:
            raise UsageError(f"--set {key} is given twice ('{seen[key]}' and '{item}'): give each "
                             "parameter once")
        seen[key] = item


def machine_by_spec(spec, overrides=(), store=None, trials=None):
    """--machine: a shipped name, a .toml file, or probe:RUN (a stored
    `pario probe` run of `store`, see probed.py; its rows taken as the best
    of `trials` trials, the measured run's --iterations, when given)."""
    refuse_repeated_keys(overrides)
    if spec.startswith("probe:"):
        from .probed import machine_from_probe

        text = spec[len("probe:"):]
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) < 1 << 63:  # SQLite ids, ASCII digits
            raise UsageError(f"--machine {spec}: give a probe run's id, e.g. probe:7 (see 'pario list')")
        return machine_from_probe(store, int(text), overrides, trials)
    return load_machine(spec, overrides)


_WITH_SET = " with --set "


def machine_toml(machine):
    """The machine as a TOML file `pario model --machine FILE.toml` reads:
    the name its own file gave it (a round trip adds nothing to it), the
    document its values come from, and every value with its source (--set
    ones say so, and so do the name and title of a machine with any)."""
    def q(text):
        return json.dumps(str(text))  # a TOML basic string is JSON's string syntax

    # A file printed from a printed file says every --set once, the latest
    # value of each (its sources keep them), never "with --set A with --set B".
    name = (machine.file_name or machine.name).split(_WITH_SET)[0]
    title = re.sub(r", with .* set by hand \(--set\)$", "", machine.title)
    by_hand = ", ".join(machine.sources[k][len("--set "):] for k in PARAMS
                        if machine.sources[k].startswith("--set "))
    if by_hand:  # no longer the machine its name and title describe: say how it differs
        name, title = f"{name}{_WITH_SET}{by_hand}", f"{title}, with {by_hand} set by hand (--set)"
    lines = [f"# {title}", f"name = {q(name)}", f"title = {q(title)}", f"source = {q(machine.source)}"]
    if machine.best_of:  # a probe's rows as the best of that many trials
        lines.append(f"best_of = {machine.best_of}")
    lines[1:1] = [f"# warning: {w}" for w in machine.warnings]
    section = None
    for key in PARAMS:
        part, name = key.split(".")
        if part != section:
            lines += ["", f"[{part}]"]
            section = part
        value = machine.written[key]
        shown = value if isinstance(value, int) else q(value)
        lines.append(f"{name} = {{ value = {shown}, source = {q(machine.sources[key])} }}")
    return "\n".join(lines) + "\n"
