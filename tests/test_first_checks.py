"""The first check of every exercise, timed in a fresh kernel right after the set-up cell (tools/first_checks.py:
one new process runs the set-up cell, then forks a child per exercise): each passes with the reference solution
(exercises.solutions, so the participant copy leaves this test out) within 5 s, the capstone's project and the
two-process hang diagnosis excepted (they keep their own limits and their own tests).

The CPU time of each check is held to the limit always. The wall time is held to it when the machine was quiet
while the checks ran (a load average below its number of cores): on a machine that other work keeps busy, the
wall time measures the machine."""

from __future__ import annotations

import os

import pytest

from tools.first_checks import OWN_LIMITS, exercise_ids, limit_of, time_first_checks

pytestmark = pytest.mark.slow


def test_every_first_check_passes_within_its_limit() -> None:
    ids = [one for one in exercise_ids() if one not in OWN_LIMITS]
    results = time_first_checks(ids)
    quiet = os.getloadavg()[0] < (os.cpu_count() or 1)
    failed = [r for r in results if r["status"] != "passed"]
    assert not failed, failed
    slow = [
        f"{r['exercise']}: {r['seconds']:.2f} s, CPU {r['cpu_seconds']:.2f} s"
        for r in results
        if r["cpu_seconds"] > limit_of(r["exercise"]) or (quiet and r["seconds"] > limit_of(r["exercise"]))
    ]
    assert not slow, f"first checks over their limit (machine quiet: {quiet}): {slow}"


def test_every_exercise_is_timed() -> None:
    """The list of exercises comes from the check modules: a new exercise is timed without being named here."""
    from exercises.checks import lesson_02, lesson_18

    ids = exercise_ids()
    assert {lesson_02.q1.name, lesson_18.q3.name} <= set(ids)
    assert len(ids) == len(set(ids)) >= 40
