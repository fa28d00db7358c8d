"""BT on NPB's multi-partition (REFERENCE-FACTS 1.9) and BTIO's subtypes on
it (2.3): the solver verifies, the shared files are byte-identical to the
slab version's whatever the subtype, epio's per-rank records reassemble to
the same values, and bad decompositions are refused in one line."""

import struct
import subprocess

import pytest


def run_bt(launcher, engine, ranks, *args, timeout=300):
    argv = launcher.command(ranks, [engine, "bt", *args])
    return subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=timeout)


@pytest.mark.parametrize("cls,ranks,cells", [("S", 4, 2), ("S", 9, 3), ("W", 4, 2)])
def test_multipartition_verifies_at_npb_tolerance(launcher, engine, cls, ranks, cells):
    p = run_bt(launcher, engine, ranks, "--class", cls)     # the default on a square count
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"{ranks} rank(s) in multi-partition ({cells} cells each of a {cells}^3 cell grid)" in p.stdout
    assert "verification SUCCESSFUL" in p.stdout


def _one_file(d):
    [f] = [x for x in d.iterdir()]
    return f.read_bytes()


@pytest.mark.parametrize("where", ["shm_dir", "disk_dir"])
def test_npb_subtypes_on_multipartition_write_the_slab_file_byte_for_byte(launcher, engine, request,
                                                                          where):
    base = request.getfixturevalue(where)
    ref = base / "slabs-posix"
    ref.mkdir()
    p = run_bt(launcher, engine, 1, "--class", "S", "--decomposition", "slabs", "--io", "posix",
               "--dir", str(ref), "--keep")
    assert p.returncode == 0 and "file check SUCCESSFUL" in p.stdout, p.stdout + p.stderr
    want = _one_file(ref)
    assert len(want) == 40 * 12**3 * 12
    for ranks, subtype in ((4, "full"), (4, "simple"), (4, "fortran"), (4, "serial"), (1, "full")):
        d = base / f"mp{ranks}-{subtype}"
        d.mkdir()
        p = run_bt(launcher, engine, ranks, "--class", "S", "--decomposition", "multipartition",
                   "--io", subtype, "--dir", str(d), "--keep")
        assert p.returncode == 0 and "file check SUCCESSFUL" in p.stdout, p.stdout + p.stderr
        assert _one_file(d) == want, f"{subtype} on {ranks} rank(s)"
        ok = subprocess.run([engine, "verify-bt", str(next(d.iterdir())), "--class", "S", "--quiet"],
                            capture_output=True, text=True)
        assert ok.returncode == 0 and "verification SUCCESSFUL" in ok.stdout


def _cells(n, ranks, rank):
    """NPB's multi-partition cells of one rank, written out again here from
    REFERENCE-FACTS 1.9 (not from the engine): (lo, size) per axis."""
    p = round(ranks ** 0.5)
    base, extra = divmod(n, p)

    def extent(c):
        return c * base + min(c, extra), base + (c < extra)

    x, y = rank % p, rank // p
    out = []
    for c in range(p):
        coords = ((x + c) % p, (y - c) % p, c)
        out.append([extent(k) for k in coords])
    return out


def test_epio_records_reassemble_to_the_shared_file(launcher, engine, shm_dir):
    n, ranks, dumps = 12, 4, 12
    ref = shm_dir / "ref"
    ref.mkdir()
    assert run_bt(launcher, engine, 1, "--class", "S", "--io", "posix", "--dir", str(ref),
                  "--keep").returncode == 0
    want = _one_file(ref)
    d = shm_dir / "epio"
    d.mkdir()
    p = run_bt(launcher, engine, ranks, "--class", "S", "--io", "epio", "--dir", str(d), "--keep",
               "--name", "btio.epio.out")
    assert p.returncode == 0 and "reassembled from every rank's file" in p.stdout, p.stdout + p.stderr
    assert sorted(f.name for f in d.iterdir()) == [f"btio.epio.out.{r:04d}" for r in range(ranks)]
    dump_bytes = 40 * n**3
    got = bytearray(dump_bytes * dumps)
    for r in range(ranks):
        data = (d / f"btio.epio.out.{r:04d}").read_bytes()
        at = 0
        for dump in range(dumps):
            for (xl, xs), (yl, ys), (zl, zs) in _cells(n, ranks, r):
                length = 40 * xs * ys * zs       # Fortran's record markers, either side
                assert struct.unpack_from("<i", data, at)[0] == length
                assert struct.unpack_from("<i", data, at + 4 + length)[0] == length
                rec = data[at + 4: at + 4 + length]
                for k in range(zs):
                    for j in range(ys):
                        row = rec[40 * xs * (j + ys * k): 40 * xs * (j + 1 + ys * k)]
                        off = dump * dump_bytes + 40 * (xl + n * ((yl + j) + n * (zl + k)))
                        got[off: off + len(row)] = row
                at += length + 8
        assert at == len(data)
    assert bytes(got) == want
    base = str(d / "btio.epio.out")
    ok = subprocess.run([engine, "verify-bt", base, "--class", "S", "--ranks", "4", "--quiet"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "verification SUCCESSFUL" in ok.stdout, ok.stdout + ok.stderr
    # read as slabs, the records do not fit: refused in one line
    bad = subprocess.run([engine, "verify-bt", base, "--class", "S", "--ranks", "4",
                          "--decomposition", "slabs", "--quiet"], capture_output=True, text=True)
    assert bad.returncode == 3 and "record" in bad.stderr and len(bad.stderr.splitlines()) == 1
    assert bad.stderr.rstrip().endswith(": give the --ranks, --decomposition, --class and --write-interval "
                                        "bt ran with"), bad.stderr


@pytest.mark.parametrize("ranks,args,phrase", [
    (2, ["--class", "S", "--decomposition", "multipartition"], "needs a square rank count"),
    (3, ["--class", "S", "--decomposition", "multipartition"], "needs a square rank count"),
    (9, ["--grid", "8", "--steps", "2", "--dt", "0.001"], "under NPB's minimum of 3"),
    (1, ["--class", "S", "--decomposition", "cubes"], "--decomposition 'cubes' is unknown"),
])
def test_bad_decompositions_are_refused_in_one_line(launcher, engine, ranks, args, phrase, shm_dir):
    p = run_bt(launcher, engine, ranks, *args, "--io", "full", "--dir", str(shm_dir))
    assert p.returncode != 0 and phrase in p.stderr, p.stderr
    assert len({line for line in p.stderr.splitlines() if "pario-engine" in line}) == 1
    assert list(shm_dir.iterdir()) == []          # nothing half-written


def test_class_s_on_25_ranks_is_refused_naming_the_fix(launcher, engine):
    p = run_bt(launcher, engine, 25, "--class", "S", timeout=120)
    assert p.returncode != 0
    assert "cells of 2 points, under NPB's minimum of 3: use at most 16 ranks" in p.stderr


@pytest.mark.parametrize("args,phrase", [
    (["--class", "S", "--decomposition", "slabs"], "give --ranks P with it"),
    (["--class", "S", "--ranks", "3", "--decomposition", "multipartition"], "needs a square --ranks"),
    (["--class", "S", "--ranks", "0"], "--ranks '0'"),
])
def test_verify_bt_per_rank_refusals(engine, tmp_path, args, phrase):
    p = subprocess.run([engine, "verify-bt", str(tmp_path / "x"), *args], capture_output=True, text=True)
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1 and phrase in p.stderr
