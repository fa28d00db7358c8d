"""What the model predicts, parameter by parameter: the one place that
says which of a plan point's parameters reach the simulation, so that
`pario model` leaves out (with one line why) every point it would
otherwise predict while silently ignoring part of it.

Every key of the point's `params()` must have a rule here; a parameter the
planner grows later and nobody taught the model is refused as unknown
rather than dropped.  A rule returns None when the model honours the
value, else the reason it does not."""

from .params import API_KIND, ATOMIC_APIS
from .workload import LAYOUTS


def _always(value, machine):
    return None


def _zero(what):
    def rule(value, machine):
        return None if not value else f"the model has no {what}"
    return rule


def _one_of(known, what):
    def rule(value, machine):
        return None if value in known else f"the model has no {what} '{value}'"
    return rule


# Flags of the engine (point.extra, from the sweep's phase choices and
# the command line) the simulation honours, with their argument count.
def _no_fsync(machine):
    return ("writes without fsync land in this host's page cache, which a probed host's model "
            "has only within a read phase" if machine.host_page_cache else None)


_EXTRA_FLAGS = {
    "--group-unit": (1, lambda m: None),       # the token's grain (simulate.py)
    "--no-fsync": (0, _no_fsync),              # write-back at close, or the page cache
    "--evict": (0, lambda m: None),            # reads from storage, as the model has them
    # the probe fits a preallocated stream write; allocation is not modelled
    # apart (docs/model.md), as for every machine description
    "--prealloc": (0, lambda m: None),
}
# Backend flags of a test (point.options) the simulation honours.
_OPTION_FLAGS = {
    # two-phase I/O over the whole access list where the machine has a
    # collective buffer (agent.cb_buffer), else aggregators act as agents
    "--collective": (0, lambda m: None),
    # one MPI-IO model whichever implementation the run chose (docs/model.md)
    "--mpiio-impl": (1, lambda m: None),
    # MUNIX's token between service agents (any machine with agents: the
    # test's --atomic is MUNIX there, simulate.py), or a byte-range lock
    # per call
    "--atomic": (0, lambda m: None if (m["agent.mode"] == "munix" or m["file.lock_overhead"]
                                       or m["agent.count"] or m["agent.ranks_per_agent"]) else
                 "atomic mode is modelled only as MUNIX's token between service agents "
                 "(agent.count, agent.ranks_per_agent) or a byte-range lock per call "
                 "(file.lock_overhead), which this machine has neither of"),
}


def _flags(table, what):
    def rule(values, machine):
        values, i = list(values), 0
        while i < len(values):
            flag = values[i]
            if flag not in table:
                return f"{flag}: a {what} the model does not model"
            nargs, why = table[flag]
            reason = why(machine)
            if reason:
                return f"{flag}: {reason}"
            i += 1 + nargs
        return None
    return rule


def _evict(point, machine):
    """Reads without eviction may come from this host's page cache."""
    if machine.host_page_cache and "read" in point.phases and "--evict" not in point.extra:
        return ("reads without eviction may come from this host's page cache as earlier phases "
                "left it, which a probed host's model does not follow (it has the page cache only "
                "within a read phase)")
    return None


RULES = {
    "test": _always, "title": _always, "phases": _always, "ranks": _always, "block": _always,
    "size": _always, "group": _always, "files": _always, "iterations": _always,
    "aggregators": _always, "stripe_unit": _always, "background_kind": _always,
    "layout": _one_of(LAYOUTS, "layout"),
    "api": _one_of(API_KIND, "api"),
    "stripe_targets": _zero("striping over several targets (each its own file system)"),
    "background": _zero("background loaders"),
    "extra": _flags(_EXTRA_FLAGS, "engine flag"),
    "options": _flags(_OPTION_FLAGS, "backend option"),
}


def _shown(value):
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def unmodelled(point, machine):
    """{parameter: (value, why)} the model would ignore at this point; an
    engine or backend flag is named by the flag itself."""
    out = {}
    for key, value in point.params().items():
        rule = RULES.get(key)
        why = rule(value, machine) if rule else f"the model does not know parameter {key}"
        if why:
            flag = why.split(":", 1)[0] if key in ("extra", "options") else None
            out[flag or key] = ("", why.split(": ", 1)[1]) if flag else (_shown(value), why)
    why = _evict(point, machine)
    if why:
        out["evict"] = ("false", why)
    return out


