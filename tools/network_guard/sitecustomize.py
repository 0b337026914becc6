"""Installs the course's offline guard in every Python process started while ``COURSE_NETWORK_GUARD=1``.

``tests/conftest.py`` puts this folder on ``PYTHONPATH`` so that subprocesses (nbmake's Jupyter kernels,
scripts run by tests) are guarded too. See ``course_network_guard.py``.
"""

import os

if os.environ.get("COURSE_NETWORK_GUARD") == "1":
    import course_network_guard

    course_network_guard.install()
