"""laplace: a real Jacobi solve whose checkpoints (MPI_File_write_all after
each rank's view) are checked by the ranks and by a serial reader;
collective buffering shown to take effect by who issued write calls."""

import json
import os
import subprocess

import pytest


def run_kernel(launcher, engine, ranks, *args, env=None, timeout=300):
    e = launcher.environment()
    e.update(env or {})
    argv = launcher.command(ranks, [engine, *map(str, args)])
    return subprocess.run(argv, capture_output=True, text=True, env=e, timeout=timeout)


def pario_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("pario-engine: error:")]


def test_laplace_converges_and_its_checkpoint_equals_the_serial_solve(launcher, engine, disk_dir, tmp_path):
    out = tmp_path / "l.json"
    p = run_kernel(launcher, engine, 3, "laplace", "--dir", disk_dir, "--grid", 200, "--iterations", 40,
                   "--checkpoint-every", 10, "--keep", "--json", out)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    cps = doc["checkpoints"]
    assert [c["iteration"] for c in cps] == [10, 20, 30, 40]
    residuals = [c["residual"] for c in cps]
    assert all(a > b > 0 for a, b in zip(residuals, residuals[1:]))  # Jacobi converging
    assert doc["checkpoint_bytes"] == 200 * 200 * 8 and all(c["mib_per_s"] > 0 for c in cps)
    assert doc["verification"]["ok"] and doc["final_residual"] == residuals[-1]
    [f] = list(disk_dir.iterdir())
    assert f.stat().st_size == 200 * 200 * 8
    v = subprocess.run([engine, "verify-laplace", str(f), "--grid", "200", "--iterations", "40"],
                       capture_output=True, text=True, timeout=120)
    assert v.returncode == 0 and "equals the serial solve" in v.stdout, v.stderr
    # the serial reader notices a checkpoint from another sweep count, and a changed value
    v = subprocess.run([engine, "verify-laplace", str(f), "--grid", "200", "--iterations", "39"],
                       capture_output=True, text=True, timeout=120)
    assert v.returncode == 3 and "differs from the serial solve" in v.stderr
    data = bytearray(f.read_bytes())
    data[8 * (150 * 200 + 7) + 3] ^= 0x10
    f.write_bytes(bytes(data))
    v = subprocess.run([engine, "verify-laplace", str(f), "--grid", "200", "--iterations", "40"],
                       capture_output=True, text=True, timeout=120)
    assert v.returncode == 3 and "in 1 value (first in row 150" in v.stderr


def test_collective_buffering_decides_which_ranks_write(launcher, engine, shm_dir, tmp_path):
    """Under ROMIO on one host, cb enable funnels the write through one
    aggregator; disable lets every rank write its own rows.  ROMIO is
    chosen by the option alone (nothing exported), and the result says
    so with the component the process loaded."""
    writers = {}
    for cb in ("enable", "disable"):
        out = tmp_path / f"{cb}.json"
        p = run_kernel(launcher, engine, 4, "laplace", "--dir", shm_dir, "--grid", 120, "--iterations", 5,
                       "--cb", cb, "--mpiio-impl", "romio", "--json", out, env={"OMPI_MCA_io": ""})
        assert p.returncode == 0, p.stderr
        doc = json.loads(out.read_text())
        params = doc["params"]
        assert params["mpi_io_chosen_by"] == "--mpiio-impl" or params["mpi_io_implementation"] == "romio"
        assert params["mpi_io_implementation"] in ("romio321", "romio")  # Open MPI's ROMIO, or MPICH's
        if "Open MPI" in params["mpi_library"]:
            assert params["mpi_io_components_loaded"] == "mca_io_romio321"
        assert params["hints"] == {"romio_cb_write": cb} and doc["warnings"] == []
        per_rank = doc["last_write_per_rank"]
        writers[cb] = [r["rank"] for r in per_rank if r["write_syscalls"] > 0]
        assert sum(r["bytes"] for r in per_rank) >= 120 * 120 * 8
    assert len(writers["enable"]) == 1
    assert writers["disable"] == [0, 1, 2, 3]
    assert list(shm_dir.iterdir()) == []


@pytest.mark.parametrize("ranks,args,phrase", [
    (4, ["--grid", "3"], "a 3×3 grid does not split over 4 ranks"),
    (2, ["--grid", "0"], "--grid '0' must be a whole number"),
    (2, ["--cb", "sometimes"], "--cb 'sometimes' is unknown"),
    (2, ["--iterations", "-1"], "--iterations '-1'"),
    (2, ["--mpiio-impl", "mpich"], "--mpiio-impl 'mpich' is unknown: use romio or ompio"),
    (2, ["--dir", "/nonexistent/x"], "is not an existing directory"),
])
def test_laplace_refuses_bad_input_with_one_line(launcher, engine, shm_dir, tmp_path, ranks, args, phrase):
    out = tmp_path / "l.json"
    argv = ["laplace", *(["--dir", str(shm_dir)] if "--dir" not in args else []), *args, "--json", out]
    p = run_kernel(launcher, engine, ranks, *argv)
    lines = pario_lines(p.stderr)
    assert p.returncode != 0 and len(lines) == 1 and phrase in lines[0], p.stderr
    assert not out.exists() and list(shm_dir.iterdir()) == []


def test_verify_laplace_refuses_a_file_of_the_wrong_size(engine, tmp_path):
    """Bad input (exit 2, as verify-bt), with the fix; exit 3 stays for
    values that differ from the serial solve."""
    f = tmp_path / "x.chk"
    f.write_bytes(b"\0" * 100)
    v = subprocess.run([engine, "verify-laplace", str(f), "--grid", "10", "--iterations", "1"],
                       capture_output=True, text=True)
    assert v.returncode == 2 and pario_lines(v.stderr) == [
        f"pario-engine: error: {f} holds 100 bytes; a 10×10 checkpoint holds 800: give the --grid it "
        "was written with, or a complete checkpoint"], v.stderr


def test_verify_laplace_refuses_a_fifo_without_waiting_on_it(engine, tmp_path):
    """A FIFO is refused before it is opened for reading (whose open would
    wait for a writer forever), and so is a directory."""
    fifo = tmp_path / "ff"
    os.mkfifo(fifo)
    for path, what in ((fifo, "is not a regular file"), (tmp_path, "is a directory")):
        v = subprocess.run([engine, "verify-laplace", str(path), "--grid", "100", "--iterations", "2"],
                           capture_output=True, text=True, timeout=30)
        assert v.returncode == 2 and pario_lines(v.stderr) == [
            f"pario-engine: error: {path} {what}"
            + (" (a FIFO, a device or a socket)" if path == fifo else "")
            + ": give the checkpoint laplace --keep wrote"], v.stderr
