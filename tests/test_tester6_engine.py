"""Tester 6's engine items 7, i and k: refusals the engine's own parsers
make (the run and `pario-engine check` alike), and the files a stopped
`pario-engine io` leaves behind."""

import os
import signal
import subprocess
import time

import pytest


def _refused(engine, args):
    """One line, exit 2, before any I/O."""
    p = subprocess.run([engine, *args], capture_output=True, text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, (p.returncode, p.stderr)
    assert lines[0].startswith("pario-engine: error: "), lines[0]
    return lines[0]


def _checked(engine, ranks, args):
    """`pario-engine check`'s verdict on one line: (code, message)."""
    text = "\t".join(str(w) for w in (ranks, *args)) + "\n"
    p = subprocess.run([engine, "check"], input=text, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    code, message = p.stdout.rstrip("\n").split("\t", 1)
    return int(code), message


def test_stripe_dirs_with_an_object_store_is_refused(engine, shm_dir):
    a, b = os.path.join(shm_dir, "a"), os.path.join(shm_dir, "b")
    os.mkdir(a)
    os.mkdir(b)
    args = ["io", "--stripe-dirs", f"{a},{b}", "--stripe-unit", "8k", "--api", "s3",
            "--s3-endpoint", "127.0.0.1:9", "--s3-bucket", "pario-test", "--block", "8k",
            "--size", "96k", "--iterations", "1"]
    line = _refused(engine, args)
    assert "--api s3 writes objects to one store: drop --stripe-dirs" in line
    assert os.listdir(a) == [] and os.listdir(b) == []
    code, message = _checked(engine, 1, args)
    assert code == 2 and "drop --stripe-dirs" in message


# A valued option given twice is refused by name in every subcommand's
# parser (the last value used to win silently); --hint repeats by design.
TWICE = [
    (["io", "--dir", "D", "--block", "8k", "--block", "3m", "--size", "3m"], "--block"),
    (["io", "--dir", "D", "--api", "mpiio", "--mpiio-impl", "romio", "--mpiio-impl", "ompio",
      "--size", "1m"], "--mpiio-impl"),
    (["io", "--dir", "D", "--api", "hdf5", "--hdf5-align", "4k", "--hdf5-align", "8k",
      "--size", "1m"], "--hdf5-align"),
    (["probe", "--dir", "D", "--size", "1m", "--size", "2m"], "--size"),
    (["laplace", "--dir", "D", "--grid", "10", "--grid", "20"], "--grid"),
    (["bt", "--class", "S", "--class", "W"], "--class"),
    (["verify", "--file", "F", "--seed", "1", "--seed", "2"], "--seed"),
]


@pytest.mark.parametrize("args,name", TWICE, ids=[" ".join(a[:1] + [n]) for a, n in TWICE])
def test_a_valued_option_given_twice_is_refused_by_name(engine, shm_dir, args, name):
    args = [shm_dir if a == "D" else os.path.join(shm_dir, "f") if a == "F" else a for a in args]
    line = _refused(engine, args)
    assert f"{name} is given twice: give it once" in line, line
    assert os.listdir(shm_dir) == []
    if args[0] != "verify":  # verify has no check
        code, message = _checked(engine, 1, args)
        assert code == 2 and f"{name} is given twice" in message, message


def test_hints_and_flags_may_still_repeat(engine, shm_dir):
    code, message = _checked(engine, 1, ["io", "--dir", shm_dir, "--api", "mpiio", "--hint",
                                         "cb_nodes=1", "--hint", "striping_unit=65536",
                                         "--verify", "--verify", "--size", "1m"])
    assert code == 0, message


def _wait_for_file(directory, keep, deadline=30.0):
    """The name of the first file the run created in directory."""
    start = time.monotonic()
    while time.monotonic() - start < deadline:
        made = [n for n in os.listdir(directory) if n not in keep]
        if made:
            return made[0]
        time.sleep(0.05)
    raise AssertionError(f"no file appeared in {directory}")


@pytest.mark.parametrize("sig,ranks", [("SIGINT", 1), ("SIGTERM", 2)])
def test_a_stopped_io_run_removes_the_files_it_created_and_only_those(engine, launcher, shm_dir,
                                                                      sig, ranks):
    """Ctrl-C of the engine alone (SIGINT), and mpirun stopped (it passes
    SIGTERM to its ranks): the run's file goes, a file of the user's in
    --dir stays, the exit is non-zero and one line says why."""
    theirs = os.path.join(shm_dir, "users-file")
    with open(theirs, "w") as f:
        f.write("keep me")
    # one iteration of a file big enough to outlive the signal: a run of
    # many iterations removes its file between them, and a signal there
    # has nothing to remove (and says nothing)
    cmd = [engine, "io", "--dir", shm_dir, "--block", "4k", "--size", "1g", "--iterations", "1"]
    argv = cmd if ranks == 1 else launcher.command(ranks, cmd)
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         env=launcher.environment(), start_new_session=True)
    try:
        _wait_for_file(shm_dir, {"users-file"})
        time.sleep(0.2)  # past the create, into the timed write
        p.send_signal(getattr(signal, sig))
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode != 0
    assert sorted(os.listdir(shm_dir)) == ["users-file"]
    with open(theirs) as f:
        assert f.read() == "keep me"
    if ranks == 1:  # mpirun may close its forwarding of the ranks' stderr before the line
        assert "pario-engine: stopped by SIGINT: removed the files this process created " \
            "(1 file)" in err, err
