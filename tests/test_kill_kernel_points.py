"""A `pario run` of the SGI 750 suite's kernels stopped mid-point (SIGTERM
to pario, or SIGKILL, after which only its watchdog is left) leaves none
of the point's files behind, and touches no file of the user's in --dir,
not even one named like a kernel's own default name.  Every kernel point
gets a --name of the run's own (studies/kernel.py), so the runner and the
watchdog know exactly which files are the point's."""

import json
import os
import signal
import subprocess
import sys

import pytest

from conftest import ROOT, wait_for

USER_FILES = {"notes.txt": b"the user's own\n",
              "pario-beff.1.2.t0": b"named like beff's default, but the user's\n",
              "pario-bonnie.1.2": b"named like bonnie's default, but the user's\n"}


def pario_files(directory):
    return sorted(set(os.listdir(directory)) - set(USER_FILES))


# The sgi750 suite's kernels, each given far more work than the moment of
# the signal leaves it: the signal lands mid-point however loaded the
# machine (the quick preset's 3-second b_eff_io could end between seeing
# its file and the signal, and the run then finished instead of stopping).
LONG = """\
name = "stopped-kernels"
kind = "suite"
title = "kernels stopped mid-point"
[sweep]
ranks = [2]
iterations = 1
[[test]]
id = "beff"
study = "beff"
title = "b_eff_io"
time = 600
max_chunk = "1m"
[[test]]
id = "bonnie"
study = "bonnie"
title = "bonnie"
chunk = "8k"
size = "2g"
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("test", ["beff", "bonnie"])
def test_a_kernel_point_stopped_midway_leaves_nothing_of_pario_behind(shm_dir, tmp_path, test, sig):
    for name, data in USER_FILES.items():
        (shm_dir / name).write_bytes(data)
    experiment = tmp_path / "long.toml"
    experiment.write_text(LONG)
    run = subprocess.Popen([sys.executable, "-m", "pario", "run", str(experiment), "--tests", test,
                            "--dir", str(shm_dir)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src"),
                                           "PARIO_DB": str(tmp_path / "r.sqlite")})
    try:
        # the waits below only bound a hang: each ends as soon as its condition holds
        made = wait_for(lambda: pario_files(shm_dir), 120)
        assert made, f"the point never created a file: {run.communicate(timeout=60)}"
        assert all(n.startswith("pario-") and "-run1-point0" in n for n in made), made
        run.send_signal(sig)
        _, err = run.communicate(timeout=120)
        if sig == signal.SIGTERM:
            # pario returns only once every rank is gone and its files removed
            assert pario_files(shm_dir) == [], err
        else:  # only the watchdog is left to clean up
            assert wait_for(lambda: not pario_files(shm_dir), 120), pario_files(shm_dir)
    finally:
        if run.poll() is None:
            run.kill()
    if sig == signal.SIGTERM:
        assert run.returncode == 130 and "stopped by SIGTERM" in err, err
    for name, data in USER_FILES.items():
        assert (shm_dir / name).read_bytes() == data


# kernel and the options that make its run tiny
KERNELS = {"bonnie": ["--size", "1m"], "perf": ["--size", "1m"], "laplace": ["--grid", "10", "--iterations", "1"],
           "flashio": ["--blocks", "1"], "beff": ["-T", "1"]}


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_kernel_takes_a_plain_name_and_never_overwrites_a_file_there(engine, shm_dir, kernel):
    bad = subprocess.run([engine, kernel, "--dir", str(shm_dir), "--name", "a/b"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.splitlines() == [
        "pario-engine: error: --name 'a/b' must be a plain file name (no '/'), at most 200 characters"], bad.stderr
    theirs = {n: f"{n}: someone else's\n" for n in ("n", "n.chk", "n_hdf5_chk_0000", "n.t0")}
    for n, text in theirs.items():
        (shm_dir / n).write_text(text)
    p = subprocess.run([engine, kernel, "--dir", str(shm_dir), "--name", "n", *KERNELS[kernel]],
                       capture_output=True, text=True, timeout=60)
    lines = [line for line in p.stderr.splitlines() if line.startswith("pario-engine: error:")]
    # one wording in every kernel, whose fix is another --name (tester 2, 25f): not "check
    # permissions", not "check --dir", not MPI's own text; bad input, so exit 2
    taken = next((shm_dir / n for n in theirs if lines and f"{shm_dir / n} " in lines[0]), "?")
    assert p.returncode == 2 and lines == [
        f"pario-engine: error: {taken} already exists: pario never overwrites or removes a file it did "
        "not create; remove it or choose another --name"], p.stderr
    assert {f.name: f.read_text() for f in shm_dir.iterdir()} == theirs


def test_already_exists_names_the_part_that_exists(engine, launcher, shm_dir):
    """Not the base name nor the first stripe part: the file that is there
    (epio's NAME.0001, a stripe's second part), which is left alone."""
    s0, s1 = shm_dir / "s0", shm_dir / "s1"
    s0.mkdir()
    s1.mkdir()
    (s1 / "x").write_text("theirs\n")
    (shm_dir / "mp.0001").write_text("theirs\n")
    cases = [
        ([engine, "io", "--stripe-dirs", f"{s0},{s1}", "--stripe-unit", "64k", "--name", "x", "--size", "1m",
          "--block", "64k"], f"{s1 / 'x'} already exists: pario never overwrites"),
        (launcher.command(2, [engine, "bt", "--class", "S", "--io", "epio", "--dir", str(shm_dir), "--name", "mp"]),
         f"--io per-rank: {shm_dir / 'mp.0001'} already exists: pario never overwrites or removes a file it did "
         "not create; remove it or choose another --name"),
    ]
    for argv, phrase in cases:
        p = subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=120)
        lines = [line for line in p.stderr.splitlines() if line.startswith("pario-engine: error:")]
        assert p.returncode == 2 and len(lines) == 1 and phrase in lines[0], p.stderr
    assert sorted(str(f.relative_to(shm_dir)) for f in shm_dir.rglob("*") if f.is_file()) == ["mp.0001", "s1/x"]
    assert (s1 / "x").read_text() == (shm_dir / "mp.0001").read_text() == "theirs\n"


@pytest.mark.parametrize("impl", ["ompio", "romio"])
def test_laplace_says_when_its_cb_hint_is_ignored(engine, shm_dir, tmp_path, impl):
    """--cb sets a ROMIO hint: under OMPIO the user is told, on screen and in the result."""
    out = tmp_path / "r.json"
    p = subprocess.run([engine, "laplace", "--dir", str(shm_dir), "--grid", "50", "--iterations", "2", "--cb",
                        "disable", "--mpiio-impl", impl, "--json", str(out)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    said = [line for line in p.stdout.splitlines() if line.startswith("warning: --cb sets romio_cb_write")]
    warnings = json.loads(out.read_text())["warnings"]
    if impl == "ompio":
        assert len(said) == 1 and "OMPIO ignores it" in said[0] and "give --mpiio-impl romio" in said[0]
        assert warnings == [said[0][len("warning: "):]]
    else:
        assert said == [] and warnings == []
    assert os.listdir(shm_dir) == []
