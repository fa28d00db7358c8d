"""Machine files, --set overrides, the event core, and predicted documents
in the store: the model's plumbing and its bad inputs."""

import pytest

from pario.errors import UsageError
from pario.figures import format_table
from pario.model import load_machine, machine_names, predict_point
from pario.model.core import Environment, Resource, Server
from pario.model.params import PARAMS, parse_value
from pario.model.workload import permute_index, rank_offsets
from pario.studies.io import IoPoint as Point
from pario.store import Store

MIB = 1 << 20


def test_shipped_machines_set_every_parameter_with_a_source():
    assert {"ipsc860", "asci-red"} <= set(machine_names())
    for name in ("ipsc860", "asci-red"):
        m = load_machine(name)
        assert set(m.values) == set(PARAMS)
        assert all(len(m.sources[k]) > 10 for k in PARAMS)
    cfs = load_machine("ipsc860")
    assert cfs["io_node.cache"] // cfs["io_node.cache_block"] == 250  # line 246
    assert cfs["network.link_rate"] == pytest.approx(2.8 * MIB)


def test_set_overrides_are_parsed_validated_and_recorded():
    m = load_machine("ipsc860", ["io_node.cache=5000k", "disk.overhead=5ms", "agent.mode=munix"])
    assert m["io_node.cache"] == 5000 * 1024
    assert m["disk.overhead"] == pytest.approx(0.005)
    assert m.overrides == {"io_node.cache": "5000k", "disk.overhead": "5ms", "agent.mode": "munix"}
    assert m.sources["io_node.cache"] == "--set io_node.cache=5000k"


@pytest.mark.parametrize("item, words", [
    ("io_node.cahce=5MB", "'io_node.cahce' is not a model parameter"),
    ("io_node.cache", "must be key=value"),
    ("=5MB", "must be key=value"),
    ("io_node.cache=", "--set io_node.cache= has an empty value: give one"),
    ("disk.interleaved_typical_read_rate= ", "has an empty value"),
    ("io_node.cache=5 parsecs", "is not a valid size"),
    ("io_node.cache=-1MB", "is not a valid size"),
    ("network.link_rate=3MB", "is not a valid rate"),
    ("disk.overhead=3MB/s", "is not a valid time"),
    ("stripe.count=2.5", "is not a valid count"),
    ("agent.mode=fast", "use one of munix, masync"),
    ("stripe.count=11", "stripe.count (11) must be between 1 and"),
    ("io_node.cache_block=8k", "must equal stripe.unit"),
    ("disk.rate=0", "disk.rate must be more than 0"),
    ("network.latency=1e400s", "is not a valid time"),
    ("disk.rate=1e400MB/s", "is not a valid rate"),
    ("io_node.cache=1e400MB", "is not a valid size"),
    ("io_node.count=100000000", "io_node.count = 100000000 is more than the model simulates"),
])
def test_bad_set_is_one_line_naming_the_parameter(item, words):
    with pytest.raises(UsageError) as err:
        load_machine("ipsc860", [item])
    assert words in str(err.value) and "\n" not in str(err.value)


def test_unknown_machine_lists_the_known_ones():
    with pytest.raises(UsageError, match="machine 'cray-1' is unknown: use one of .*ipsc860"):
        load_machine("cray-1")


