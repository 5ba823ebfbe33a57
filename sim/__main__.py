"""``python -m sim run ...``: the headless CLI, through the same guard as the console scripts."""

import sys

from sim.commands.entry import backoff_sim_headless

sys.exit(backoff_sim_headless())
