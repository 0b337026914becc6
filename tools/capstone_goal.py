"""Measure the capstone's score over several seeds, to choose ``helpers.capstone.GOAL_F1`` and know its margin.

Usage: python tools/capstone_goal.py [--seeds 10] [--answers reference,starter,...] [--json FILE]

For every answer (the reference solution and the known wrong answers of ``helpers.solutions.lesson_12``) and
every seed ``s`` in 0..N-1, it seeds with ``s``, builds the answer's Trainer, sets its ``args.seed`` to ``s``
(the model from ``model_init``, the dropout and the data order all follow it), trains it and scores the model
kept with ``helpers.capstone.minority_f1``: the same path as the check, with the seed varied. "Always
positive" is scored from the validation labels. It prints min / median / max per answer, whether the goal
passes and fails each as it should on every seed, and the widest goal that would. A few minutes on a 2-core CPU;
not part of ``make test``. Its figures go into docs/workshop.md ("The capstone"), with the date.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# name: (function in helpers.solutions.lesson_12, or the starter, and what the check does with it). "passes" and
# "fails" are judged by the score; the check rejects "settings" answers before training, whatever they would score;
# "open" ones pass or fail by their score.
ANSWERS = {
    "reference": ("make_capstone_trainer", "passes"),
    "starter": ("make_starter_trainer", "settings"),
    "kept by eval_loss": ("make_trainer_kept_by_loss", "settings"),
    "no class weights": ("make_unweighted_trainer", "open"),  # judged by its outcome, like any other route
}


def make_unweighted_trainer():
    """The reference with both class weights at 1: every setting right, the plain loss."""
    import torch

    from helpers.solutions import lesson_12 as solutions

    trainer = solutions.make_capstone_trainer()
    trainer.class_weights = torch.ones(2)
    return trainer


def always_positive_f1() -> float:
    """The minority-class F1 of predicting "positive" for every validation review (precision = share, recall 1)."""
    from helpers import capstone

    labels = capstone.load_data()["validation"]["labels"]
    share = sum(labels) / len(labels)
    return 2 * share / (1 + share)


def measure(name: str, seeds: range) -> list[float]:
    """The answer's score for each seed (see the module docstring)."""
    import helpers
    from helpers import capstone
    from helpers.solutions import lesson_12 as solutions

    owner = {"starter": capstone, "no class weights": sys.modules[__name__]}.get(name, solutions)
    factory = getattr(owner, ANSWERS[name][0])
    scores = []
    for seed in seeds:
        started = time.perf_counter()
        trainer = helpers.quiet(capstone.seeded_trainer(factory, seed))
        trainer.args.seed = seed
        trainer.train()
        scores.append(capstone.minority_f1(trainer.model, capstone.load_data()["validation"]))
        print(f"  {name}, seed {seed}: {scores[-1]:.3f} ({time.perf_counter() - started:.0f} s)", flush=True)
    return scores


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--answers", default=",".join(ANSWERS), help="comma-separated, from: " + ", ".join(ANSWERS))
    parser.add_argument("--json", type=Path, help="also write the scores to this file")
    parser.add_argument("--from-json", type=Path, help="print the summary of scores written earlier by --json")
    options = parser.parse_args()
    names = [name.strip() for name in options.answers.split(",")]
    unknown = [name for name in names if name not in ANSWERS]
    if unknown or options.seeds < 1:
        parser.error(f"unknown answers {unknown} (choose from {list(ANSWERS)}), or --seeds below 1")

    import helpers
    from helpers import capstone

    started = time.perf_counter()
    if options.from_json:
        scores = json.loads(options.from_json.read_text())["scores"]
        options.seeds = len(scores["always positive"])
    else:
        helpers.setup_notebook()
        scores = {name: measure(name, range(options.seeds)) for name in names}
        scores["always positive"] = [always_positive_f1()] * options.seeds
    summarize(scores, capstone.GOAL_F1)
    print(f"measured in {time.perf_counter() - started:.0f} s")
    if options.json:
        options.json.write_text(json.dumps({"goal": capstone.GOAL_F1, "scores": scores}, indent=2) + "\n")
    return 0


def summarize(scores: dict[str, list[float]], goal: float) -> None:
    """Print min / median / max per answer, whether the goal treats each as it should, and the margins."""
    expected = {name: ANSWERS[name][1] if name in ANSWERS else "fails" for name in scores}

    print(f"\nminority-class F1 over {len(next(iter(scores.values())))} seeds, goal {goal}:")
    print(f"{'answer':>18} | {'min':>5} | {'median':>6} | {'max':>5} | the check")
    for name, values in scores.items():
        if expected[name] == "settings":
            verdict = f"rejects it by its settings before training ({sum(v >= goal for v in values)} reach the goal)"
        elif expected[name] == "open":
            verdict = f"passes it on the {sum(v >= goal for v in values)} seeds that reach the goal"
        else:
            right = all((value >= goal) == (expected[name] == "passes") for value in values)
            verdict = f"{expected[name]} by the score on {'every seed' if right else 'NOT every seed'}"
        print(f"{name:>18} | {min(values):.3f} | {statistics.median(values):6.3f} | {max(values):.3f} | {verdict}")
    passing = [value for name, values in scores.items() if expected[name] == "passes" for value in values]
    failing = [value for name, values in scores.items() if expected[name] == "fails" for value in values]
    if passing and failing:
        print(
            f"goals that separate them: above {max(failing):.3f} and up to {min(passing):.3f}; the goal {goal} is "
            f"{min(passing) - goal:.3f} below the lowest passing score and {goal - max(failing):.3f} above the "
            "highest failing one"
        )


if __name__ == "__main__":
    sys.exit(main())
