"""The model's parameter table: every parameter a machine description sets,
with its unit and meaning, and the parser for values as people write them.

Units in values: sizes `4k`, `1000k`, `1MB` (powers of 1024: k = KiB,
MB = MiB, as everywhere in pario), rates `2.8MB/s` (MiB/s), times `0.4ms`,
`72ms`, `0.072s`, `15us`.  A report's "MB" is read as MiB: the model's
figures come out in MiB/s and are compared with the report's numbers in the
same unit, so the comparison does not depend on which the author meant."""

import math
import re
from dataclasses import dataclass

from ..errors import UsageError


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # size | rate | time | count | fraction | choice
    unit: str
    meaning: str
    choices: tuple = ()
    # what must be non-zero for this one to act at all: each entry a
    # parameter, or a tuple of parameters one of which must be (a --set of
    # it where one is 0 changes nothing, so scope.check_needs refuses it);
    # kept as a tuple of alternatives each, a lone parameter its own
    needs: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "needs", tuple((n,) if isinstance(n, str) else tuple(n)
                                                for n in self.needs))

    def unmet(self, values):
        """The entries of `needs` of which no parameter is non-zero in
        `values` (a Machine or its values)."""
        return [alts for alts in self.needs if not any(values[n] for n in alts)]


PARAMS = {p.name: p for p in [
    # The interconnect between compute nodes and I/O nodes.
    Param("network.latency", "time", "s",
          "fixed software cost of one message, paid once by a request and once by its reply"),
    Param("network.link_rate", "rate", "B/s",
          "bandwidth of one node's link into the network (each compute node and each I/O node "
          "has one); a message holds the links at both of its ends for size / rate "
          "(0 = no network: ranks and I/O node share one host's memory)"),
    Param("network.token_latency", "time", "s",
          "time a grouped run's token takes from one rank to the next (one message between "
          "compute nodes)"),
    Param("network.token_latency_crowded", "time", "s",
          "network.token_latency when a host's ranks outnumber its cores (host.cores): the next "
          "holder shares a core with a rank waiting by yielding and must be switched in, which "
          "occupies that core for this time; token rings writing one file pay it on the disk too, "
          "at each change of the ring holding the file's write lock",
          needs=("host.cores",)),
    Param("network.backplane_rate", "rate", "B/s",
          "aggregate bandwidth of the fabric that every message also crosses (0 = unlimited)"),
    # The client library on a compute node.
    Param("client.outstanding", "count", "requests",
          "pieces of one call a rank keeps in flight at once: 1 = one at a time, "
          "0 = all pieces of the call at once"),
    Param("client.call_overhead", "time", "s", "library cost of one read or write call on the rank"),
    Param("client.collective_overhead", "time", "s",
          "fixed cost of one collective read call (MPI-IO or HDF5 --collective), paid by every "
          "rank on its own core (the calls' coordination: offsets exchanged, ranks waiting for "
          "each other)"),
    Param("client.collective_write_overhead", "time", "s",
          "the same for one collective write call"),
    Param("client.mpiio_open_close", "time", "s",
          "time of the MPI-IO library's open and close of a file by every rank (MPI_File_open and "
          "MPI_File_close, collective), which an MPI-IO or HDF5 phase pays on each rank beside "
          "file.open_close_* (0 = none)"),
    Param("file.open_close_read", "time", "s",
          "time one rank spends opening and closing the file around a read phase"),
    Param("file.open_close_write", "time", "s",
          "time one rank spends opening and closing the file around a write phase"),
    Param("file.lock_overhead", "time", "s",
          "time of one byte-range lock and its unlock (MPI-IO's atomic mode as ROMIO does it on a "
          "local file system: a blocking write lock of each call's range around the call); locks "
          "of different ranges do not wait for each other, so atomic mode adds this to every call "
          "on the rank's core (0 = no byte-range locks: atomic mode is then modelled only as a "
          "munix machine's token, agent.mode)"),
    # How a file is laid over the disks.
    Param("stripe.unit", "size", "B",
          "bytes of a file stored on one disk before the next disk (round robin)"),
    Param("stripe.count", "count", "disks",
          "disks (or RAIDs) one file is striped over; at most io_node.count x io_node.disks"),
    # I/O nodes (servers).
    Param("io_node.count", "count", "nodes", "I/O nodes (file servers)"),
    Param("io_node.disks", "count", "disks", "disks or RAIDs attached to one I/O node"),
    Param("io_node.request_overhead", "time", "s",
          "processor time an I/O node spends on one request after its reply has left "
          "(bookkeeping): the requester does not wait for it, the next request does"),
    Param("io_node.link_dma", "choice", "",
          "yes: an I/O node's link moves a reply while its processor serves the next request; "
          "no: the processor is busy until the reply has crossed its link", ("yes", "no")),
    Param("io_node.memory_rate", "rate", "B/s",
          "rate at which an I/O node copies a request's data between its cache and the "
          "network (0 = no copy: data moves straight between disk and network)"),
    Param("io_node.max_outstanding", "count", "requests",
          "requests one I/O node works on at once; others wait at its door (0 = no limit)"),
    Param("io_node.cache", "size", "B",
          "block cache on one I/O node (0 = no cache: every request goes to a disk)"),
    Param("io_node.cache_block", "size", "B",
          "size of one cache block; must equal stripe.unit when there is a cache",
          needs=("io_node.cache",)),
    Param("io_node.prefetch", "count", "blocks",
          "cache blocks one read miss brings in: the missed block and the next ones on the "
          "same disk, read as one transfer (1 = no prefetch)",
          needs=("io_node.cache",)),
    Param("io_node.readahead_at", "count", "position",
          "when a reader first hits the block at this position (1 = first) of a prefetched "
          "run, the I/O node reads the disk's next run ahead of it (0 = no read-ahead)",
          needs=("io_node.cache",)),
    Param("io_node.write_group", "count", "blocks",
          "dirty blocks contiguous on one disk that are written back together as one transfer; "
          "a write completing such a group starts its write-back",
          needs=("io_node.cache",)),
    # Disks or RAIDs.
    Param("disk.rate", "rate", "B/s", "media rate of one disk or RAID for long transfers"),
    Param("disk.overhead", "time", "s",
          "fixed cost of one disk transfer (positioning, controller): a transfer of s bytes "
          "takes overhead + s / rate, so small transfers are slower"),
    Param("disk.read_latency", "time", "s",
          "fixed start of a read phase on a rank: the time from its first read call until its "
          "first bytes arrive with the page cache empty (the kernel's first, synchronous "
          "read-ahead), which the calls after it do not wait for; each rank pays it once per "
          "read phase, side by side with the others and without holding the disk"),
    Param("disk.read_start_rate", "rate", "B/s",
          "growth of disk.read_latency with the call size: a rank whose read calls are b bytes "
          "pays disk.read_latency + b / read_start_rate (the kernel sizes its first read-ahead, "
          "which the first call waits for whole, from the call; with disk.read_ahead set, b is "
          "that first window, not the call; 0 = the same start for any call size)"),
    Param("disk.read_start_limit", "size", "B",
          "the call size up to which disk.read_start_rate applies: a larger call starts as one of "
          "this size (the largest call the probe measured the start at; 0 = no limit)",
          needs=("disk.read_start_rate",)),
    Param("disk.read_ahead", "size", "B",
          "the kernel's largest read-ahead window on the file's device (its read_ahead_kb): a "
          "reader's first read-ahead, which its first call waits for whole, is sized from the "
          "call as Linux does it (the call's pages rounded up to a power of two, times 4 up to a "
          "32nd of this, times 2 up to a quarter, else this), and disk.read_latency grows with "
          "that window at disk.read_start_rate; 0 = not known: the start grows with the call, up "
          "to disk.read_start_limit.  Its ramp (the windows growing to this) also bounds the short "
          "shares' race (disk.share_race_restarts) and how far a broadcast's readers move in step "
          "(host.page_cache)",
          needs=(("disk.read_start_rate", "disk.share_race_restarts", "host.page_cache"),)),
    Param("disk.shared_read_rate", "rate", "B/s",
          "disk.rate while two or more ranks read different bytes at once (several streams of "
          "one file, or several files; 0 = disk.rate)"),
    Param("disk.four_read_rate", "rate", "B/s",
          "disk.rate while four or more ranks read different bytes at once (a quarter of one file "
          "each, or files of their own; on a host of two cores, more readers than cores: their "
          "read-ahead, copies and completions share the cores; 0 = disk.shared_read_rate)"),
    Param("disk.four_interleaved_read_rate", "rate", "B/s",
          "disk.rate while four or more ranks read one file at once in interleaved blocks (the "
          "probe's four readers, every fourth block each; on a host of two cores, more readers "
          "than cores, which take turns on them and so keep their read-ahead windows more often "
          "than two readers on cores of their own: no read-ahead race is charged on top; a token "
          "ring that acts, which runs no race, keeps disk.interleaved_read_rate); 0 = "
          "disk.interleaved_read_rate for them"),
    Param("disk.four_interleaved_read_overhead", "time", "s",
          "disk.overhead for such reads (used when disk.four_interleaved_read_rate is set)",
          needs=("disk.four_interleaved_read_rate",)),
    Param("disk.same_read_rate", "rate", "B/s",
          "disk.rate of a broadcast's stream while two or more ranks read the same bytes at once, "
          "each with its own read-ahead (the later readers' copies from the page cache, "
          "host.cached_read_rate, come on top); 0 = disk.rate"),
    Param("disk.interleaved_read_rate", "rate", "B/s",
          "disk.rate while two or more ranks read one file at once in interleaved blocks (rank r "
          "the blocks r, r + P, ...: no rank reads on from where it stopped, so the kernel's "
          "read-ahead serves them worse; 0 = disk.shared_read_rate)"),
    Param("disk.interleaved_read_overhead", "time", "s",
          "disk.overhead for such reads (used when disk.interleaved_read_rate is set)",
          needs=("disk.interleaved_read_rate",)),
    Param("disk.interleaved_race_requests", "count", "requests",
          "device read requests that two or more ranks reading one file in interleaved calls "
          "make per read phase beyond the ones a stream whose read-ahead windows hold makes: the "
          "kernel's read-ahead marks land on the other rank's calls and the leading rank's calls "
          "are read one at a time (docs/model.md, the read-ahead race); a number per phase, not "
          "per byte (0 = no race)",
          needs=("disk.interleaved_read_rate", "disk.interleaved_request_overhead")),
    Param("disk.interleaved_race_from", "size", "B",
          "the smallest call size at which interleaved readers lose that race: smaller calls "
          "keep their read-ahead windows (0 = every call size)",
          needs=("disk.interleaved_read_rate", "disk.interleaved_race_requests",
                 "disk.interleaved_request_overhead")),
    Param("disk.interleaved_request_overhead", "time", "s",
          "time one such extra device request adds to the read phase (the readers wait for it: "
          "a read of about one call, no read-ahead beside it); the race costs "
          "disk.interleaved_race_requests times this, once per phase, on the disk",
          needs=("disk.interleaved_read_rate",
                 ("disk.interleaved_race_requests", "disk.interleaved_typical_race_requests"))),
    Param("disk.interleaved_typical_read_rate", "rate", "B/s",
          "disk.interleaved_read_rate as two interleaved readers on cores of their own usually "
          "read (the probe's row halfway between its best trial, disk.interleaved_read_rate, and "
          "its median one): they run in step and lose the read-ahead race in most trials of a "
          "file up to the probe's size, where the probe's best trial often escaped it; used where "
          "disk.interleaved_read_rate is set and the ranks are no more than host.cores, or it is 0 "
          "(readers that outnumber the cores take turns on them and keep their windows more "
          "often: the best trial's parameters); 0 = disk.interleaved_read_rate always",
          needs=("disk.interleaved_read_rate",)),
    Param("disk.interleaved_typical_read_overhead", "time", "s",
          "disk.interleaved_read_overhead of that typical trial (with "
          "disk.interleaved_typical_read_rate)",
          needs=("disk.interleaved_read_rate", "disk.interleaved_typical_read_rate")),
    Param("disk.interleaved_typical_race_requests", "count", "requests",
          "disk.interleaved_race_requests of that typical trial (with "
          "disk.interleaved_typical_read_rate; each costs disk.interleaved_request_overhead)",
          needs=("disk.interleaved_read_rate", "disk.interleaved_typical_read_rate",
                 "disk.interleaved_request_overhead")),
    Param("disk.interleaved_typical_race_from", "size", "B",
          "disk.interleaved_race_from of that typical trial (with "
          "disk.interleaved_typical_read_rate)",
          needs=("disk.interleaved_read_rate", "disk.interleaved_typical_read_rate",
                 "disk.interleaved_typical_race_requests", "disk.interleaved_request_overhead")),
    Param("disk.share_race_restarts", "count", "restarts",
          "read-ahead restarts a read phase pays when four or more ranks read one file in "
          "contiguous shares (partitioned) each shorter than a reader's read-ahead ramp reaches "
          "(read_start.ramp_reach with disk.read_ahead): a reader's growing windows ask for its "
          "neighbour's bytes before the neighbour has, the neighbour finds them cached, loses its "
          "own window and starts again with a first, synchronous one (docs/model.md, the short "
          "shares' race); each costs the read's fixed start at the call size (disk.read_latency, "
          "disk.read_start_rate), once per phase, on the disk (0 = no race)",
          needs=(("disk.read_latency", "disk.read_start_rate"),)),
    Param("disk.share_race_from", "size", "B",
          "the smallest call size at which readers of short shares lose those restarts: smaller "
          "calls keep their windows (0 = every call size)",
          needs=("disk.share_race_restarts",)),
    Param("disk.write_rate", "rate", "B/s",
          "media rate of one disk or RAID for long writes (disk.rate is for reads)"),
    Param("disk.shared_write_rate", "rate", "B/s",
          "disk.write_rate while two or more ranks write different bytes at once (several streams "
          "of one file, several aggregators; 0 = disk.write_rate)"),
    Param("disk.write_overhead", "time", "s",
          "fixed cost of one disk write transfer: a write of s bytes takes "
          "write_overhead + s / write_rate"),
    Param("disk.files_write_rate", "rate", "B/s",
          "disk.write_rate while two or more ranks write a file each at once (a file per rank): "
          "writers of one file take turns at its write lock, writers of their own files copy into "
          "the page cache side by side (0 = disk.shared_write_rate for them too)"),
    Param("disk.files_write_overhead", "time", "s",
          "disk.write_overhead for those writers: their calls' fixed costs, side by side, per "
          "call on the disk (used when disk.files_write_rate is set)",
          needs=("disk.files_write_rate",)),
    Param("disk.alloc_write_rate", "rate", "B/s",
          "disk.write_rate for a write phase into a new file whose space was not reserved (no "
          "--prealloc): the file system allocates its blocks as the data is written back; with "
          "several writers the difference from disk.write_rate is added to each byte's cost "
          "(0 = no difference)"),
    Param("disk.alloc_write_overhead", "time", "s",
          "disk.write_overhead for such a write (used when disk.alloc_write_rate is set)",
          needs=("disk.alloc_write_rate",)),
    Param("disk.buffer_write_rate", "rate", "B/s",
          "rate of one writer moving a new file in calls of a collective buffer (agent.cb_buffer), "
          "space allocated as it goes and fsync included: a two-phase aggregator's buffer write "
          "holds its disk for extent / this rate (0 = the disk's write rates, as for any call); "
          "such calls are far above the stream's and need not follow its line",
          needs=("agent.cb_buffer",)),
    Param("disk.shared_buffer_write_rate", "rate", "B/s",
          "disk.buffer_write_rate while two or more aggregators write at once, each syncing only "
          "after all have written (a collective write's order: the call ends in an agreement of "
          "every rank before MPI_File_sync), so no one's write-back runs beside another's writes "
          "(0 = disk.buffer_write_rate: one file's writes pass one at a time and its sync waits "
          "for the last, which is the one writer's stream)",
          needs=("agent.cb_buffer",)),
    Param("disk.buffer_read_rate", "rate", "B/s",
          "rate of one reader reading a file from storage in calls of a collective buffer, a read "
          "phase's fixed start (disk.read_latency) apart: a two-phase aggregator's buffer read "
          "holds its disk for extent / this rate (0 = the disk's read rates, as for any call)",
          needs=("agent.cb_buffer",)),
    Param("disk.shared_buffer_read_rate", "rate", "B/s",
          "disk.buffer_read_rate while two or more aggregators read at once "
          "(0 = disk.buffer_read_rate)",
          needs=("agent.cb_buffer",)),
    Param("disk.four_buffer_read_rate", "rate", "B/s",
          "disk.buffer_read_rate while four or more aggregators read at once (on a host of two "
          "cores, more readers than cores: their read-ahead, copies and completions share the "
          "cores; 0 = disk.shared_buffer_read_rate)",
          needs=("agent.cb_buffer",)),
    # Service agents (ASCI Red's fyods).
    Param("agent.ranks_per_agent", "count", "ranks",
          "ranks served by one service agent when agent.count is 0 (0 = no agents: ranks talk "
          "to the I/O nodes directly)"),
    Param("agent.count", "count", "agents",
          "service agents for the job (0 = one per agent.ranks_per_agent ranks)"),
    Param("agent.overhead", "time", "s", "agent's processing time for one call (the RPC)"),
    Param("agent.copy_rate", "rate", "B/s",
          "rate at which an agent copies a call's data through its own buffer, holding the agent "
          "(0 = no copy: the agent passes requests along); collective MPI-IO's aggregators are "
          "agents"),
    Param("agent.message_rate", "rate", "B/s",
          "rate of the MPI message that carries a call's data between a rank and its collective "
          "aggregator when the rank is not the aggregator itself, holding the aggregator "
          "(0 = no message: agents receive requests only)"),
    Param("agent.message_overhead", "time", "s", "fixed cost of one such message"),
    Param("agent.cb_buffer", "size", "B",
          "collective buffer of an aggregator (ROMIO's cb_buffer_size); set, a collective point is "
          "two-phase I/O over each rank's whole access list: the aggregators work through equal "
          "file domains one buffer at a time (the other ranks' bytes as messages, one disk call "
          "per buffer; a buffer with holes read first at host.cached_read_rate); 0 = aggregators "
          "serve each rank's calls as service agents"),
    Param("agent.mode", "choice", "",
          "shared-file semantics between agents: munix serialises calls to a shared file "
          "across agents, masync lets them run together", ("munix", "masync")),
    Param("agent.munix_overhead", "fraction", "",
          "extra system time of munix mode, as a fraction of each call's time, held on the agent"),
    # The host the ranks run on, when they share one (a probed machine).
    Param("host.cores", "count", "cores",
          "CPU cores the ranks share (0 = every rank has a processor of its own): CPU work "
          "(a copy from the page cache, an aggregator's copy and messages, a collective call's "
          "own cost) waits for a free core"),
    Param("host.busy_handover", "time", "s",
          "time a rank waiting in MPI takes to act once its turn has come, while busy ranks "
          "hold every core: with more ranks than host.cores Open MPI waits by polling and "
          "yielding (mpi_yield_when_idle), and a rank that yields beside a rank computing without "
          "yielding runs again only after that one's share of the core; a two-phase collective "
          "on such a host pays it after each round of its aggregators' writes (not their reads: "
          "exchange.py), whose next step needs every rank (0 = none)",
          needs=("host.cores", "agent.cb_buffer")),
    Param("host.page_cache", "size", "B",
          "the host's page cache, shared by its ranks (0 = none): within a read phase the bytes "
          "one rank's call brought in from the disk serve the other ranks' calls for the same "
          "bytes, least recently used evicted first"),
    Param("host.cached_read_rate", "rate", "B/s",
          "rate of one read call served from the page cache (the copy into the rank's buffer)",
          needs=(("host.page_cache", "agent.cb_buffer"),)),
    Param("host.cached_read_overhead", "time", "s",
          "fixed cost of one read call served from the page cache",
          needs=("host.page_cache",)),
]}

