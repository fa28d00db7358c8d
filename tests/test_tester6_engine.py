"""Tester 6's engine items 7, i and k: refusals the engine's own parsers
make (the run and `pario-engine check` alike), and the files a stopped
`pario-engine io` leaves behind."""

import os
import subprocess

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
    code, message = p.stdout.strip().split("\t", 1)
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
