"""A plan's engine command lines, checked by the engine before any runs.

What the engine refuses at a point (`--direct` on an API that cannot
bypass the cache, `--iterations 100000000`, a 3 GiB block, an option of
another backend...) it refuses at every run of that command line, so a
plan holding such a point is a bad invocation: one line, exit 2, nothing
stored.  The front end keeps no copy of the engine's limits: it sends
every distinct command line of the plan, with its rank count, to
`pario-engine check` (engine/src/util/check_mode.h), where each command's
own parser checks it and stops before MPI or any file.  What the machine
decides (directories, free space) is left to pario's own path checks and
to the engine at run time."""

import re
import subprocess
from pathlib import Path

from .errors import UsageError

# The engine's whole answer for a large plan takes well under a second;
# this only bounds an engine that hangs.
CHECK_TIMEOUT = 120
# Stand-ins for what differs between runs of one command line: the
# result file and the per-point file name (check mode opens neither).
RESULT_STANDIN = "RESULT.json"
NAME_STANDIN = "pario-check"


def _escape(word):
    return str(word).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def point_argv(point, directory):
    """The engine arguments (without the engine) a point runs with, the
    per-run parts replaced by stand-ins."""
    argv = [str(a) for a in point.engine_args(Path(directory), RESULT_STANDIN, {})]
    if point.takes_name():
        argv += ["--name", NAME_STANDIN]
    return argv


def ask_engine(engine, lines):
    """[(code, message)] for each (ranks, argv) in `lines`, in order."""
    if not lines:
        return []
    text = "".join("\t".join(_escape(w) for w in (ranks, *argv)) + "\n" for ranks, argv in lines)
    try:
        proc = subprocess.run([engine, "check"], input=text, capture_output=True, text=True,
                              errors="replace", timeout=CHECK_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise UsageError(f"{engine} did not answer 'check' within {CHECK_TIMEOUT} s: rebuild it "
                         "('make build') or set PARIO_ENGINE to a working pario-engine") from None
    except OSError as exc:
        raise UsageError(f"cannot start {engine}: {exc.strerror}: rebuild it ('make build') or set "
                         "PARIO_ENGINE to a working pario-engine") from None
    answers = []
    for line in proc.stdout.splitlines():
        code, _, message = line.partition("\t")
        if not code.lstrip("-").isdigit():
            break
        answers.append((int(code), message))
    if proc.returncode != 0 or len(answers) != len(lines):
        raise UsageError(f"{engine} gave no answer to 'pario-engine check' for the plan (is it a "
                         "pario-engine of this version?): run 'make build' or point PARIO_ENGINE at "
                         "this checkout's build/engine/pario-engine")
    return answers


def _tests_phrase(points, total):
    tests = list(dict.fromkeys(p.test_id for p in points))
    shown = ", ".join(tests[:6]) + (f" and {len(tests) - 6} more" if len(tests) > 6 else "")
    return f"{'test' if len(tests) == 1 else 'tests'} {shown} ({len(points)} of {total} points)"


def refused_points(engine, points, directory):
    """{message: [points]} of the points the engine refuses, in plan order."""
    distinct = {}
    for p in points:
        distinct.setdefault((p.ranks, tuple(point_argv(p, directory))), []).append(p)
    keys = list(distinct)
    answers = ask_engine(engine, [(ranks, list(argv)) for ranks, argv in keys])
    refused = {}
    for key, (code, message) in zip(keys, answers):
        if code != 0:
            refused.setdefault(message or f"refused with code {code}", []).extend(distinct[key])
    return refused


def _where_set(message, points, experiment):
    """' (test[2].grid in FILE)' when the option a refusal names ('--grid
    '200000' must be ...') is a key the refused points' test sets in the
    experiment, so the line names what to change there (tester 19); ''."""
    m = re.match(r"--([a-z][a-z-]*) '?([^' ]*)", message)
    if not m or experiment is None:
        return ""
    key = m.group(1).replace("-", "_")
    tests = experiment.data.get("test", [])
    for i, t in enumerate(tests, 1):
        # the test's own value, not one the command line gave over it
        if t.get("id") == points[0].test_id and key in t and str(t[key]) == m.group(2):
            return f" (test[{i}].{key} in {experiment.origin})"
    return ""


def check_plan(engine, points, directory, experiment=None):
    """Raise UsageError (one line) when the engine refuses any point of
    the plan: the refusal, then which tests and how many points it hits,
    and the experiment's key that set what was refused."""
    refused = refused_points(engine, points, directory)
    if not refused:
        return
    parts = [f"{_tests_phrase(ps, len(points))}: {message}{_where_set(message, ps, experiment)}"
             for message, ps in list(refused.items())[:3]]
    more = len(refused) - 3
    tail = f"; and {more} other refusal{'s' if more > 1 else ''}" if more > 0 else ""
    raise UsageError(f"the engine refuses {'; '.join(parts)}{tail}")
