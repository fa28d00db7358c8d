"""Expand an experiment into points: one engine run each.

A point is one test (layout, phases, grouping) at one rank count and one
block size.  Points the layout cannot do (a block larger than a rank's
share, a size that does not divide) are left out of the plan with the
reason, rather than sent to fail in the engine."""

from dataclasses import dataclass, field

from .errors import UsageError
from .units import engine_size, format_size, parse_size


@dataclass
class Point:
    test_id: str
    title: str
    layout: str
    phases: list
    ranks: int
    block: int
    size: int
    group: int = 0
    files: str = "shared"
    api: str = "posix"
    iterations: int = 3
    extra: list = field(default_factory=list)

    # The interface every kind of point offers the runner (see nht1.BtPoint).
    def engine_args(self, directory, json_path, earlier=None):
        args = ["io", "--dir", str(directory), "--layout", self.layout, "--files", self.files,
                "--api", self.api, "--block", engine_size(self.block),
                "--size", engine_size(self.size), "--phases", ",".join(self.phases),
                "--iterations", str(self.iterations), "--json", str(json_path)]
        if self.group:
            args += ["--group", str(self.group)]
        return args + list(self.extra)

    def takes_name(self):
        return True

    def remember(self, result, earlier):
        """Nothing here feeds later points."""

    def summary(self, result):
        return ", ".join(f"{ph['name']} {ph['summary']['best_mib_per_s']:.0f} MiB/s"
                         for ph in result["phases"])

    def label(self):
        return f"{self.test_id} ranks={self.ranks} block={format_size(self.block)}"


def _why_impossible(layout, size, block, ranks, files):
    if block % 8:
        return "block is not a multiple of 8 bytes"
    if layout == "broadcast":
        return None if size % block == 0 and block <= size else "size is not a whole number of blocks"
    per_file = size // ranks if files == "per-rank" else size
    sharers = 1 if files == "per-rank" else ranks
    if size % ranks and files == "per-rank":
        return "size does not split into per-rank files"
    if block > per_file // sharers:
        return "block is larger than a rank's share"
    if per_file % (block * sharers):
        return "size is not a whole number of ranks x blocks"
    return None


def _int_list(values, what):
    try:
        out = [int(v) for v in values]
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{what} must be whole numbers, e.g. 1,2,4,8") from exc
    if not out or any(v <= 0 for v in out):
        raise UsageError(f"{what} must be whole numbers of at least 1, e.g. 1,2,4,8")
    return out


def select_tests(preset, tests):
    """The preset's tests, or those named by --tests (each must exist)."""
    chosen = preset["test"]
    if not tests:
        return chosen
    known = {t["id"] for t in chosen}
    unknown = [t for t in tests if t not in known]
    if unknown:
        raise UsageError(f"--tests {','.join(unknown)} unknown in preset {preset['name']}: "
                         f"use some of {', '.join(sorted(known))}")
    return [t for t in chosen if t["id"] in tests]


def plan(preset, quick=False, ranks=None, blocks=None, size=None, iterations=None,
         tests=None, files=None, extra=()):
    """Returns (points, skipped) where skipped holds (point, reason)."""
    sweep = dict(preset["sweep"])
    if quick and "quick" in preset:
        sweep.update(preset["quick"])
    rank_list = _int_list(ranks if ranks is not None else sweep["ranks"], "--ranks")
    block_list = [parse_size(b, "--blocks entry") for b in (blocks or sweep["blocks"])]
    iters = iterations if iterations is not None else int(sweep.get("iterations", 3))
    if iters <= 0:
        raise UsageError("--iterations must be at least 1")
    chosen = select_tests(preset, tests)
    if not tests and quick:
        chosen = [t for t in chosen if t.get("quick", True)]

    points, skipped = [], []
    for test in chosen:
        # A preset's per-test size (broadcast's 8 MB file) is kept unless the
        # user sets one size for everything.
        test_size = parse_size(size if size else test.get("size", sweep["size"]), "--size")
        for r in rank_list:
            for b in block_list:
                p = Point(test_id=test["id"], title=test.get("title", test["id"]),
                          layout=test["layout"], phases=list(test["phases"]), ranks=r, block=b,
                          size=test_size, group=int(test.get("group", 0)),
                          files=files or test.get("files", "shared"),
                          api=test.get("api", "posix"), iterations=iters, extra=list(extra))
                why = _why_impossible(p.layout, p.size, p.block, p.ranks, p.files)
                if why:
                    skipped.append((p, why))
                else:
                    points.append(p)
    if not points:
        raise UsageError("the plan has no runnable point: check --ranks, --blocks and --size "
                         "(each rank needs at least one whole block)")
    return points, skipped
