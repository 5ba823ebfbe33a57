"""``python -m sim run ...``: the headless CLI."""

import sys

from sim.cli import main

sys.exit(main())
