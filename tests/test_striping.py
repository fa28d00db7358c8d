"""--stripe-dirs spreads one logical file round-robin over one part per
directory: the parts reassemble into exactly the bytes of the unstriped
file, `verify --stripe-dirs` checks them as one file, and the result
carries the per-target ("scaled") rate beside the aggregate."""

import os
import subprocess

import pytest

BLOCK = 64 * 1024
SIZE = 48 * BLOCK
UNIT = 24 * 1024  # not a divisor of the block: calls are cut across targets


def reassemble(parts, unit, total):
    data = [p.read_bytes() for p in parts]
    out, pos, s = bytearray(), [0] * len(parts), 0
    while len(out) < total:
        t = s % len(parts)
        out += data[t][pos[t]:pos[t] + unit]
        pos[t] += unit
        s += 1
    return bytes(out)


@pytest.mark.parametrize("api", ["posix", "mmap"])
def test_striped_parts_reassemble_to_the_unstriped_bytes(shm_dir, disk_dir, run_io, verify, engine, api):
    targets = [shm_dir / "t0", disk_dir / "t1", shm_dir / "t2"]  # targets on two file systems
    for t in targets:
        t.mkdir()
    plain = shm_dir / "plain"
    plain.mkdir()
    common = ["--layout", "random", "--block", "64k", "--size", SIZE, "--iterations", 1, "--seed", 5,
              "--keep", "--name", "f"]
    run_io(3, "--dir", plain, *common, "--phases", "write")
    stripe = ["--stripe-dirs", ",".join(map(str, targets)), "--stripe-unit", str(UNIT)]
    r = run_io(3, *stripe, *common, "--api", api, "--phases", "write,read", "--read-shift", 1, "--verify")
    parts = [t / "f" for t in targets]
    assert reassemble(parts, UNIT, SIZE) == (plain / "f").read_bytes()
    assert r.result["params"]["stripe"]["targets"] == 3
    assert r.result["kept_files"][0]["parts"] == [str(p) for p in parts]
    for phase in r.result["phases"]:
        s = phase["summary"]
        assert s["per_target_best_mib_per_s"] == pytest.approx(s["best_mib_per_s"] / 3)
        assert phase["iterations"][0]["verify"]["checked"]
    ok = subprocess.run([engine, "verify", "--file", "f", *stripe, "--seed", "5", "--size", str(SIZE)],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and f"{SIZE} bytes match" in ok.stdout, ok.stderr
    # the parts in another order are another file
    swapped = ["--stripe-dirs", ",".join(map(str, [targets[1], targets[0], targets[2]])),
               "--stripe-unit", str(UNIT)]
    bad = subprocess.run([engine, "verify", "--file", "f", *swapped, "--seed", "5"], capture_output=True,
                         text=True)
    assert bad.returncode != 0 and "first wrong byte at offset 0" in bad.stderr
    # every part carries the whole file's length (tester 14: without --size
    # verify took the parts' sum, and passed a file cut short)
    assert {os.getxattr(p, "user.pario.striped_size") for p in parts if "shm" in str(p)} == {str(SIZE).encode()}
    ok = subprocess.run([engine, "verify", "--file", "f", *stripe, "--seed", "5"], capture_output=True, text=True)
    assert ok.returncode == 0 and f"{SIZE} bytes match" in ok.stdout, ok.stderr
    # a truncated part is named, with --size and by the recorded length alike
    os.truncate(parts[1], parts[1].stat().st_size - 4096)
    for size in (["--size", str(SIZE)], []):
        bad = subprocess.run([engine, "verify", "--file", "f", *stripe, "--seed", "5", *size],
                             capture_output=True, text=True)
        assert bad.returncode != 0 and f"part {parts[1]} is truncated" in bad.stderr, bad.stderr
    # the last part cut short too: its whole length still tells
    os.truncate(parts[2], parts[2].stat().st_size - 8192)
    bad = subprocess.run([engine, "verify", "--file", "f", *stripe, "--seed", "5"], capture_output=True, text=True)
    assert bad.returncode != 0 and "is truncated" in bad.stderr, bad.stderr


def test_striping_refuses_bad_targets(engine, shm_dir):
    a, b = shm_dir / "a", shm_dir / "b"
    a.mkdir()
    b.mkdir()
    (shm_dir / "alias").symlink_to(a)
    base = ["--size", "1m", "--block", "64k"]
    cases = [
        (["--stripe-dirs", f"{a},{shm_dir / 'absent'}", "--stripe-unit", "64k"], "absent: No such file"),
        (["--stripe-dirs", f"{a},{b},{a}", "--stripe-unit", "64k"], "twice"),
        (["--stripe-dirs", f"{a},{shm_dir / 'alias'}", "--stripe-unit", "64k"], "twice"),
        (["--stripe-dirs", f"{a},{b}"], "--stripe-dirs needs --stripe-unit"),
        (["--dir", str(a), "--stripe-unit", "64k"], "--stripe-unit needs --stripe-dirs"),
        (["--dir", str(a), "--stripe-dirs", f"{a},{b}", "--stripe-unit", "64k"], "give only --stripe-dirs"),
        (["--stripe-dirs", f"{a},{b}", "--stripe-unit", "100"], "multiple of 8"),
        (["--stripe-dirs", f"{a},{b}", "--stripe-unit", "0"], "--stripe-unit '0'"),
        (["--stripe-dirs", ",", "--stripe-unit", "64k"], "--stripe-dirs is empty"),
        (["--stripe-dirs", f"{a},{b}", "--stripe-unit", "64k", "--api", "uring"], "needs a per-call --api"),
        (["--stripe-dirs", f"{a},{b}", "--stripe-unit", "2k", "--direct"], "--stripe-unit to be a multiple of 4k"),
        (["--stripe-dirs", f"{a},{b}", "--stripe-unit", "64k", "--api", "mpiio"], "opens files collectively"),
        (["--stripe-dirs", f"{a},{b}", "--stripe-unit", "64k", "--api", "mpiio", "--collective"],
         "needs a per-call --api"),
    ]
    for args, phrase in cases:
        p = subprocess.run([engine, "io", *base, *args], capture_output=True, text=True)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and phrase in lines[0], (args, p.stderr)
    assert os.listdir(a) == [] and os.listdir(b) == []
    p = subprocess.run([engine, "verify", "--file", "f", "--seed", "1", "--stripe-dirs", f"{a},{b}"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "--stripe-dirs needs --stripe-unit" in p.stderr
