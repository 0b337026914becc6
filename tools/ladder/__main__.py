"""``python -m tools.ladder COMMAND``: see :mod:`tools.ladder`."""

import sys

from tools.ladder.cli import main

sys.exit(main())
