"""Measure the capstone's answers over several seeds, with the check's own code, to choose and justify
``helpers.capstone.GOAL_F1``.

Usage: python -m tools.capstone_goal [--seeds 0-9] [--answers reference,starter,...] [--json FILE] [--from-json FILE]

For every answer and every seed ``s`` (``--seeds``, 0 to 9 by default) it runs the check's own run,
``exercises.checks.lesson_12.run_project(answer, s)``: seeded with ``s``, the Trainer's ``args.seed`` set to ``s``,
trained on the training split only and from a fresh model, the kept model scored on the held-out split; only the
seed differs from what ``q2.check()`` does. "Always positive" and "always negative" are scored from the held-out
labels. It prints min / median / max per answer, how many seeds reach the goal, whether the starter fails and the
reference passes on every seed, and the margins. About 10 s per run on a 2-core CPU: run it in pieces
(``--answers``, ``--seeds 0-4``; ``--json`` merges each run into the file as it goes) and summarise with
``--from-json``. Not part of ``make test``. Its figures go into the lesson and docs/workshop.md ("The capstone"),
with the date.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import statistics
import sys
import time
from pathlib import Path


def reference():
    from exercises.solutions.lesson_12 import make_capstone_trainer

    return make_capstone_trainer()


def starter():
    from helpers.lessons.lesson_12 import make_starter_trainer

    return make_starter_trainer()


def balanced_weights(labels):
    """The reference's class weights, total / (2 * count) per class, counted on ``labels``."""
    import torch

    labels = torch.tensor(labels)
    return len(labels) / (2 * torch.bincount(labels, minlength=2).float())


def _rebuilt(trainer, trainer_class, args=None, **extra):
    """The same Trainer's parts in another Trainer class or with other arguments."""
    return trainer_class(
        model_init=trainer.model_init,
        args=args or trainer.args,
        train_dataset=trainer.train_dataset,
        eval_dataset=trainer.eval_dataset,
        data_collator=trainer.data_collator,
        compute_metrics=trainer.compute_metrics,
        **extra,
    )


def starter_with_weighted_loss():
    """The starter with lesson 07's loss and the reference's balanced weights, nothing else."""
    from helpers.lessons.lesson_07 import WeightedLossTrainer

    plain = starter()
    return _rebuilt(plain, WeightedLossTrainer, class_weights=balanced_weights(plain.train_dataset["labels"]))


def starter_keeping_best():
    """The starter, saving every epoch and keeping the best model by F1, nothing else."""
    from transformers import Trainer

    plain = starter()
    args = dataclasses.replace(
        plain.args, save_strategy="epoch", save_total_limit=1, load_best_model_at_end=True, metric_for_best_model="f1"
    )
    return _rebuilt(plain, Trainer, args)


def weights_from_validation():
    """The reference, its class weights counted on the validation split (a known wrong answer)."""
    trainer = reference()
    trainer.class_weights = balanced_weights(trainer.eval_dataset["labels"])
    return trainer


def weights_inverted():
    """The reference, its class weights swapped: the common class weighed 9 times more (a known wrong answer)."""
    trainer = reference()
    trainer.class_weights = trainer.class_weights.flip(0)
    return trainer


# name: (factory, what the check must do with it: "passes" or "fails" on every seed, or "measured")
ANSWERS = {
    "reference": (reference, "passes"),
    "starter": (starter, "fails"),
    "starter + weighted loss": (starter_with_weighted_loss, "measured"),
    "starter + best model by F1": (starter_keeping_best, "measured"),
    "weights from validation": (weights_from_validation, "measured"),
    "weights inverted": (weights_inverted, "measured"),
}
CONSTANT = {"always positive": 1, "always negative": 0}  # scored from the labels, the same on every seed


def measure(name: str, seed: int) -> float:
    """The answer's held-out score for one seed, by the check's own run."""
    from exercises.checks.lesson_12 import run_project

    started = time.perf_counter()
    _, result = run_project(ANSWERS[name][0], seed)
    print(f"  {name}, seed {seed}: {result['f1']:.3f} ({time.perf_counter() - started:.0f} s)", flush=True)
    return round(result["f1"], 4)


