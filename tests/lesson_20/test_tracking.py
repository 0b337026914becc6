"""Lesson 20's claims about trackio, tried beyond the lesson's one-process notebook run.

The tests start this file as a script (``python tests/lesson_20/test_tracking.py OUT_DIR``) so that trackio is
imported after ``TRACKIO_DIR`` points into the test's folder (trackio reads it once, at import) and ``HF_HOME``
into another, under the course's network guard (tests/conftest.py hands it to every subprocess; an attempt to
reach another machine fails the test even when a library catches the error). The script:

* trains one tracked run (``report_to=["trackio", "tensorboard"]``) on one process;
* trains the lesson's ``ConfidenceTrainer`` on two real processes (DDP over gloo, ``exercises.checks.processes``)
  with ``report_to="trackio"``, and a variant that sums its counts over processes before dividing;
* writes what each process logged to ``OUT_DIR/report.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "lesson-20-tests"


def _tracked_trainer(trainer_class: Any, output_dir: str, run_name: str, report_to: Any, **settings: Any) -> Any:
    from transformers import TrainingArguments

    from exercises.checks import fixtures

    args = TrainingArguments(
        output_dir=output_dir,
        report_to=report_to,
        project=PROJECT,
        run_name=run_name,
        max_steps=4,
        logging_steps=2,
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        **settings,
    )
    return trainer_class(model=fixtures.tiny_model(), args=args, train_dataset=fixtures.random_ids(32))


def _worker(out: Path) -> None:
    os.environ["TRACKIO_DIR"] = str(out / "trackio")
    import trackio  # noqa: F401  (imported after TRACKIO_DIR is set, before the processes fork)

    from exercises.checks.processes import two_processes
    from helpers.lessons.lesson_20 import ConfidenceTrainer

    class SummedConfidenceTrainer(ConfidenceTrainer):
        """The lesson's advice for several processes: sum both counts over processes, then divide."""

        def log(self, logs, start_time=None):
            if "loss" in logs and self.examples:
                import torch

                counts = torch.tensor([self.confidence_sum, float(self.examples)])
                total_sum, total_examples = self.accelerator.reduce(counts, "sum").tolist()
                self.confidence_sum, self.examples = total_sum, int(total_examples)
            super().log(logs, start_time)

    single = _tracked_trainer(ConfidenceTrainer, str(out / "single"), "single", ["trackio", "tensorboard"])
    single.train()

    def history(trainer: Any) -> list[dict[str, Any]]:
        return [entry for entry in trainer.state.log_history if "loss" in entry]

    def make_plain(**sizes: Any) -> Any:
        return _tracked_trainer(ConfidenceTrainer, str(out / "ddp"), "ddp", ["trackio"], **sizes)

    def make_summed(**sizes: Any) -> Any:
        return _tracked_trainer(SummedConfidenceTrainer, str(out / "summed"), "summed", "none", **sizes)

    report = {
        "single": history(single),
        "ddp": two_processes(make_plain, history),
        "summed": two_processes(make_summed, history),
    }
    (out / "report.json").write_text(json.dumps(report))


@pytest.fixture(scope="module")
def tracked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("lesson20")
    env = {**os.environ, "HF_HOME": str(out / "hf_home"), "OMP_NUM_THREADS": "1"}
    env.pop("TRACKIO_SPACE_ID", None)
    env.pop("TRACKIO_SERVER_URL", None)
    done = subprocess.run(
        [sys.executable, __file__, str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {"out": out, "report": json.loads((out / "report.json").read_text()), "stdout": done.stdout}


def _stored(out: Path, run: str, metric: str) -> list[tuple[int, float]]:
    """A metric of a run, as trackio's own command line reads it back from the test's folder."""
    command = [sys.executable, "-m", "trackio.cli", "get", "metric", "--json", "--project", PROJECT]
    command += ["--run", run, "--metric", metric]
    env = {**os.environ, "TRACKIO_DIR": str(out / "trackio")}
    said = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return [(row["step"], row["value"]) for row in json.loads(said.stdout)["values"]]


def test_nothing_leaves_the_machine_and_the_data_stays_in_trackio_dir(tracked: dict[str, Any]) -> None:
    """The network guard saw no attempt (the autouse fixture of conftest.py fails the test otherwise); trackio
    wrote into TRACKIO_DIR only, never into the Hugging Face cache, and TensorBoard into the output folder."""
    out = tracked["out"]
    assert (out / "trackio" / f"{PROJECT}.db").is_file()
    assert not (out / "hf_home" / "trackio").exists()
    assert list((out / "single").glob("runs/*/events.out.tfevents.*"))
    assert "Trackio metrics logged to: " + str(out / "trackio") in tracked["stdout"]


def test_a_value_added_in_log_shares_the_trainers_trackio_steps(tracked: dict[str, Any]) -> None:
    out = tracked["out"]
    loss, confidence = _stored(out, "single", "train/loss"), _stored(out, "single", "train/confidence")
    assert [step for step, _ in loss] == [step for step, _ in confidence] == [0, 1]
    logged = tracked["report"]["single"]
    assert [value for _, value in confidence] == pytest.approx([entry["confidence"] for entry in logged])


def test_on_two_processes_only_process_zero_reports_and_the_loss_is_gathered(tracked: dict[str, Any]) -> None:
    out = tracked["out"]
    zero, one = tracked["report"]["ddp"]
    assert [entry["loss"] for entry in zero] == pytest.approx([entry["loss"] for entry in one])
    stored = _stored(out, "ddp", "train/loss")
    assert len(stored) == len(zero) == 2  # one record: two logs, not four
    assert [value for _, value in stored] == pytest.approx([entry["loss"] for entry in zero])
    # A value of your own is each process's: process 0's reached trackio, process 1's did not.
    assert [e["confidence"] for e in zero] != pytest.approx([e["confidence"] for e in one])
    stored_confidence = [value for _, value in _stored(out, "ddp", "train/confidence")]
    assert stored_confidence == pytest.approx([entry["confidence"] for entry in zero])


def test_summing_the_counts_over_processes_gives_every_process_the_mean_of_both(tracked: dict[str, Any]) -> None:
    """Both processes see 4 reviews a step, so the mean over both is the mean of their own means."""
    plain_zero, plain_one = tracked["report"]["ddp"]
    summed_zero, summed_one = tracked["report"]["summed"]
    both = [(a["confidence"] + b["confidence"]) / 2 for a, b in zip(plain_zero, plain_one)]
    assert [e["confidence"] for e in summed_zero] == pytest.approx(both, rel=1e-5)
    assert [e["confidence"] for e in summed_one] == pytest.approx(both, rel=1e-5)


if __name__ == "__main__":  # the course's packages are installed (editable) in .venv: no sys.path edit
    _worker(Path(sys.argv[1]))