def _whole_tests(points, kept, left, counts):
    """The kept points, less every test whose swept parameter the model
    left out down to one value (ascired-load without its loaders keeps
    only the unloaded baseline: a figure of that baseline over itself is
    no prediction of what the test varies); such a test's reason says so."""
    out = []
    for p in kept:
        why = left.get(p.test_id, {})
        mine = [q for q in points if q.test_id == p.test_id]
        stays = [q for q in kept if q.test_id == p.test_id]
        swept = [k for k in why if k in p.params()
                 and len({_shown(q.params()[k]) for q in mine}) > 1
                 and len({_shown(q.params()[k]) for q in stays}) == 1]
        if not swept:
            out.append(p)
            continue
        counts[p.test_id] += 1
        values, reason = why[swept[0]]
        if "which is all" not in reason:
            why[swept[0]] = (values, f"{reason}, which is all test {p.test_id} varies (the "
                                     f"{swept[0]}={_shown(p.params()[swept[0]])} point left alone "
                                     "would be compared with nothing)")
    return out


def refusals(points, machine):
    """(points the model predicts, one line per test it leaves out, naming
    the parameters with their values, why, and the fix)."""
    kept, left, counts = [], {}, {}
    for p in points:
        why = unmodelled(p, machine)
        if not why:
            kept.append(p)
            continue
        counts[p.test_id] = counts.get(p.test_id, 0) + 1
        mine = left.setdefault(p.test_id, {})
        for param, (value, reason) in why.items():
            values, _ = mine.setdefault(param, ([], reason))
            if value and value not in values:
                values.append(value)
    kept = _whole_tests(points, kept, left, counts)
    lines = []
    for test, params in left.items():
        what = "; ".join(f"{param}{'=' + ','.join(values) if values else ''}: {reason}"
                         for param, (values, reason) in params.items())
        lines.append(f"leaving out {counts[test]} point(s) of test {test}, which the model does not "
                     f"predict: {what}; give --tests without {test} to leave it out, or measure it "
                     "with 'pario run'")
    return kept, lines


def _aggregating(p):
    """Whether a point is collective with aggregators (simulate.py), whose
    aggregators act as service agents and receive the other ranks' data."""
    return bool(getattr(p, "aggregators", 0)) and "--collective" in p.options


def _has_agents(p, m):
    """Whether a point's calls go through service agents: the machine's
    own, or a collective point's aggregators."""
    return bool(m["agent.count"] or m["agent.ranks_per_agent"]) or _aggregating(p)


def _in_munix(p, m):
    """Whether a point runs in MUNIX through agents: its own --atomic
    (mpiio/hdf5), or the machine's mode for the other APIs."""
    atomic = "--atomic" in p.options if p.api in ATOMIC_APIS else m["agent.mode"] == "munix"
    return atomic and _has_agents(p, m)


# The agents' costs act only where calls go through agents (tester 7: on a
# machine without agents, for a plan without collective points, they were
# stored runs predicting what they did without them).
_AGENT_COST = (_has_agents, "it is a service agent's cost, and no point's calls go through service "
                            "agents (the machine has none: agent.count and agent.ranks_per_agent 0, "
                            "and no test is --collective with aggregators)")
_MESSAGE_COST = (lambda p, m: _aggregating(p) and p.ranks > p.aggregators,
                 "it is the cost of a rank's data sent to its collective aggregator, and no point has "
                 "ranks beyond its aggregators (--collective with aggregators)")
_FILES_WRITE = (lambda p, m: p.files == "per-rank" and p.layout != "broadcast" and p.ranks > 1
                and "write" in p.phases,
                "it is the rate of two or more ranks writing a file each, and no point writes a file "
                "per rank with two ranks or more")

_TOKEN = (lambda p, m: bool(p.group) and p.group < p.ranks,
          "it is the token's hand-over between grouped ranks, and no point is grouped with fewer "
          "ranks in a group than it has (a test's group = G below its ranks)")
_INTERLEAVED_READ = (lambda p, m: p.layout == "interleaved" and "read" in p.phases and p.ranks > 1,
                     "it is the rate of two or more ranks reading one file in interleaved blocks, and "
                     "no point reads interleaved with two ranks or more")
_FOUR_INTERLEAVED_READ = (lambda p, m: p.layout == "interleaved" and "read" in p.phases and p.ranks >= 4,
                          "it is the rate of four or more ranks reading one file in interleaved blocks, "
                          "and no point reads interleaved with four ranks or more")