# The engine's APIs, as the model sees them: a synchronous call holds its
# service agent until the data has moved; an asynchronous one only while
# the agent starts it (the ASCI Red report's section 2.5).
API_KIND = {"posix": "sync", "stdio": "sync", "mmap": "sync", "mpiio": "sync", "hdf5": "sync",
            "aio": "async", "uring": "async"}
# The APIs whose tests set their own file semantics (--atomic or relaxed),
# which on an agents' machine is MUNIX or MASYNC for that test (simulate.py).
ATOMIC_APIS = ("mpiio", "hdf5")

_NUMBER = r"(\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?"
_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20,
               "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
               "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40, "p": 1 << 50, "pb": 1 << 50,
               "pib": 1 << 50}
_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_QUANTITY = re.compile(r"^\s*(" + _NUMBER + r")\s*([a-z]*)\s*(/s)?\s*$", re.IGNORECASE)

_EXAMPLES = {"size": "4k, 1000k or 5MB", "rate": "2.8MB/s", "time": "0.4ms or 0.072s",
             "count": "a whole number such as 8", "fraction": "a number such as 0.1"}


# The most of anything (I/O nodes, disks, cores, requests in flight) one
# model simulates: every one is an object of the event core, and a
# hundred million of them never finish (a run left incomplete).
MAX_COUNT = 65536
# Physical ranges of times and rates: no one cost of a machine takes an
# hour, and no link or disk moves less than a KiB a second.  Values past
# them (1e308s, 1e-320MB/s) overflow a phase's time to infinity or its
# rate to 0.0 MiB/s with "nan% busy", which must not be stored.
MAX_TIME = 3600.0
MIN_RATE = 1024.0


