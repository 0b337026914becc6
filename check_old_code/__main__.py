"""``python -m check_old_code PATH...``: see :mod:`check_old_code.cli`."""

import sys

from .cli import main

sys.exit(main())