@pytest.mark.parametrize("edit, words", [
    (lambda t: t.replace('count = { value = 10, source = "line 42: 10 I/O nodes" }', ""),
     "does not set io_node.count (a file written before pario had it?): add each under its table, "
     "e.g. [io_node] count = { value = \"0\", source = \"...\" }"),
    # a file --print-machine wrote before two parameters were added
    (lambda t: "\n".join(l for l in t.splitlines() if not l.startswith("four_interleaved_read")),
     "does not set disk.four_interleaved_read_rate, disk.four_interleaved_read_overhead (a file "
     "written before pario had them?)"),
    (lambda t: t + '\n[disk2]\nrate = { value = "1MB/s", source = "x" }\n', "'disk2.rate' is not a model parameter"),
    (lambda t: t.replace('{ value = "2.8MB/s", source', '{ value = "2.8MB/s", sauce'), "must be written"),
    (lambda t: t.replace('[network]', '[network'), "machine "),
    (lambda t: t.replace('value = "1000k"', 'value = "lots"'), "io_node.cache = 'lots' is not a valid size"),
])
def test_bad_machine_file_is_one_line(tmp_path, edit, words):
    from pario.model.machine import MACHINE_DIR
    text = (MACHINE_DIR / "ipsc860.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(edit(text))
    with pytest.raises(UsageError) as err:
        load_machine(str(bad))
    assert words in str(err.value) and "\n" not in str(err.value)


def test_values_in_their_units():
    assert parse_value("network.latency", "0.279ms") == pytest.approx(0.000279)
    assert parse_value("network.latency", "20us") == pytest.approx(2e-5)
    assert parse_value("disk.rate", "32MB/s") == 32 * MIB
    assert parse_value("io_node.cache", "1000k") == 1024000
    assert parse_value("network.backplane_rate", "0") == 0


def test_layouts_match_the_engine():
    # partitioned: contiguous 1/P; interleaved: block i to rank i mod P
    assert list(rank_offsets("partitioned", 64, 8, 2, 1)) == [32, 40, 48, 56]
    assert list(rank_offsets("interleaved", 64, 8, 2, 1)) == [8, 24, 40, 56]
    assert list(rank_offsets("broadcast", 32, 8, 4, 3)) == [0, 8, 16, 24]
    touched = sorted(o for r in range(4) for o in rank_offsets("random", 128, 8, 4, r, seed=7))
    assert touched == list(range(0, 128, 8))  # every block once
    assert sorted(permute_index(i, 1000, 3) for i in range(1000)) == list(range(1000))


def test_core_fifo_server_and_lock():
    env = Environment()
    disk = Server("disk")
    ends = []

    def job(arrive, service):
        yield env.timeout(arrive)
        yield env.timeout(disk.reserve(env.now, service) - env.now)
        ends.append(env.now)

    for a, s in ((0, 2.0), (0.5, 1.0), (5, 1.0)):
        env.process(job(a, s))
    env.run()
    assert ends == [2.0, 3.0, 6.0]
    assert disk.busy == 4.0 and disk.waited == 1.5

    env = Environment()
    lock = Resource(env, "agent")
    order = []

    def holder(name, hold):
        yield lock.acquire()
        order.append((name, env.now))
        yield env.timeout(hold)
        lock.release()

    env.process(holder("a", 3))
    env.process(holder("b", 1))
    env.run()
    assert order == [("a", 0.0), ("b", 3.0)]
    assert lock.busy == 4.0


def test_predicted_document_has_the_engine_shape_and_shows(tmp_path):
    point = Point("partitioned", "Partitioned", "partitioned", ["write", "read"], 4, 64 * 1024,
                  4 * MIB, iterations=2)
    doc = predict_point(point, load_machine("ipsc860", ["io_node.cache=2000k"]))
    assert doc["schema"] == "pario.result/1" and doc["predicted"] is True
    assert [p["name"] for p in doc["phases"]] == ["write", "read"]
    for phase in doc["phases"]:
        assert len(phase["iterations"]) == 2
        for it in phase["iterations"]:
            assert len(it["ranks"]) == 4
            assert it["bytes"] == 4 * MIB == sum(r["bytes"] for r in it["ranks"])
            assert it["seconds"] == pytest.approx(max(r["total_seconds"] for r in it["ranks"]))
            assert it["mib_per_s"] == pytest.approx(4 / it["seconds"])
        assert phase["summary"]["best_mib_per_s"] == max(i["mib_per_s"] for i in phase["iterations"])
        assert phase["explanation"]["bound"]
    assert "predicted by the model of machine ipsc860" in doc["warnings"][0]
    assert "io_node.cache=2000k" in doc["warnings"][0]
    from pario.runner import run_views

    store = Store(tmp_path / "r.sqlite")
    run = store.start_run("cfs", "CFS", "predicted: model of ipsc860", [], {}, "model", "0",
                          kind="io")
    store.add_point(run, point, "ok", ["pario", "model"], 0.1, result=doc)
    figs = run_views(store, run)[-1]
    assert [f.name for f in figs] == ["partitioned-write", "partitioned-read"]
    assert "64 KiB" in format_table(figs[0])


def test_model_refuses_what_it_cannot_model():
    with pytest.raises(UsageError, match="api 'dfs' has no model"):
        predict_point(Point("t", "t", "partitioned", ["read"], 2, 4096, MIB, api="dfs",
                            iterations=1), load_machine("ipsc860"))
    with pytest.raises(UsageError, match="broadcast is a read-only layout"):
        predict_point(Point("t", "t", "broadcast", ["write"], 2, 4096, MIB, iterations=1),
                      load_machine("ipsc860"))


def test_a_users_machine_file_is_named_with_its_path(tmp_path):
    """An edited copy of a shipped machine keeps its 'name =' inside, so a
    run predicted from it once showed as the shipped machine."""
    from pario.model.machine import MACHINE_DIR
    mine = tmp_path / "m8.toml"
    mine.write_text((MACHINE_DIR / "ipsc860.toml").read_text())
    assert load_machine(str(mine)).name == f"ipsc860 (from {mine})"
    assert load_machine("ipsc860").name == "ipsc860"
