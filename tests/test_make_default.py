"""Plain `make`, as a new user types it (tester 2, 25a): the default goal
installs what is missing AND builds the engine, so pario works after it.
Read from make's own plan (-n: nothing is run), in a copy of the tree's
Makefile beside an empty build state, so every step shows."""

import shutil
import subprocess

from conftest import ROOT


def test_plain_make_installs_and_builds(tmp_path):
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "requirements.txt").write_text("")
    (tmp_path / "pyproject.toml").write_text("")
    goal = subprocess.run(["make", "-pq"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert ".DEFAULT_GOAL := all" in goal.stdout.splitlines()
    plan = subprocess.run(["make", "-n"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert plan.returncode == 0, plan.stderr
    steps = plan.stdout
    # the Debian packages, the pinned venv, then both engine builds, in that order
    assert steps.index("dpkg-query") < steps.index("pip install -q -r requirements.txt") \
        < steps.index("cmake --build build/engine -j2") < steps.index("cmake --build build/engine-mpich")