# --set keys that act only at some points: a what-if that acts on no point
# of the plan would be stored as a run labelled with it and predicting the
# same as without it, so it is refused (check_sets).  Each entry says where
# the key acts, acts(point, machine), and, where it does not, why.
SET_SCOPE = {
    # simulate.py: an MPI-IO or HDF5 test states its own semantics, --atomic
    # MUNIX and relaxed MASYNC, whatever the machine's mode
    "agent.mode": (lambda p, m: p.api not in ATOMIC_APIS and _has_agents(p, m),
                   "it is the mode of calls through service agents by APIs other than mpiio/hdf5, "
                   "and there are none: an mpiio/hdf5 test sets its mode itself (--atomic is MUNIX, "
                   "without it MASYNC; a test's --atomic, or --set agent.munix_overhead, changes "
                   "what atomic mode costs), and the other tests' calls go through no agents here"),
    "agent.overhead": _AGENT_COST,
    "agent.copy_rate": _AGENT_COST,
    "agent.message_rate": _MESSAGE_COST,
    "agent.message_overhead": _MESSAGE_COST,
    "agent.munix_overhead": (_in_munix, "it is MUNIX's cost through service agents, and no point runs "
                                        "in MUNIX through agents (an mpiio/hdf5 test's --atomic, or "
                                        "agent.mode munix, with agents)"),
    # simulate.py: a collective call's own cost, the MPI-IO library's open,
    # atomic mode's byte-range locks and writers of a file each act only
    # at points that make such calls (tester 11: stored runs that predicted
    # the same as without them)
    "client.collective_overhead": (lambda p, m: "--collective" in p.options and "read" in p.phases,
                                   "it is the cost of a collective read call, and no point reads "
                                   "collectively (--collective)"),
    "client.collective_write_overhead": (lambda p, m: "--collective" in p.options and "write" in p.phases,
                                         "it is the cost of a collective write call, and no point "
                                         "writes collectively (--collective)"),
    "client.mpiio_open_close": (lambda p, m: p.api in ("mpiio", "hdf5"),
                                "it is the MPI-IO library's open and close, and no test uses "
                                "api mpiio or hdf5"),
    "file.lock_overhead": (lambda p, m: "--atomic" in p.options,
                           "it is atomic mode's byte-range lock, and no test is --atomic"),
    "disk.files_write_rate": _FILES_WRITE,
    "disk.files_write_overhead": _FILES_WRITE,
    # tester 17: a token's cost or interleaved readers' rates on a plan of
    # none, stored as a what-if equal in every point
    "network.token_latency": _TOKEN,
    "network.token_latency_crowded": _TOKEN,
    "disk.interleaved_read_rate": _INTERLEAVED_READ,
    "disk.interleaved_read_overhead": _INTERLEAVED_READ,
    "disk.interleaved_typical_read_rate": _INTERLEAVED_READ,
    "disk.interleaved_typical_read_overhead": _INTERLEAVED_READ,
    "disk.four_interleaved_read_rate": _FOUR_INTERLEAVED_READ,
    "disk.four_interleaved_read_overhead": _FOUR_INTERLEAVED_READ,
}


def check_needs(machine):
    """Refuses (one line) a --set of a parameter that acts only where
    others are non-zero (params.Param.needs) on a machine where one of them
    is 0, naming every one that is: a prediction, or a machine printed
    with it, would carry a what-if that changes nothing."""
    from ..errors import UsageError
    from .params import PARAMS, needs_text

    for key, text in machine.overrides.items():
        unset = PARAMS[key].unmet(machine)
        if not unset:
            continue
        if unset == [unset[0][:1]]:
            what = f"{unset[0][0]} is non-zero, and it is 0 there; --set it to a non-zero value too"
        elif len(unset) == 1:
            what = (f"{' or '.join(unset[0])} is non-zero, and each is 0 there; --set one of them "
                    "to a non-zero value too")
        else:
            what = (f"{needs_text(unset)} are non-zero, and they are 0 there; --set them to non-zero "
                    "values too")
        raise UsageError(f"--set {key}={text} does not act on machine {machine.name}: it acts only "
                         f"where {what}, or drop it")


# The one-stream rates a --set may change, and the rates of several ranks
# at once that a machine (a probe's) may hold beside them: a point of two
# or more ranks uses those, whatever the one-stream rate says.
_SEVERAL_RANKS_RATES = {
    "disk.write_rate": ("disk.shared_write_rate", "disk.files_write_rate"),
    "disk.rate": ("disk.shared_read_rate", "disk.four_read_rate", "disk.interleaved_read_rate",
                  "disk.interleaved_typical_read_rate", "disk.four_interleaved_read_rate",
                  "disk.same_read_rate"),
}


