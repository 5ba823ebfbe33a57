"""Words every layer of the library shares: one-line errors (``errors``), time units
(``units``), bounds on every number a config or file may hold (``bounds``), run outcomes
(``outcomes``), parameter checks (``params``), bounded reads of input files (``inputs``) and
install hints for the optional extras (``extras``). Nothing here imports the models."""
