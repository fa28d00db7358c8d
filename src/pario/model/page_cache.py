"""The host's page cache, as a probed machine has it (host.page_cache).

Within a read phase, the bytes one rank's call brought in from the disk
serve every other rank's call for the same bytes (a broadcast's later
readers), each at the probe's cached-read cost on a free core; a call for
bytes another rank is still reading waits for that read.  Entries are
keyed by a call's (file, offset): within one point every call has the
point's block size, so two calls touch the same bytes exactly when their
keys are equal (the engine's layouts align every call on the block).
Beyond host.page_cache bytes the least recently used entry is evicted; a
call larger than the whole cache does not use it (simulate.py), so
host.page_cache is a size, not a switch.

The presets evict the page cache before every read phase, and the model
refuses reads without eviction on a probed machine (scope.py), so the
cache starts empty in each phase; writes, synced and then evicted, leave
nothing in it."""

from collections import OrderedDict

READY = True
FILE_SHIFT = 40


class PageCache:
    def __init__(self, capacity):
        self.capacity = capacity
        self.reset()

    def reset(self):
        # key -> READY, or the event a read in flight will trigger
        self.entries = OrderedDict()
        self.sizes = {}
        self.held = 0
        self.hits = self.misses = self.waits = 0
        # Readers in step (simulate.py, the read-ahead's ramp): per key read
        # from the disk, [copies still due, event when none are], and the
        # file's last such key.
        self.copies_due = {}
        self.last_in_step = {}
        self.in_step_waits = 0

    def expect_copies(self, f, key, readers, event):
        """A miss read in step: `readers` other ranks will copy its bytes;
        returns the event of the copies of the file's previous such key,
        which the miss waits for (None when there is none to wait for)."""
        prev = self.copies_due.get(self.last_in_step.get(f))
        self.last_in_step[f] = key
        self.copies_due[key] = [readers, event]
        return None if prev is None or prev[1].triggered else prev[1]

    def copied(self, key):
        """A rank has copied the bytes of `key` from the cache."""
        due = self.copies_due.get(key)
        if due is not None:
            due[0] -= 1
            if due[0] <= 0:
                del self.copies_due[key]
                due[1].succeed()

    @staticmethod
    def key(f, offset):
        return (f << FILE_SHIFT) | offset

    def arrived(self, key, nbytes):
        """A miss's read has ended: its bytes are in the cache."""
        ev = self.entries[key]
        self.entries[key] = READY
        self.sizes[key] = nbytes
        self.held += nbytes
        entries = self.entries
        while self.held > self.capacity and entries:
            old = next((k for k, v in entries.items() if v is READY and k != key), None)
            if old is None:
                break
            del entries[old]
            self.held -= self.sizes.pop(old)
        ev.succeed()

    def counters(self):
        out = {"hits": self.hits, "misses": self.misses, "waits_on_other_reader": self.waits}
        if self.in_step_waits:
            out["waits_for_readers_in_step"] = self.in_step_waits
        return out
