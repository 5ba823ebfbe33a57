"""The numeric bounds every input must respect, so that all arithmetic stays finite and exact.

Shared by the config loader (parameters), the engine (the clock of a run) and the events-file
reader (replayed times, ids and details), so a file the exporter writes always reads back.
"""

from __future__ import annotations

# Times, delays and factors are float64. At 2**53 (about 9.0e15) consecutive floats are 1.0
# apart; at 1e15 they are 0.125 apart, so a delay of one time unit still moves the clock, and
# sums of a run's delays cannot overflow. Every time-like parameter, and the clock, stays below.
MAX_TIME = 1e15

# The smallest horizon and bucket width: the time series divides by the bucket width, which must
# stay a normal float with a finite inverse (1e-300 buckets or a 5e-324 horizon would not).
MIN_SPAN = 1e-9

# Integer parameters (limits, sizes, attempts) are stored in int64 arrays.
MAX_INTEGER = 2**63 - 1

# Seeds are whole numbers 0 <= seed < 2**64 (numpy's SeedSequence words are 64-bit).
MAX_SEED = 2**64 - 1

# Event details (attempt numbers, versions, counts) are packed into int64 with a 5-bit code.
MAX_DETAIL = 2**57

# Client ids are int32 in the app's arrays.
MAX_CLIENT_ID = 2**31 - 1

# Tiers below the server the clients call ([[simulation.tiers]]); an events file's ``tier``
# column is at most MAX_TIERS + 1 (the clients' server is tier 1), and the app's lanes are one a tier.
MAX_TIERS = 1000

# Worker processes a command or the API may be asked for (``--workers``, ``workers=``).
MAX_WORKERS = 4096
