"""Stand-in for Colab's ``google.colab`` package, for `make test-colab` only.

On Colab this package is installed and imported when the kernel starts, and the course's set-up cell
recognises Colab by ``"google.colab" in sys.modules``. The simulation copies this folder into the site-packages
of its virtual environment (``google`` stays a namespace package, so ``google.protobuf`` still imports) and
imports it from an IPython start-up file, as Colab does. It offers nothing else of the real package.
"""

SIMULATED = True
