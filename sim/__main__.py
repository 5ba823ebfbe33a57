"""``python -m sim run ...``: the headless CLI."""

import sys

from .cli import main

sys.exit(main())