def _bad(name, text, kind, choices=()):
    want = f"one of {', '.join(choices)}" if kind == "choice" else _EXAMPLES[kind]
    # a TOML boolean is shown as the file wrote it, not as Python spells it
    shown = ("true" if text else "false") if isinstance(text, bool) else text
    why = ""
    if kind != "choice" and not isinstance(text, bool) and str(text).strip().startswith("-"):
        why = f" (no {kind} is negative)"
    elif isinstance(text, bool):
        why = " (a TOML true or false is no quantity)"
    return UsageError(f"{name} = '{shown}' is not a valid {kind}{why}: use {want}")


def parse_value(name, text):
    """The value of parameter `name` written as `text` (a TOML value or a
    --set string) in base units: bytes, bytes/s, seconds, counts."""
    if name not in PARAMS:
        raise UsageError(f"'{name}' is not a model parameter: see 'pario model --parameters' "
                         "or docs/model.md for the list")
    p = PARAMS[name]
    if p.kind == "choice":
        if str(text) not in p.choices:
            raise _bad(name, text, p.kind, p.choices)
        return str(text)
    if isinstance(text, bool):
        raise _bad(name, text, p.kind)
    if p.kind == "count":
        try:
            value = int(text) if not isinstance(text, float) else None
        except ValueError:
            value = None
        if value is None or value < 0:
            raise _bad(name, text, p.kind)
        if value > MAX_COUNT:
            raise UsageError(f"{name} = {value} is more than the model simulates: use at most {MAX_COUNT}")
        return value
    if p.kind == "fraction":
        try:
            value = float(text)
        except ValueError:
            raise _bad(name, text, p.kind) from None
        if not math.isfinite(value) or not 0 <= value < 100:
            raise _bad(name, text, p.kind)
        return value
    if isinstance(text, (int, float)):
        # A bare number is allowed only where the unit is unambiguous.
        if p.kind == "size" and isinstance(text, int) and text >= 0:
            return text
        raise _bad(name, text, p.kind)
    m = _QUANTITY.match(str(text))
    if not m:
        raise _bad(name, text, p.kind)
    number, unit, per_second = float(m.group(1)), m.group(3).lower(), bool(m.group(4))
    if not math.isfinite(number):  # 1e400 reads as infinity: no time or rate is that
        raise _bad(name, text, p.kind)
    if p.kind == "size" and not per_second and unit in _SIZE_UNITS:
        value = number * _SIZE_UNITS[unit]
        if value != int(value):
            raise _bad(name, text, p.kind)
        return int(value)
    if p.kind == "rate" and per_second and unit in _SIZE_UNITS:
        value = number * _SIZE_UNITS[unit]
        if 0 < value < MIN_RATE:
            raise UsageError(f"{name} = '{text}' is below any real rate: use at least 1k/s "
                             "(or 0 where 0 has a meaning, see 'pario model --parameters')")
        return value
    if p.kind == "rate" and number == 0 and not unit:
        return 0.0
    if p.kind == "time" and number == 0 and not unit and not per_second:
        return 0.0  # no time needs no unit, as a rate of 0 needs none
    if p.kind == "time" and not per_second and unit in _TIME_UNITS:
        value = number * _TIME_UNITS[unit]
        if value > MAX_TIME:
            raise UsageError(f"{name} = '{text}' is longer than any one cost of a machine: "
                             f"use at most {MAX_TIME:.0f}s")
        return value
    raise _bad(name, text, p.kind)


def needs_text(needs):
    """'A and B' of a Param's needs, an alternative as '(C or D)'."""
    return " and ".join(alts[0] if len(alts) == 1 else "(" + " or ".join(alts) + ")" for alts in needs)


def _meaning(p):
    return p.meaning + (f" ({' or '.join(p.choices)})" if p.choices else "")


def describe_parameters():
    """Lines for `pario model --parameters`."""
    return [f"{p.name:<28} {p.unit or '-':<9} {_meaning(p)}"
            + (f" [acts only with {needs_text(p.needs)} set]" if p.needs else "")
            for p in PARAMS.values()]


def parameter_table_rows():
    """The rows of docs/model.md's parameter table, the same words (a
    test holds the document to them)."""
    return [f"| `{p.name}` | {p.unit or '-'} | {_meaning(p)} |" for p in PARAMS.values()]
