"""The source posts' era (``python -m tools.ladder era``): the release they were written for
(:data:`course_facts.pins.SOURCE_RELEASE`) does not install on Python 3.11, so its wheel is read, not run: the
excerpts the lessons quote, and the claims read from the source, bisected up to the oldest rung.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from course_facts.pins import SOURCE_RELEASE
from tools.ladder.bisection import bisect_changes
from tools.ladder.environments import run_command
from tools.ladder.package_index import fetch_index, final_releases
from tools.ladder.page import write_page
from tools.ladder.results_file import change_problems, problems, read_results, write_results
from tools.ladder.rungs import LADDER_DIR, RELEASES, LadderError, error_line, version_key

ERA = SOURCE_RELEASE  # course_facts/pins.py
WHEELS = LADDER_DIR / "wheels"


@dataclass(frozen=True)
class SourceClaim:
    """A claim read from a release's source, not run: it holds when ``pattern`` is found (or, with
    ``holds_if_found=False``, when it is not) in ``file`` of the release's wheel."""

    id: str
    claim: str
    where: str
    file: str
    pattern: str
    holds_if_found: bool = True


SOURCE_CLAIMS: tuple[SourceClaim, ...] = (
    SourceClaim(
        "metrics_only_at_on_evaluate",
        "`metrics` is passed only to `on_evaluate`: the callbacks have no `on_predict` event.",
        "05 §3",
        "transformers/trainer_callback.py",
        r"def on_predict\(",
        holds_if_found=False,
    ),
    SourceClaim(
        "load_best_model_saves_at_each_evaluation",
        "With `load_best_model_at_end=True`, `DefaultFlowCallback` saves at every evaluation (and not on the "
        "`save_steps` schedule).",
        "02 §4; 11 §5",
        "transformers/trainer_callback.py",
        r"if args\.load_best_model_at_end:\s*\n\s*control\.should_save = True",
    ),
)

# Quoted by the lessons from the source release's wheel: {key: (file, a regular expression for the first line, lines)}.
EXCERPTS: dict[str, tuple[str, str, int]] = {
    "data_collator_doc": ("transformers/trainer.py", r"^\s+data_collator \(:obj:`DataCollator`", 4),
    "data_collator_type": ("transformers/data/data_collator.py", r"^DataCollator = NewType", 1),
    "eval_prediction": ("transformers/trainer_utils.py", r"^class EvalPrediction\(NamedTuple\)", 1),
    "compute_metrics_call": ("transformers/trainer.py", r"metrics = self\.compute_metrics\(EvalPrediction\(", 1),
    "max_steps_doc": ("transformers/training_args.py", r"^\s+max_steps \(:obj:`int`", 3),
    "prediction_loss_only_doc": ("transformers/training_args.py", r"^\s+prediction_loss_only \(:obj:`bool`", 2),
    "ignore_data_skip_doc": ("transformers/training_args.py", r"^\s+ignore_data_skip \(:obj:`bool`", 4),
    "metrics_doc": ("transformers/trainer_callback.py", r"^\s+metrics \(:obj:`Dict\[str, float\]`\):", 4),
    "on_evaluate_handler": (
        "transformers/trainer_callback.py",
        r"^\s+def on_evaluate\(self, args: TrainingArguments.*metrics\):",
        2,
    ),
    "flow_on_step_end_evaluate": (
        "transformers/trainer_callback.py",
        r"^\s+if args\.evaluation_strategy == IntervalStrategy\.STEPS and",
        4,
    ),
    "flow_on_step_end_save": ("transformers/trainer_callback.py", r"^\s+not args\.load_best_model_at_end$", 4),
    "logging_first_step_doc": ("transformers/training_args.py", r"^\s+logging_first_step \(:obj:`bool`", 2),
    "logging_first_step_flow": (
        "transformers/trainer_callback.py",
        r"^\s+if state\.global_step == 1 and args\.logging_first_step:",
        2,
    ),
    "skip_memory_metrics_doc": ("transformers/training_args.py", r"^\s+skip_memory_metrics \(:obj:`bool`", 1),
}


