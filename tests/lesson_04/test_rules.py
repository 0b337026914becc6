"""Lesson 04's rules (compute_metrics), tried beyond the lesson's run: an uneven last evaluation batch, a model that
returns more than logits, a model whose forward lacks **kwargs (TinyModel), the stock BERT classifier, one and two
evaluation sets, evaluation by steps and by epochs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from rule_training import trainer
from tiny_training import toy_dataset
from transformers import EarlyStoppingCallback

from exercises.checks import fixtures


class _Seen:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, Any]] = []

    def __call__(self, prediction: Any) -> dict[str, float]:
        self.calls.append((prediction.predictions, prediction.label_ids))
        logits = prediction.predictions[0] if isinstance(prediction.predictions, tuple) else prediction.predictions
        return {"accuracy": float((logits.argmax(-1) == prediction.label_ids).mean())}


def _bert(hidden_states: bool = False) -> Any:
    return fixtures.tiny_model(seed=0, output_hidden_states=hidden_states)


@pytest.mark.rule(
    lesson="04",
    section="Recap",
    text="`compute_metrics(eval_prediction)` gets the logits (or a tuple, logits first) and the label ids, and "
    "returns a dict of numbers, logged as `eval_<name>` at every evaluation `eval_strategy` schedules.",
    covers=[
        "uneven last evaluation batch (7 rows, batch 2)",
        "a model returning hidden states too (a tuple)",
        "TinyModel (forward without **kwargs)",
        "evaluation by steps and by epochs",
    ],
)
@pytest.mark.parametrize("model", ["tiny", "bert", "bert+hidden"])
@pytest.mark.parametrize("strategy", [{"eval_strategy": "steps", "eval_steps": 2}, {"eval_strategy": "epoch"}])
def test_compute_metrics_gets_logits_first_and_every_label(tmp_path: Any, model: str, strategy: dict[str, Any]) -> None:
    seen = _Seen()
    if model == "tiny":
        built, train, evaluation = None, toy_dataset(12), toy_dataset(7)
    else:
        built, train, evaluation = (
            _bert(model.endswith("hidden")),
            fixtures.random_ids(12),
            fixtures.random_ids(7, seed=2),
        )
    run = trainer(
        tmp_path,
        model=built,
        train_dataset=train,
        eval_dataset=evaluation,
        compute_metrics=seen,
        per_device_eval_batch_size=2,
        num_train_epochs=2,
        **strategy,
    )
    run.train()
    evaluations = [entry for entry in run.state.log_history if "eval_loss" in entry]
    assert len(seen.calls) == len(evaluations) == (6 if "eval_steps" in strategy else 2)
    assert all("eval_accuracy" in entry for entry in evaluations)
    for predictions, labels in seen.calls:
        assert isinstance(predictions, tuple) == (model == "bert+hidden")
        logits = predictions[0] if isinstance(predictions, tuple) else predictions
        assert logits.shape == (7, 2) and labels.shape == (7,)
        assert np.array_equal(labels, np.array([int(row["labels"]) for row in evaluation]))


@pytest.mark.rule(
    lesson="04",
    section="Recap",
    text="`metric_for_best_model` and `EarlyStoppingCallback` must name a metric you return",
    covers=["a metric not returned", "with and without the eval_ prefix", "TinyModel"],
)
@pytest.mark.parametrize("name", ["f1", "eval_f1"])
def test_a_best_model_metric_not_returned_fails_loudly(tmp_path: Any, name: str) -> None:
    run = trainer(
        tmp_path,
        rows=8,
        eval_dataset=toy_dataset(4),
        compute_metrics=_Seen(),
        eval_strategy="steps",
        eval_steps=2,
        save_strategy="steps",
        save_steps=2,
        load_best_model_at_end=True,
        metric_for_best_model=name,
        callbacks=[EarlyStoppingCallback(early_stopping_patience=1)],
    )
    with pytest.raises(KeyError, match="f1"):
        run.train()
    found = trainer(
        tmp_path / "ok",
        rows=8,
        eval_dataset=toy_dataset(4),
        compute_metrics=_Seen(),
        eval_strategy="steps",
        eval_steps=2,
        save_strategy="steps",
        save_steps=2,
        load_best_model_at_end=True,
        metric_for_best_model=name.replace("f1", "accuracy"),
        callbacks=[EarlyStoppingCallback(early_stopping_patience=1)],
    )
    found.train()
    assert found.state.best_metric is not None


@pytest.mark.rule(
    lesson="04",
    section="Recap",
    text="With a dict of evaluation sets every metric is `eval_<set>_<metric>`: name one set's metric for the best "
    "model and early stopping",
    covers=["two evaluation sets", "load_best_model_at_end with early stopping", "uneven last evaluation batch"],
)
@pytest.mark.rule(
    lesson="04",
    section="3. Several evaluation sets",
    text='`metric_for_best_model` must now name one set\'s metric: plain `"f1"` no longer exists (the run would stop '
    "at the first evaluation with a `KeyError` that lists the names that do).",
    covers=[
        "two evaluation sets, evaluation every 2 updates",
        "plain 'accuracy': KeyError at step 2 naming eval_small_accuracy and eval_large_accuracy",
        "one set's metric: the run completes",
    ],
)
def test_a_dict_of_evaluation_sets_prefixes_each_metric(tmp_path: Any) -> None:
    sets = {"small": toy_dataset(3), "large": toy_dataset(7)}
    run = trainer(
        tmp_path,
        rows=12,
        eval_dataset=sets,
        compute_metrics=_Seen(),
        eval_strategy="steps",
        eval_steps=2,
        per_device_eval_batch_size=2,
        save_strategy="steps",
        save_steps=2,
        load_best_model_at_end=True,
        metric_for_best_model="eval_large_accuracy",
        callbacks=[EarlyStoppingCallback(early_stopping_patience=2)],
    )
    run.train()
    keys = {key for entry in run.state.log_history for key in entry if key.startswith("eval_")}
    assert {"eval_small_accuracy", "eval_large_accuracy", "eval_small_loss", "eval_large_loss"} <= keys
    assert "eval_accuracy" not in keys and run.state.best_metric is not None
    plain = trainer(
        tmp_path / "plain",
        rows=12,
        eval_dataset=sets,
        compute_metrics=_Seen(),
        eval_strategy="steps",
        eval_steps=2,
        metric_for_best_model="accuracy",
    )
    with pytest.raises(KeyError, match="eval_large_accuracy") as stopped:
        plain.train()
    assert "eval_small_accuracy" in str(stopped.value) and plain.state.global_step == 2


@pytest.mark.rule(
    lesson="04",
    section="Recap",
    text="No labels, a wrong `label_names`, or `prediction_loss_only` means no metrics, silently",
    covers=[
        "TinyModel (forward without **kwargs)",
        "the stock BERT classifier",
        "evaluate() and a train() with evaluation",
    ],
)
@pytest.mark.rule(
    lesson="04",
    section="4. When `compute_metrics` is never called",
    text="Without labels, or with `label_names` that name no column of the batch, there is no loss and no metric, "
    "and no error either; `prediction_loss_only=True` keeps the loss and skips the metrics.",
    covers=["TinyModel (forward without **kwargs)", "the stock BERT classifier (its batch still holds labels)"],
)
@pytest.mark.parametrize("model", ["tiny", "bert"])
@pytest.mark.parametrize("case", ["no labels", "wrong label_names", "prediction_loss_only"])
def test_no_metrics_silently(tmp_path: Any, model: str, case: str) -> None:
    if model == "tiny":
        built, evaluation = None, toy_dataset(6)
    else:
        built, evaluation = _bert(), fixtures.random_ids(6, seed=2)
    if case == "no labels":
        evaluation = [{k: v for k, v in row.items() if k != "labels"} for row in evaluation]
    settings = {"label_names": ["target"]} if case == "wrong label_names" else {}
    if case == "prediction_loss_only":
        settings["prediction_loss_only"] = True
    seen = _Seen()
    run = trainer(
        tmp_path,
        model=built,
        train_dataset=toy_dataset(8) if model == "tiny" else fixtures.random_ids(8),
        eval_dataset=evaluation,
        compute_metrics=seen,
        **settings,
    )
    metrics = run.evaluate()
    assert seen.calls == [] and "eval_accuracy" not in metrics
    assert ("eval_loss" in metrics) == (case == "prediction_loss_only"), sorted(metrics)


@pytest.mark.rule(
    lesson="04",
    section="Recap",
    text="label smoothing changes the eval loss, not the labels.",
    covers=["the stock BERT and Llama classifiers", "smoothing 0.1 and 0.3"],
)
@pytest.mark.parametrize("model", ["llama", "bert"])
@pytest.mark.parametrize("epsilon", [0.1, 0.3])
def test_label_smoothing_changes_the_loss_not_the_labels(tmp_path: Any, model: str, epsilon: float) -> None:
    def evaluate(folder: str, smoothing: float) -> tuple[float, Any]:
        seen = _Seen()
        # a model without a `config` (TinyModel) cannot take label_smoothing_factor at all (AttributeError)
        built = fixtures.tiny_llama(seed=0) if model == "llama" else _bert()
        data = fixtures.random_ids(6, seed=2)
        run = trainer(
            tmp_path / folder,
            model=built,
            train_dataset=data,
            eval_dataset=data,
            compute_metrics=seen,
            label_smoothing_factor=smoothing,
        )
        return run.evaluate()["eval_loss"], seen.calls[0][1]

    plain_loss, plain_labels = evaluate("plain", 0.0)
    smooth_loss, smooth_labels = evaluate("smooth", epsilon)
    assert np.array_equal(plain_labels, smooth_labels) and smooth_loss != pytest.approx(plain_loss, rel=1e-4)


@pytest.mark.rule(
    lesson="04",
    section="Recap",
    text="reduce them in `preprocess_logits_for_metrics`",
    covers=["an uneven last evaluation batch (7 rows, batch 2)", "the stock BERT classifier", "TinyModel"],
)
@pytest.mark.parametrize("model", ["tiny", "bert"])
def test_preprocess_logits_reduces_what_is_kept(tmp_path: Any, model: str) -> None:
    shapes: list[tuple[int, ...]] = []

    def reduce(logits: Any, labels: Any) -> Any:
        shapes.append(tuple(logits.shape))
        return logits.argmax(-1)

    seen = []

    def compute(prediction: Any) -> dict[str, float]:
        seen.append(prediction.predictions)
        return {"accuracy": float((prediction.predictions == prediction.label_ids).mean())}

    built, data = (None, toy_dataset(7)) if model == "tiny" else (_bert(), fixtures.random_ids(7, seed=2))
    run = trainer(
        tmp_path,
        model=built,
        train_dataset=data,
        eval_dataset=data,
        per_device_eval_batch_size=2,
        compute_metrics=compute,
        preprocess_logits_for_metrics=reduce,
    )
    metrics = run.evaluate()
    assert shapes == [(2, 2), (2, 2), (2, 2), (1, 2)]
    assert seen[0].shape == (7,) and "eval_accuracy" in metrics


@pytest.mark.rule(
    lesson="04",
    section="Recap",
    text='`load_best_model_at_end` needs matching save and eval strategies (or `save_strategy="best"`).',
    covers=[
        "steps against epoch",
        "steps not a multiple",
        "matching steps and epochs",
        "save_strategy='best' against steps and epochs",
        "a real run keeps the best",
    ],
)
def test_load_best_needs_matching_strategies(tmp_path: Any) -> None:
    from transformers import TrainingArguments

    for mismatch in (
        {"eval_strategy": "steps", "eval_steps": 2, "save_strategy": "epoch"},
        {"eval_strategy": "steps", "eval_steps": 2, "save_strategy": "steps", "save_steps": 3},
    ):
        with pytest.raises(ValueError):
            TrainingArguments(output_dir=str(tmp_path), load_best_model_at_end=True, **mismatch)
    for strategy in ("steps", "epoch"):
        TrainingArguments(
            output_dir=str(tmp_path), load_best_model_at_end=True, eval_strategy=strategy, save_strategy="best"
        )
    run = trainer(
        tmp_path,
        rows=12,
        eval_dataset=toy_dataset(4),
        compute_metrics=_Seen(),
        eval_strategy="steps",
        eval_steps=2,
        save_strategy="steps",
        save_steps=2,
        load_best_model_at_end=True,
        metric_for_best_model="accuracy",
    )
    run.train()
    assert run.state.best_model_checkpoint is not None


@pytest.mark.rule(
    lesson="04",
    section="Recap",
    text="`eval_accumulation_steps` only moves them off the GPU.",
    covers=[
        "CPU: the same predictions and metrics with 1 and 2",
        "an uneven last evaluation batch (7 rows, batch 2)",
        "TinyModel and the stock BERT classifier",
    ],
)
@pytest.mark.parametrize("model", ["tiny", "bert"])
def test_eval_accumulation_steps_changes_no_result(tmp_path: Any, model: str) -> None:
    def evaluate(folder: str, **settings: Any) -> tuple[Any, dict[str, float]]:
        seen = _Seen()
        built, data = (None, toy_dataset(7)) if model == "tiny" else (_bert(), fixtures.random_ids(7, seed=2))
        run = trainer(
            tmp_path / folder,
            model=built,
            train_dataset=data,
            eval_dataset=data,
            compute_metrics=seen,
            per_device_eval_batch_size=2,
            **settings,
        )
        metrics = run.evaluate()
        timings = ("runtime", "per_second", "preparation_time")
        return seen.calls[0][0], {k: v for k, v in metrics.items() if not k.endswith(timings)}

    plain, plain_metrics = evaluate("plain")
    moved, moved_metrics = evaluate("moved", eval_accumulation_steps=2)
    assert np.array_equal(plain, moved) and plain_metrics == moved_metrics


@pytest.mark.rule(
    lesson="04",
    section="1. What `compute_metrics` receives",
    text="Two fixes: take `predictions[0]`, as the pattern's `compute_metrics` does, or keep the extra outputs out of "
    'evaluation with `evaluate(ignore_keys=["hidden_states"])`, which also saves the memory they take.',
    covers=[
        "BERT and Llama classifiers asked for hidden states, 7 rows at eval batch 2 (uneven last batch)",
        "eval_accumulation_steps 1 and 2",
        "predictions[0] of the tuple equals the logits of ignore_keys, and ignore_keys keeps fewer bytes",
    ],
)
@pytest.mark.parametrize(("model", "accumulation"), [("bert", 1), ("llama", 2)])
def test_two_fixes_for_predictions_as_a_tuple(tmp_path: Any, model: str, accumulation: int) -> None:
    built = _bert(True) if model == "bert" else fixtures.tiny_llama(seed=0)
    built.config.output_hidden_states = True
    seen = _Seen()
    run = trainer(
        tmp_path,
        model=built,
        train_dataset=fixtures.random_ids(8),
        compute_metrics=seen,
        per_device_eval_batch_size=2,
        eval_accumulation_steps=accumulation,
    )
    evaluation = fixtures.random_ids(7, seed=2)
    full = run.evaluate(evaluation)
    lean = run.evaluate(evaluation, ignore_keys=["hidden_states"])
    (tupled, _), (plain, _) = seen.calls
    assert isinstance(tupled, tuple) and not isinstance(plain, tuple)
    assert np.allclose(tupled[0], plain) and full["eval_accuracy"] == lean["eval_accuracy"]
    assert plain.nbytes < sum(part.nbytes for part in tupled[1]) + tupled[0].nbytes


@pytest.mark.rule(
    lesson="04",
    section="2. Keep the best model, stop when the metric stalls",
    text="`load_best_model_at_end` needs a checkpoint at every evaluation, so `save_strategy` must match "
    '`eval_strategy` (or be `"best"`: a save at each new best).',
    covers=[
        "eval and save by steps, by epochs: accepted; steps against epochs, save 'no': refused by TrainingArguments",
        "save_strategy='best' with eval by steps and by epochs: accepted",
        "a real run with save_strategy='best' (eval loss each step, 4 steps): a checkpoint only at each new best, "
        "and the best one is the one loaded at the end",
    ],
)
def test_load_best_needs_a_checkpoint_at_every_evaluation(tmp_path: Any) -> None:
    import torch
    from transformers import TrainingArguments

    def accepted(eval_strategy: str, save_strategy: str) -> bool:
        try:
            TrainingArguments(
                output_dir=str(tmp_path / "args"),
                eval_strategy=eval_strategy,
                save_strategy=save_strategy,
                load_best_model_at_end=True,
                report_to="none",
            )
        except ValueError as error:
            assert "load_best_model_at_end" in str(error)
            return False
        return True

    assert accepted("steps", "steps") and accepted("epoch", "epoch")
    assert not accepted("steps", "epoch") and not accepted("epoch", "steps") and not accepted("steps", "no")
    assert accepted("steps", "best") and accepted("epoch", "best")

    run = trainer(
        tmp_path,
        eval_dataset=toy_dataset(8),
        eval_strategy="steps",
        eval_steps=1,
        save_strategy="best",
        load_best_model_at_end=True,
        max_steps=4,
        learning_rate=0.2,
    )
    run.train()
    losses = [entry["eval_loss"] for entry in run.state.log_history if "eval_loss" in entry]
    new_bests = [step + 1 for step, loss in enumerate(losses) if loss == min(losses[: step + 1])]
    saved = sorted(int(path.name.split("-")[1]) for path in tmp_path.glob("checkpoint-*"))
    assert saved == new_bests and len(saved) < len(losses), (saved, losses)  # here [1, 2, 4]
    best_step = losses.index(min(losses)) + 1
    assert run.state.best_model_checkpoint.endswith(f"checkpoint-{best_step}")
    assert torch.isclose(torch.tensor(run.evaluate()["eval_loss"]), torch.tensor(min(losses)), rtol=1e-5)
