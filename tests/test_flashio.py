"""flashio: FLASH-IO's three files through parallel HDF5, opened with h5py
and checked for the shapes and values REFERENCE-FACTS 3 gives."""

import json
import subprocess

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")

NAMES = ["dens", "velx", "vely", "velz", "pres", "ener", "temp", "gamc", "game", "enuc", "gpot",
         *[f"f{i}" for i in range(1, 14)]]
PLOT = ["dens", "temp", "pres", "f1"]


def run_kernel(launcher, engine, ranks, *args, timeout=300):
    argv = launcher.command(ranks, [engine, *map(str, args)])
    return subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=timeout)


def pario_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("pario-engine: error:")]


@pytest.mark.parametrize("transfer", ["independent", "collective"])
def test_flashio_files_have_flashs_shapes_and_values(launcher, engine, shm_dir, tmp_path, transfer):
    out = tmp_path / "f.json"
    p = run_kernel(launcher, engine, 3, "flashio", "--dir", shm_dir, "--blocks", 5, "--transfer", transfer,
                   "--keep", "--json", out)
    assert p.returncode == 0, p.stderr
    total = sum(5 + r % 3 for r in range(3))  # 5 + rank mod 3 blocks each: 18
    doc = json.loads(out.read_text())
    assert doc["params"]["total_blocks"] == total and doc["params"]["transfer"] == transfer
    files = {f["name"]: f for f in doc["files"]}
    # the PnetCDF port's bandwidth: all bytes / 2^20 / the sum of the three files' times
    assert doc["mib_per_s"] == pytest.approx(doc["total_bytes"] / 2**20 / sum(f["seconds"] for f in doc["files"]))
    assert files["checkpoint"]["bytes"] >= total * 512 * 24 * 8

    chk = h5py.File(files["checkpoint"]["file"], "r")
    for v, name in enumerate(NAMES):
        d = chk[name]
        assert d.shape == (total, 8, 8, 8) and d.dtype == np.float64
        assert np.all(d[...] == v + 1.0)  # unk(v, ...) = v
    assert chk["unknown names"].shape == (24, 1) and chk["unknown names"][11, 0] == b"f1  "
    assert chk["simulation parameters"][0]["total blocks"] == total
    assert chk["simulation parameters"].dtype["time"] == np.float64
    assert np.all(chk["gid"][...] == -1) and chk["gid"].shape == (total, 15)
    assert np.all(chk["refine level"][...] == 1) and np.all(chk["node type"][...] == 1)
    assert np.all(chk["coordinates"][...] == 0.25) and np.all(chk["block size"][...] == 0.5)
    assert chk["bounding box"].shape == (total, 3, 2)

    cnt = h5py.File(files["plot_centers"]["file"], "r")
    crn = h5py.File(files["plot_corners"]["file"], "r")
    for name in PLOT:
        value = NAMES.index(name) + 1.0
        assert cnt[name].shape == (total, 8, 8, 8) and cnt[name].dtype == np.float32
        assert crn[name].shape == (total, 9, 9, 9) and crn[name].dtype == np.float32
        assert np.all(cnt[name][...] == value) and np.all(crn[name][...] == value)  # corner averages
    assert "velx" not in cnt and cnt["simulation parameters"].dtype["time"] == np.float32
    assert [n[0] for n in crn["unknown names"][...]] == [b"dens", b"temp", b"pres", b"f1  "]


def test_flashio_default_size_is_the_originals_80_blocks_of_8_cubed(launcher, engine, shm_dir, tmp_path):
    out = tmp_path / "f.json"
    p = run_kernel(launcher, engine, 1, "flashio", "--dir", shm_dir, "--json", out)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert doc["params"]["total_blocks"] == 80 and doc["params"]["nxb"] == 8
    chk = next(f for f in doc["files"] if f["name"] == "checkpoint")
    assert chk["bytes"] >= 7_864_320  # REFERENCE-FACTS 3.3: 80·512·24·8
    assert list(shm_dir.iterdir()) == []


@pytest.mark.parametrize("args,phrase", [
    (["--blocks", "0"], "--blocks '0' must be a whole number"),
    (["--nxb", "x"], "--nxb 'x'"),
    (["--transfer", "sometimes"], "--transfer 'sometimes' is unknown"),
    (["--dir", "/nonexistent/x"], "is not an existing directory"),
])
def test_flashio_refuses_bad_input_with_one_line(launcher, engine, shm_dir, tmp_path, args, phrase):
    out = tmp_path / "f.json"
    argv = ["flashio", *(["--dir", str(shm_dir)] if "--dir" not in args else []), *args, "--json", out]
    p = run_kernel(launcher, engine, 2, *argv)
    lines = pario_lines(p.stderr)
    assert p.returncode != 0 and len(lines) == 1 and phrase in lines[0], p.stderr
    assert not out.exists() and list(shm_dir.iterdir()) == []
