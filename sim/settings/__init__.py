"""A TOML config turned into validated specs: ``spec`` (the frozen specs the engine runs),
``config`` (reading, checking and reporting every mistake at once), ``extends`` (a simulation
built from another's keys) and ``fleet`` (``[simulation.fleet]``'s keys). The engine never sees
a raw dict."""
