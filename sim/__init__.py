"""backoff-sim's headless library (never imports Textual), in layers, each importing only below:

- ``core``: the event loop and run API, event codes, seeded streams, recorded histories;
- ``models``: strategies, controls, servers, workloads, clients, outages (each registers itself);
- ``policies``: the retry-policy seam and its links (limits, budgets, breakers, presets);
- ``spec`` (validated specs) and ``config`` (TOML → specs);
- ``analysis``: metrics, statistics, recovery, sweeps; ``explore``: maps and tuning;
- ``report`` (rich tables) and ``export`` (files);
- ``cli`` and ``compat``: the commands.
"""
