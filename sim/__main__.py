"""``python -m sim run ...``: the headless CLI, through the same guard as the console scripts."""

from sim.commands.entry import backoff_sim_headless

backoff_sim_headless()
