"""pario: parallel I/O benchmarks, planned, launched, stored and explained."""

__version__ = "0.1.0"