def constant_f1(answer: int) -> float:
    """The held-out minority F1 of answering ``answer`` for every review."""
    from helpers import capstone

    positives = round(capstone.SIZES["held_out"] * capstone.POSITIVE_SHARE)
    return 2 * positives / (positives + capstone.SIZES["held_out"]) if answer == 1 else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0-9", help="a range of seeds, such as 0-9 or 5-9")
    parser.add_argument("--answers", default=",".join(ANSWERS), help="comma-separated, from: " + ", ".join(ANSWERS))
    parser.add_argument("--json", type=Path, help="merge the scores into this file")
    parser.add_argument("--from-json", type=Path, help="only print the summary of scores written by --json")
    options = parser.parse_args()
    names = [name.strip() for name in options.answers.split(",")]
    unknown = [name for name in names if name not in ANSWERS]
    first, _, last = options.seeds.partition("-")
    if unknown or not first.isdigit() or not (last or first).isdigit() or int(last or first) < int(first):
        parser.error(f"unknown answers {unknown} (choose from {list(ANSWERS)}), or --seeds is not a range like 0-9")
    seeds = range(int(first), int(last or first) + 1)

    import helpers
    from helpers import capstone

    started = time.perf_counter()
    if options.from_json:
        record = json.loads(options.from_json.read_text())
    else:
        helpers.setup_notebook(announce=False)
        record = json.loads(options.json.read_text()) if options.json and options.json.exists() else {"scores": {}}
        today = datetime.date.today().isoformat()
        for name in names:
            for seed in seeds:  # by seed, so pieces of a measurement merge into one file
                record["scores"].setdefault(name, {})[str(seed)] = {"date": today, "f1": measure(name, seed)}
                for constant, answer in CONSTANT.items():
                    record["scores"].setdefault(constant, {})[str(seed)] = {"date": today, "f1": constant_f1(answer)}
                if options.json:
                    options.json.write_text(json.dumps(record, indent=2) + "\n")
    by_seed = record["scores"]
    summarize({name: [entry["f1"] for entry in runs.values()] for name, runs in by_seed.items()}, capstone.GOAL_F1)
    dates = sorted({entry["date"] for runs in by_seed.values() for entry in runs.values()})
    print(f"measured on {', '.join(dates)}; this summary in {time.perf_counter() - started:.0f} s")
    return 0


def summarize(scores: dict[str, list[float]], goal: float) -> None:
    """Print min / median / max per answer, how many seeds reach the goal, and the margins that matter."""
    expected = {name: ANSWERS[name][1] if name in ANSWERS else "fails" for name in scores}
    print(f"\nminority-class F1 on the held-out split, goal {goal}:")
    print(f"{'answer':>27} | seeds | {'min':>5} | {'median':>6} | {'max':>5} | reach the goal | the check")
    for name, values in scores.items():
        reached = sum(value >= goal for value in values)
        if expected[name] == "measured":
            verdict = "judged by its score"
        else:
            right = reached == (len(values) if expected[name] == "passes" else 0)
            verdict = f"{expected[name]} on {'every seed' if right else 'NOT every seed'}"
        print(
            f"{name:>27} | {len(values):>5} | {min(values):.3f} | {statistics.median(values):6.3f} | "
            f"{max(values):.3f} | {reached:>2} of {len(values):<2}       | {verdict}"
        )
    passing = [value for name, values in scores.items() if expected[name] == "passes" for value in values]
    failing = [value for name, values in scores.items() if expected[name] == "fails" for value in values]
    if passing and failing:
        print(
            f"margins: the lowest passing score is {min(passing) - goal:+.3f} from the goal, the highest failing one "
            f"{max(failing) - goal:+.3f}; goals between {max(failing):.3f} and {min(passing):.3f} separate them"
        )


if __name__ == "__main__":
    sys.exit(main())
