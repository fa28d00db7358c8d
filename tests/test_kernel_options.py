"""Every kernel reads its command line through one table and one loop
(engine/src/util/options.c): the same mistake gets the same one line in
each, a non-zero exit, and nothing left in --dir.  bt keeps its own loop
(its solver's engineer owns that file)."""

import os
import subprocess

import pytest

# kernel, MPI or one plain process, a whole-number option with a bad value and its message
KERNELS = [
    ("probe", True, ["--iterations", "many"], "--iterations 'many' must be a whole number from 1 to 100"),
    ("bonnie", False, ["--seeks", "many"], "--seeks 'many' must be a whole number from 1 to 100000000"),
    ("perf", True, ["--repeats", "many"], "--repeats 'many' must be a whole number from 1 to 100"),
    ("laplace", True, ["--grid", "many"], "--grid 'many' must be a whole number from 3 to 100000"),
    ("flashio", True, ["--blocks", "many"], "--blocks 'many' must be a whole number from 1 to 100000"),
    ("beff", True, ["--max-chunk", "many"], "--max-chunk 'many' is not a number: give a size such as"),
]
MISTAKES = ["unknown option", "missing value", "value is an option", "stray argument", "bad number"]


def run(engine, launcher, ranks, argv):
    """ranks 0: the engine started alone (one plain process, or MPI's singleton)."""
    cmd = launcher.command(ranks, [engine, *argv]) if ranks else [engine, *argv]
    return subprocess.run(cmd, capture_output=True, text=True, env=launcher.environment(), timeout=60)


def errors(stderr):
    return [line for line in stderr.splitlines() if line.startswith("pario-engine: error:")]


@pytest.mark.parametrize("mistake", MISTAKES)
@pytest.mark.parametrize("kernel,mpi,bad,message", KERNELS, ids=[k[0] for k in KERNELS])
def test_the_same_mistake_gets_the_same_line_in_every_kernel(engine, launcher, shm_dir, kernel, mpi,
                                                             bad, message, mistake):
    see = f"see pario-engine {kernel} --help"
    args, want = {
        "unknown option": (["--frob"], f"unknown option '--frob': {see}"),
        "missing value": (["--json"], f"--json needs a value: {see}"),
        "value is an option": (["--json", "--keep"], f"--json needs a value: {see}"),
        "stray argument": (["extra"], f"unexpected argument 'extra': options start with --, {see}"),
        "bad number": (bad, message),
    }[mistake]
    # two ranks where it costs a launch anyway: still one line, from rank 0
    ranks = 2 if mpi and mistake == "unknown option" else 0
    p = run(engine, launcher, ranks, [kernel, "--dir", str(shm_dir), *args])
    lines = errors(p.stderr)
    assert p.returncode == 2 and len(lines) == 1, p.stderr   # one line, from one rank
    assert lines[0].startswith(f"pario-engine: error: {want}"), lines[0]
    assert list(shm_dir.iterdir()) == []


@pytest.mark.parametrize("kernel", ["perf", "laplace", "flashio", "beff"])
def test_mpiio_kernels_choose_the_implementation_and_refuse_an_unknown_one(engine, launcher, shm_dir, kernel):
    p = run(engine, launcher, 0, [kernel, "--dir", str(shm_dir), "--mpiio-impl", "mpich"])
    lines = errors(p.stderr)
    assert p.returncode == 2 and lines == ["pario-engine: error: --mpiio-impl 'mpich' is unknown: use romio or "
                                           "ompio"], p.stderr
    h = run(engine, launcher, 0, [kernel, "--help"])
    assert h.returncode == 0 and "--mpiio-impl I" in h.stdout and h.stdout.startswith("usage:")


def test_help_lists_every_option_from_the_table(engine, launcher):
    h = run(engine, launcher, 0, ["beff", "--help"])
    assert h.returncode == 0 and h.stderr == ""
    for opt in ("--dir DIR", "-T, --time S", "--mem-per-pe SIZE", "--max-chunk SIZE", "--no-shared", "--keep",
                "--json FILE", "--help"):
        assert opt in h.stdout, opt


@pytest.mark.parametrize("args,want", [
    (["--frob"], "unknown option '--frob': see pario-engine verify-laplace --help"),
    (["f.chk", "--grid"], "--grid needs a value: see pario-engine verify-laplace --help"),
    (["f.chk", "--grid", "many"], "--grid 'many' must be a whole number from 3 to 100000"),
    (["f.chk", "g.chk", "--grid", "5"], "unexpected argument 'g.chk': options start with --, see pario-engine "
                                        "verify-laplace --help"),
])
def test_the_laplace_reader_words_its_mistakes_alike(engine, launcher, args, want):
    p = run(engine, launcher, 0, ["verify-laplace", *args])
    assert p.returncode == 2 and errors(p.stderr) == [f"pario-engine: error: {want}"], p.stderr


# Every engine command that writes a result document, with what it needs
# to get as far as its --json check.
JSON_COMMANDS = [
    ("io", ["--layout", "partitioned", "--block", "64k", "--size", "1m"]),
    ("bt", ["--class", "S"]),
    ("probe", []), ("bonnie", []), ("perf", []), ("laplace", []), ("flashio", []), ("beff", []),
]


@pytest.mark.parametrize("command,args", JSON_COMMANDS, ids=[c[0] for c in JSON_COMMANDS])
def test_json_never_replaces_a_file_pario_did_not_create(engine, launcher, shm_dir, tmp_path, command, args):
    """--json names a new file, as --name does: one that exists is the
    user's (tester 2, F-j), refused before any work and left as it was."""
    own = tmp_path / "own.json"
    own.write_text("mine\n")
    where = [] if command == "bt" else ["--dir", str(shm_dir)]
    p = run(engine, launcher, 0, [command, *where, *args, "--json", str(own)])
    lines = errors(p.stderr)
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert f"--json {own} already exists" in lines[0], lines[0]
    assert own.read_text() == "mine\n" and sorted(os.listdir(tmp_path)) == ["own.json"]
    assert list(shm_dir.iterdir()) == []
