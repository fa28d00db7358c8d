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
        return {"hits": self.hits, "misses": self.misses, "waits_on_other_reader": self.waits}
