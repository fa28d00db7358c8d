"""The kernels touch only files they created: a symlink planted at a
kernel's scratch name while it runs is neither followed nor removed; the
kernel stops with one line and the file the link points to is unchanged.
bonnie stands for the POSIX kernels (create_exclusive, open_ours,
remove_if_ours), perf for the MPI-IO ones (mpi_file_create notes the file,
mpi_file_reopen checks it before MPI-IO could follow a link)."""

import os
import subprocess
import time

import pytest

PRECIOUS = b"someone else's data\n"


def plant_symlink_when_created(proc, directory, prefix, victim, timeout=60):
    """Wait for the kernel's file, then swap it for a symlink to victim in
    one rename, as another writer in --dir could.  Returns the name."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        names = [n for n in os.listdir(directory) if n.startswith(prefix)]
        if names:
            scratch = directory / names[0]
            link = directory / "planted-link"
            os.symlink(victim, link)
            os.rename(link, scratch)
            return scratch
        time.sleep(0.001)
    pytest.fail(f"the kernel ended or never created {prefix}*: {proc.communicate()}")


@pytest.mark.parametrize("kernel", ["bonnie", "perf"])
def test_a_symlink_planted_mid_run_is_refused_and_left_alone(engine, launcher, shm_dir, tmp_path, kernel):
    victim = tmp_path / "precious"
    victim.write_bytes(PRECIOUS)
    if kernel == "bonnie":   # fresh file for the block write after putc and rewrite
        argv = [engine, "bonnie", "--dir", str(shm_dir), "--size", "256m", "--seeks", "100"]
    else:                    # a reopen before every timed write and read; one rank, so a core
        # is left for planting (waiting ranks spin)
        argv = launcher.command(1, [engine, "perf", "--dir", str(shm_dir), "--size", "32m", "--repeats", "100"])
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=launcher.environment())
    scratch = plant_symlink_when_created(proc, shm_dir, f"pario-{kernel}.", victim)
    _, err = proc.communicate(timeout=120)
    lines = [line for line in err.splitlines() if line.startswith("pario-engine: error:")]
    assert proc.returncode == 3 and len(lines) == 1, err
    assert str(scratch) in lines[0] and "was replaced during the run" in lines[0], lines[0]
    assert "left alone" in lines[0]
    # the link is still there, still pointing at the victim, which is untouched
    assert scratch.is_symlink() and os.readlink(scratch) == str(victim)
    assert victim.read_bytes() == PRECIOUS, f"{victim.stat().st_size} bytes: the kernel wrote through the link"
    assert sorted(os.listdir(shm_dir)) == [scratch.name]
