"""`make bench`: measure, in one run and as ratios, what the lessons only sample.

1. Padding strategies (lesson 09): padded-token fraction and epoch-time ratio of max_length padding, dynamic
   padding, and dynamic padding with length-grouped sampling (``helpers.performance.compare_padding``).
2. Gradient-monitoring overhead (lesson 08): a plain Trainer against ``GradientNormRecorder`` and the seeds'
   print-every-parameter callback (``helpers.monitor_cost.monitoring_overhead``).
3. Callback overhead: a plain Trainer against one with the course's recording callbacks (lesson 05's
   ``EventRecorder`` and lesson 03's ``AppliedLRRecorder``), with the same function.
4. Subclass against callback (lesson 08, the Long customisation post's section 4.3): the same per-step work
   (per-layer gradient norms) in a ``training_step`` override and in a callback (``subclass_vs_callback`` of
   ``helpers.monitor_cost``), as a ratio.
5. The suite's own time: ``make venv`` and ``make test`` from a fresh clone (unit tests and notebooks apart), as
   ``tools/setup_facts.py measure-suite`` last measured it (``docs/setup_facts.json``, with its date);
   ``--suite`` (``make bench SUITE=1``) measures it again first, about ten minutes on 2 cores.

Every Trainer comes from the course's one factory, lesson 01's ``make_trainer``, with lesson 09's
``MEASUREMENT_SETTINGS``, as in the lesson.

The course's goal for the gradient recorder is at most ``GOAL_RECORDER_RATIO`` (1.10x) a plain step; the bench
checks it strictly and exits with status 1 when this run missed it (rerun on a quiet machine before concluding).

It prints a table and writes the figures as JSON under ``bench/results/`` (gitignored). It is not a test: the
figures depend on the machine and on what else runs on it. Variants are interleaved and medians compared.

Usage: python -m tools.bench [--layers N] [--examples N] [--steps N] [--repeats N] [--out FOLDER] [--suite]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
COLUMNS = ["measurement", "variant", "figure", "value", "ratio"]
GOAL_RECORDER_RATIO = 1.10


def measure(
    layers: int, examples: int, steps: int, repeats: int, batch_size: int = 16, max_length: int = 64
) -> dict[str, Any]:
    """Run the three measurements and return every figure (nothing printed)."""
    from functools import partial

    import torch
    from transformers import DataCollatorWithPadding

    import helpers
    from helpers.callback_events import EventRecorder
    from helpers.data import load_reviews, select_examples, tokenize_reviews
    from helpers.lessons.lesson_03 import AppliedLRRecorder
    from helpers.monitor_cost import monitoring_overhead, subclass_vs_callback
    from helpers.performance import MEASUREMENT_SETTINGS, compare_padding, default_clock, padding_strategies
    from helpers.trainers import make_trainer

    helpers.setup_notebook(seed=0)
    if not torch.cuda.is_available():
        torch.set_num_threads(1)  # CPU seconds then count work, not threads waiting for each other (as in lesson 09)
    model, tokenizer = helpers.load_model_and_tokenizer(num_layers=layers)
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)  # as in lesson 09: its update blurs the ratios
    train_set = tokenize_reviews(select_examples(load_reviews()["train"], examples), tokenizer, max_length)
    # The course's one factory with lesson 09's measurement settings, exactly as the lesson builds its Trainers.
    trainer_for = partial(
        make_trainer,
        "bench",
        model=model,
        settings={**MEASUREMENT_SETTINGS, "per_device_train_batch_size": batch_size},
        train_dataset=train_set,
        data_collator=DataCollatorWithPadding(tokenizer),
    )

    strategies = padding_strategies(tokenizer, max_length)
    padding = compare_padding(
        {name: trainer_for(data_collator=s["collator"], **s["overrides"]) for name, s in strategies.items()},
        rounds=repeats,
    )
    step_trainer = lambda callbacks: trainer_for(callbacks=callbacks, max_steps=steps)  # noqa: E731
    gradients = monitoring_overhead(step_trainer, steps=steps, repeats=repeats)
    callbacks = monitoring_overhead(
        step_trainer,
        steps=steps,
        repeats=repeats,
        monitors={"plain": lambda: [], "recording callbacks": lambda: [EventRecorder(), AppliedLRRecorder()]},
    )
    subclass = subclass_vs_callback(
        lambda trainer_class, callbacks: trainer_for(callbacks=callbacks, trainer_class=trainer_class, max_steps=steps),
        steps=steps,
        repeats=repeats,
    )
    return {
        "settings": {
            "layers": layers,
            "examples": examples,
            "steps": steps,
            "repeats": repeats,
            "batch_size": batch_size,
            "max_length": max_length,
            "clock": default_clock(),
            "torch_threads": torch.get_num_threads(),
            "word_embeddings": "frozen",
        },
        "machine": {
            "summary": helpers.hardware_summary(helpers.detect_hardware()),
            "python": platform.python_version(),
            "versions": helpers.versions(),
        },
        "padding": padding,
        "gradient_monitoring": gradients,
        "callbacks": callbacks,
        "subclass_vs_callback": subclass,
    }


def table_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Flatten the results into rows of ``COLUMNS`` for printing."""
    for key in ("padding", "gradient_monitoring", "callbacks", "subclass_vs_callback"):
        if key not in results:
            raise KeyError(f"results lack {key!r}; pass what measure() returned.")
    rows: list[dict[str, Any]] = []
    for name, figures in results["padding"].items():
        rows.append(
            {
                "measurement": "padding",
                "variant": name,
                "figure": "padded fraction",
                "value": figures["padded_fraction"],
                "ratio": None,
            }
        )
        rows.append(
            {
                "measurement": "padding",
                "variant": name,
                "figure": "epoch seconds",
                "value": figures["epoch_seconds"],
                "ratio": figures["time_ratio"],
            }
        )
    for key, label in (
        ("gradient_monitoring", "gradient monitoring"),
        ("callbacks", "callback overhead"),
        ("subclass_vs_callback", "subclass vs callback"),
    ):
        measured = results[key]
        for name, seconds in measured["step_seconds"].items():
            rows.append(
                {
                    "measurement": label,
                    "variant": name,
                    "figure": f"step seconds ({measured['clock']})",
                    "value": seconds,
                    "ratio": measured["ratio"][name],
                }
            )
    rows.append(
        {
            "measurement": "subclass vs callback",
            "variant": "subclass / callback",
            "figure": "step time ratio",
            "value": None,
            "ratio": results["subclass_vs_callback"]["subclass_over_callback"],
        }
    )
    return rows


