"""What the SGI 750 suite's kinds share (bonnie, perf, laplace, flashio,
beff): not a kind itself.

Each of those kinds runs one engine command per point.  A preset's
[[test]] carries the command's settings (`chunk`, `sizes`, `cb`, ...), its
rank counts (`ranks`, else [sweep] ranks) and the report's figure number
(`figure`); a `quick` table inside a test replaces any of its keys under
--quick.  Every kernel takes --name (the base of its file names) and
creates its files exclusively (O_EXCL, MPI's EXCL): the runner gives each
point a name of the run's own, so that a point it has to kill (Ctrl-C,
SIGTERM, kill -9 of pario) leaves nothing behind (pario.watchdog)."""

import os
from dataclasses import dataclass, field

from .. import schema
from ..errors import NoRunnablePoint
from ..figures import Param, Quantity
from . import Kind, Option, kinds, positive_int
from .io import int_list, rounds_of, select_tests, setting

COMMON_TEST_KEYS = {"id": schema.ID, "title": schema.STRING, "ranks": schema.POSITIVES,
                    "figure": schema.STRING, "quick": schema.TABLE}
RATE = Quantity("rate", "MiB/s", "max", ".1f")
COMMON_PARAMS = {"ranks": Param("processes", str, "log2"), "test": Param("test"),
                 "study": Param("study"), "trial": Param("round")}


def settings_text(study, settings):
    """'class=W subtype=full', 'size=16 MiB': what tells a kernel's points
    of one test apart, as labels and failure lines name them (a size as
    sizes print, as free space does)."""
    params = kinds()[study].params
    return " ".join(f"{k}={params[k].fmt(v) if getattr(params.get(k), 'unit', '') == 'bytes' else v}"
                    for k, v in settings.items() if k != "figure" and v not in (None, ""))


@dataclass
class KernelPoint:
    study: str
    test_id: str
    title: str
    ranks: int
    args: list                          # the engine command and its settings, without --dir/--json
    settings: dict = field(default_factory=dict)   # what the point is, for records and the store
    trial: int = 1
    summarize: object = None            # result -> progress line
    expected_warnings: tuple = ()       # engine warnings about the plan's own choices: left out
    # Bytes the engine holds under --dir at once, where the plan knows them
    # (perf's one file of ranks x size); 0: the engine's own check alone.
    writes: int = 0

    def engine_args(self, directory, json_path, earlier=None):
        return [*self.args, "--dir", str(directory), "--json", str(json_path)]

    def space_needs(self, directory):
        """(directory, bytes) held against the free space before anything
        runs (pario.space): a plan that cannot fit is refused once, not
        stored as a run of failed points."""
        return [(directory, self.writes)] if self.writes else []

    def takes_name(self):
        return True    # the runner's name, so it knows this point's files if it must kill it

    def label(self):
        names = " ".join(dict.fromkeys((self.study, self.test_id)))  # perf's test is the study perf
        shown = settings_text(self.study, self.settings)
        return f"{names} ranks={self.ranks} {shown} (round {self.trial})".replace("  ", " ")

    def summary(self, result):
        return self.summarize(result) if self.summarize else "ok"

    def remember(self, result, earlier):
        pass

    def columns(self):
        return {"title": self.title, "layout": self.study, "files": "shared", "api": self.study,
                "block_bytes": 0, "size_bytes": 0, "group_size": 0}

    def params(self):
        return {"study": self.study, "test": self.test_id, "title": self.title, "ranks": self.ranks,
                "trial": self.trial, **self.settings}


# A kernel point's stored plan (params()) beside its settings
KERNEL_PLAN_KEYS = ("study", "test", "title", "ranks", "trial")


def node_memory():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0


class KernelKind(Kind):
    """A kind of the suite: one engine command per point.  Subclasses give
    `own_test_keys`, `required_own` and `points(test, ranks, trials)`, and
    `records`, `figures`, `tables` as any kind."""
    own_test_keys = {}
    required_own = ()
    options = (Option(("--iterations",), dict(type=positive_int, help="trials per point (best is reported)")),)
    sweep_keys = {"ranks": schema.POSITIVES, "iterations": schema.POSITIVE}
    required_test = ("id",)

    @property
    def test_keys(self):
        return {**COMMON_TEST_KEYS, **self.own_test_keys}

    def check(self, preset, path):
        for i, t in enumerate(preset["test"], 1):
            self.check_test(t, path, f"test[{i}].")

    def check_test(self, test, path, where):
        keys = {k: v for k, v in self.test_keys.items() if k not in ("id", "quick")}
        schema.check_table(path, f"{where}quick.", test.get("quick", {}), keys)
        for key in self.required_own:
            if key not in test:
                raise schema.PresetError(path, f"{where}{key}", "missing (required)")

    def describe(self, preset):
        return [f"- {t['id']}: {t.get('title', t['id'])}" for t in preset["test"]]

    def plan(self, preset, options):
        return self.plan_tests(preset, select_tests(preset, options.get("tests")), options)

    def plan_tests(self, preset, tests, options):
        quick = bool(options.get("quick"))
        trials = rounds_of(options, preset, 1)
        points, skipped = [], []
        for t in tests:
            test = {**t, **(t.get("quick", {}) if quick else {})}
            ranks, ranks_name = setting(options, preset, "ranks", "--ranks")
            if options.get("ranks") is None and test.get("ranks"):
                ranks, ranks_name = test["ranks"], f"test {test['id']}'s ranks"
            ranks = int_list(ranks or [1], ranks_name)
            p, s = self.points(test, ranks, trials)
            points += p
            skipped += s
        if not points:
            raise NoRunnablePoint("the plan has no runnable point: check --ranks and the preset's tests",
                                  skipped)
        return points, skipped

    def points(self, test, ranks, trials):
        raise NotImplementedError