def wheel(version: str) -> Path:
    """The release's wheel under ``.venv-ladder/wheels`` (downloaded once, never installed)."""
    found = sorted(WHEELS.glob(f"transformers-{version}-*.whl"))
    if found:
        return found[0]
    WHEELS.mkdir(parents=True, exist_ok=True)
    run_command(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(WHEELS), f"transformers=={version}"]
    )
    found = sorted(WHEELS.glob(f"transformers-{version}-*.whl"))
    if not found:
        raise LadderError(f"pip downloaded no wheel of transformers {version}")
    return found[0]


def wheel_text(path: Path, name: str) -> str:
    import zipfile

    with zipfile.ZipFile(path) as archive:
        try:
            return archive.read(name).decode("utf-8")
        except KeyError as error:
            raise LadderError(f"{path.name} has no {name}") from error


def source_verdicts(read: Callable[[str], str], claims=SOURCE_CLAIMS) -> dict[str, dict[str, str]]:
    """``{claim id: {verdict, evidence}}`` from a release's files (``read(name)`` returns a file's text)."""
    verdicts = {}
    for claim in claims:
        text = read(claim.file)
        match = re.search(claim.pattern, text)
        holds = bool(match) == claim.holds_if_found
        where = f"{claim.file}:{text[: match.start()].count(chr(10)) + 1}" if match else claim.file
        evidence = f"{'found' if match else 'not found'}: /{claim.pattern}/ in {where}"
        verdicts[claim.id] = {"verdict": "holds" if holds else "does not hold", "evidence": evidence}
    return verdicts


def excerpt(text: str, pattern: str, lines: int) -> tuple[int, str]:
    """The first line that matches ``pattern`` (its number, from 1) and the ``lines`` lines from it."""
    rows = text.splitlines()
    for number, row in enumerate(rows, start=1):
        if re.search(pattern, row):
            return number, "\n".join(rows[number - 1 : number - 1 + lines])
    raise LadderError(f"no line matches /{pattern}/")


def command_era() -> int:
    """Quote the source release's code for the lessons; bisect the source claims from it to the oldest rung."""
    start = time.perf_counter()
    results = read_results()
    era_wheel = wheel(ERA)
    excerpts = {}
    for key, (name, pattern, lines) in EXCERPTS.items():
        number, text = excerpt(wheel_text(era_wheel, name), pattern, lines)
        excerpts[key] = {"file": name, "line": number, "text": text}
    finals = [item["version"] for item in final_releases(fetch_index("transformers"))]
    oldest = RELEASES[0].version
    read_at: dict[str, dict[str, dict[str, str]]] = {}

    def measure(version: str, probes: list[str]) -> dict[str, str] | None:
        try:
            path = wheel(version)
        except LadderError as error:
            read_at[version] = {"not_run": error_line(error)}
            return None
        read_at[version] = source_verdicts(lambda name: wheel_text(path, name))
        return {key: read_at[version][key]["verdict"] for key in probes}

    for version in (ERA, oldest):
        measure(version, [])
    verdicts = {v: {key: value["verdict"] for key, value in read_at[v].items()} for v in (ERA, oldest)}
    found = bisect_changes([ERA, oldest], verdicts, finals, measure)
    results["era"] = {
        "about": f"Written by `python -m tools.ladder era`: {ERA}'s source, read from its wheel (it does not "
        "install on Python 3.11), quoted by the lessons; and claims read from the source of the releases between "
        f"{ERA} and {oldest}, bisected. Read, not run.",
        "release": ERA,
        "wheel": era_wheel.name,
        "excerpts": excerpts,
        "claims": {
            c.id: {"claim": c.claim, "where": c.where, "file": c.file, "pattern": c.pattern} for c in SOURCE_CLAIMS
        },
        "read": {v: read_at[v] for v in sorted(read_at, key=version_key)},
        "changes": found,
        "seconds": round(time.perf_counter() - start, 1),
    }
    write_results(results)
    if not problems(results) and not change_problems(results):
        write_page(results)
    for change in found:
        print(f"{change['probe']}: {change['old']} on {change['last_old']}, {change['new']} from {change['first_new']}")
    print(f"era: {len(excerpts)} excerpts of {ERA}, {len(found)} changes, {results['era']['seconds']} s")
    return 0
