"""pario asks a --launcher-template's program which MPI it is
(`PROGRAM --version`, mpi.flavour_of_launcher), also under --dry-run: the
question runs in a session of its own that is taken down whole, so nothing
a user's launch script starts while answering outlives it (tester 10: a
script's background sleeps were left under PID 1)."""

import sys
import time

from conftest import ROOT, process_alive as _alive, wait_for

sys.path.insert(0, str(ROOT / "src"))
from pario.launch import choose_launcher  # noqa: E402

# Answers --version as Open MPI does, leaving a child asleep; or, with
# {hang} set, never answers at all.
ANSWERS = """#!/bin/sh
if [ "$1" = --version ]; then
    sleep 300 >/dev/null 2>&1 &
    echo $! > {pids}
    [ {hang} = 1 ] && sleep 300
    echo "mpirun (Open MPI) 4.1.4"
    exit 0
fi
exec mpirun "$@"
"""


def _launcher(tmp_path, hang):
    pids = tmp_path / "pids"
    script = tmp_path / "mylaunch"
    script.write_text(ANSWERS.format(pids=pids, hang=int(hang)))
    script.chmod(0o755)
    t = time.monotonic()
    launcher = choose_launcher(template=f"{script} -n {{ranks}} {{engine}} {{engine_args}}")
    return launcher, int(pids.read_text()), time.monotonic() - t


def test_the_version_question_leaves_nothing_running(tmp_path):
    launcher, child, _ = _launcher(tmp_path, hang=False)
    assert launcher.flavour == "openmpi"  # the answer is still read
    assert wait_for(lambda: not _alive(child), 5), f"process {child} outlived the question"


def test_a_program_that_never_answers_is_of_unknown_flavour_and_taken_down(tmp_path):
    launcher, child, seconds = _launcher(tmp_path, hang=True)
    assert launcher.flavour == "" and seconds < 10  # a template's program gets 2 s
    assert wait_for(lambda: not _alive(child), 5), f"process {child} outlived the question"
