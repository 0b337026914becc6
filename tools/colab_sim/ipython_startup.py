"""IPython start-up file of the simulated Colab kernel (`make test-colab`).

A Colab kernel has ``google.colab``, numpy and pandas imported before the first cell runs (pandas in turn
imports pyarrow). The set-up cell must cope with that: these modules are already in memory at Colab's versions.
"""

import google.colab  # noqa: F401
import numpy  # noqa: F401
import pandas  # noqa: F401