def suite_rows(facts: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of ``COLUMNS`` for the suite's own time (``setup_facts``'s ``suite`` record); none if never measured."""
    suite = facts.get("suite")
    if not suite:
        return []
    parts, label = suite["parts"], f"suite ({suite['date']})"
    figures = [
        ("make venv", "install seconds", suite["install_seconds"]),
        ("make test", "wall seconds", suite["test_seconds"]),
        ("unit tests", "process seconds", parts["unit"]),
        ("notebooks", "process seconds", sum(parts["notebooks"].values())),
    ]
    return [
        {"measurement": label, "variant": variant, "figure": figure, "value": value, "ratio": None}
        for variant, figure, value in figures
    ]


def goal_check(results: dict[str, Any], goal: float = GOAL_RECORDER_RATIO) -> tuple[bool, str]:
    """Whether the gradient recorder met the goal (its step-time ratio to plain at most ``goal``), and a line."""
    ratio = results["gradient_monitoring"]["ratio"]["efficient"]
    met = ratio <= goal
    return met, f"gradient recorder: {ratio:.3f}x a plain step, goal <= {goal:.2f}x: {'met' if met else 'MISSED'}"


def write_results(results: dict[str, Any], folder: Path = RESULTS) -> Path:
    """Write the results as JSON to ``folder/bench-<UTC time>.json`` and return the path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"bench-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}.json"
    path.write_text(json.dumps(results, indent=2, sort_keys=True, default=str))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=2, help="encoder layers kept (1 to 6)")
    parser.add_argument("--examples", type=int, default=512, help="training reviews (padding epoch)")
    parser.add_argument("--steps", type=int, default=8, help="optimizer steps per overhead run")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds per variant")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the JSON file")
    parser.add_argument("--suite", action="store_true", help="measure make venv + make test from a fresh clone first")
    options = parser.parse_args(argv)
    from helpers.performance import format_table
    from tools import setup_facts

    if options.suite:
        setup_facts.measure_suite()
        setup_facts.write_readme()
    started = time.perf_counter()
    results = measure(options.layers, options.examples, options.steps, options.repeats)
    results["wall_seconds"] = time.perf_counter() - started
    results["suite"] = setup_facts.load_facts().get("suite")
    print(format_table(table_rows(results) + suite_rows({"suite": results["suite"]}), COLUMNS))
    if not results["suite"]:
        print("suite: not measured yet (make bench SUITE=1)")
    met, line = goal_check(results)
    print(line)
    print(f"written to {write_results(results, options.out)} ({results['wall_seconds']:.0f} s)")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
