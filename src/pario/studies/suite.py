"""Kind `suite`: several kinds of the SGI 750 suite in one run, as the
report characterises a cluster (bonnie, perf, NAS btio, Laplace, FLASH-IO,
b_eff_io).

Each [[test]] names its `study` (a kind of the suite) and carries that
kind's test keys; planning, records, tables and figures are the study's
own, so a figure of the suite is exactly the figure its kind draws."""

from .. import schema
from ..errors import NoRunnablePoint
from . import Kind, kinds
from .io import select_tests

STUDIES = ("bonnie", "perf", "laplace", "flashio", "beff", "btio")


def _study(name):
    return kinds()[name]


class SuiteKind(Kind):
    name = "suite"
    description = "several SGI 750 suite kinds in one run: each test names its study"
    required_test = ("id", "study")

    @property
    def options(self):
        return _study(STUDIES[0]).options

    @property
    def sweep_keys(self):
        return _study(STUDIES[0]).sweep_keys

    @property
    def test_keys(self):
        keys = {"study": schema.one_of(*STUDIES)}
        for s in STUDIES:
            keys.update(_study(s).test_keys)
        return keys

    @property
    def params(self):
        out = {}
        for s in STUDIES:
            out.update(_study(s).params)
        return out

    @property
    def facts(self):
        return tuple(dict.fromkeys(f for s in STUDIES for f in _study(s).facts))

    @property
    def quantities(self):
        out = {}
        for s in STUDIES:
            out.update(_study(s).quantities)
        return out

    def describing(self, record):
        """What a point is and measured: as its study describes it."""
        return _study(record.params["study"])

    def point_kind(self, point):
        return _study(point.study)

    def planned_params(self, plan):
        """As the point's study reads its plan (a plan stored before plans
        named their study: as planned)."""
        return _study(plan["study"]).planned_params(plan) if plan.get("study") in STUDIES else plan

    def check(self, preset, path):
        for i, t in enumerate(preset["test"], 1):
            study = _study(t["study"])
            mine = {k: v for k, v in t.items() if k != "study"}
            schema.check_table(path, f"test[{i}].", mine, study.test_keys, study.required_test)
            study.check_test(t, path, f"test[{i}].")

    def _part(self, preset, study):
        return {**preset, "test": [t for t in preset["test"] if t["study"] == study]}

    def describe(self, preset):
        return [f"- {t['id']} ({t['study']}{', ' + t['figure'] if t.get('figure') else ''}): "
                f"{t.get('title', t['id'])}" for t in preset["test"]]

    def plan(self, preset, options):
        chosen = select_tests(preset, options.get("tests"))
        points, skipped = [], []
        for s in STUDIES:
            mine = [t for t in chosen if t["study"] == s]
            if mine:
                # one member without a point (btio at a non-square --ranks) is
                # skipped with its reasons; the suite runs the others
                try:
                    p, k = _study(s).plan_tests(self._part(preset, s), mine, options)
                except NoRunnablePoint as exc:
                    p, k = [], exc.skipped
                points += p
                skipped += k
        if not points:
            raise NoRunnablePoint("the plan has no runnable point: check --ranks and --tests", skipped)
        return points, skipped

    def _unused_by_study(self, preset, options):
        """{flag: {study: why}} over the studies of the chosen tests."""
        chosen = select_tests(preset, options.get("tests"))
        out = {}
        for s in dict.fromkeys(t["study"] for t in chosen):
            part = {**self._part(preset, s), "test": [t for t in chosen if t["study"] == s]}
            for flag, why in _study(s).unused_options(part, options).items():
                out.setdefault(flag, {})[s] = why
        return out, {t["study"] for t in chosen}

    def unused_options(self, preset, options):
        """An option every chosen study would ignore (--ranks with only
        bonnie chosen) is refused; one some ignore is a plan note."""
        unused, studies = self._unused_by_study(preset, options)
        return {flag: "; ".join(whys.values()) for flag, whys in unused.items() if set(whys) == studies}

    def plan_notes(self, preset, points, options):
        unused, studies = self._unused_by_study(preset, options)
        return [f"{flag} does not apply to the {', '.join(whys)} test(s): {'; '.join(whys.values())}"
                for flag, whys in unused.items() if set(whys) != studies]

    def records(self, point, result):
        return _study(point["params"]["study"]).records(point, result)

    def timed_seconds(self, record, result):
        return _study(record.params["study"]).timed_seconds(record, result)

    def _each(self, preset, records, options, what):
        out = []
        for s in STUDIES:
            mine = [r for r in records if r.params.get("study") == s]
            if mine:
                out += getattr(_study(s), what)(self._part(preset, s), mine, options)
        return out

    def figures(self, preset, records, options):
        return self._each(preset, records, options, "figures")

    def tables(self, preset, records, options):
        return self._each(preset, records, options, "tables")

    def notes(self, preset, records, options):
        return self._each(preset, records, options, "notes")


KIND = SuiteKind()