def unfollowed_sets(machine, points):
    """Warnings for a --set of a one-stream rate on a machine whose points
    of several ranks use rates of their own (a probe measured them): the
    what-if changes the one-rank points only (tester 17: a disk set to
    100 MB/s still wrote at 2.8 GB/s with two writers)."""
    if not any(p.ranks > 1 for p in points):
        return []
    out = []
    for key, text in machine.overrides.items():
        own = [f"{k} ({machine.written[k]})" for k in _SEVERAL_RANKS_RATES.get(key, ())
               if machine[k] and k not in machine.overrides]
        if own:
            out.append(f"--set {key}={text} acts on points of one rank: those of two or more use "
                       f"{', '.join(own)}, left as they are; --set them too, or to 0 to follow {key}")
    return out


def check_sets(points, machine, origin):
    """Refuses (one line) a --set of a key that acts on none of the plan's
    points, naming why and what does act: a key whose parameter needs
    others that are 0 on this machine (check_needs), or one that acts only
    at some points (SET_SCOPE)."""
    from ..errors import UsageError

    check_needs(machine)
    for key, text in machine.overrides.items():
        acts, why = SET_SCOPE.get(key, (None, ""))
        if acts and points and not any(acts(p, machine) for p in points):
            raise UsageError(f"--set {key}={text} does not act on {origin}: {why}; drop it")
        if key in machine.unchanged:  # tester 17: stored as a what-if equal to the machine
            raise UsageError(f"--set {key}={text} is machine {machine.name}'s own value "
                             f"({machine.unchanged[key]}): it changes nothing; drop it, or give another value")


# The most stripe-unit pieces of one point's files the model simulates in a
# phase: each is an event of the core.  Measured 2026-11-23 on the shared
# 2-core machine, one asci-red point (`pario model cfs --quick --machine
# asci-red --tests partitioned --ranks 2 --blocks 1m --set stripe.unit=U`):
# 3.0 s at 2^15 pieces, 5.7 s at 2^16, 11.2 s at 2^17, 17.4 s at 2^18 and
# 82 s at the earlier limit of 2^20 (tester 6, item h); ipsc860 is cheaper
# per piece (6.6 s at 2^18).  2^18 is the README's 1024-rank ipsc860 point
# (1 GiB at 4 KiB units) exactly, so the limit stays there: lower would
# refuse that documented point.  A tiny --set stripe.unit would otherwise
# cut a quick point into millions and run for hours.
MAX_PIECES = 1 << 18


def check_pieces(points, machine):
    """Refuses (one line, the smallest unit that fits) a plan whose files a
    machine's stripe.unit cuts into more pieces than the model simulates."""
    from ..errors import UsageError
    from ..units import engine_size, format_size

    unit = machine["stripe.unit"]
    for p in points:
        # every rank of a broadcast moves the whole file; each call is cut
        # into its own pieces
        moved = p.size * (p.ranks if p.layout == "broadcast" else 1)
        calls = moved // p.block
        if calls > MAX_PIECES:
            # a call is one piece at the least: no stripe unit brings it down
            raise UsageError(f"{p.label()} makes {calls} calls per phase ({format_size(moved)} in "
                             f"{format_size(p.block)} calls), more than the model simulates "
                             f"({MAX_PIECES}): use larger --blocks or a smaller --size"
                             + (", or fewer --ranks (every rank of a broadcast reads the whole file)"
                                if p.layout == "broadcast" else ""))
        pieces = -(-p.block // unit) * calls
        if pieces > MAX_PIECES:
            least = unit
            while -(-p.block // least) * calls > MAX_PIECES:  # ends by least >= block
                least *= 2
            raise UsageError(f"stripe.unit {format_size(unit)} cuts {p.label()} ({format_size(moved)} per "
                             f"phase) into {pieces} pieces, more than the model simulates ({MAX_PIECES}): "
                             f"use --set stripe.unit={engine_size(least)} or more"
                             # a machine with I/O-node caches caches in stripe units (machine.py)
                             + (f" with --set io_node.cache_block={engine_size(least)} (and io_node.cache "
                                f"at least that)"
                                if machine["io_node.cache"] else "") + ", or a smaller --size")
