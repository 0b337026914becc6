"""The course's maintenance tools, a package: run each from the course root as ``python -m tools.NAME``.

``tools.colab_setup`` is the exception that proves the rule: the notebooks' set-up cell runs it on Colab with
``runpy.run_path`` before the course is importable. ``tools/ladder/probes.py`` and ``tools/network_guard`` run
inside other environments (a ladder rung's venv, every test subprocess) and are loaded there by path.
"""
