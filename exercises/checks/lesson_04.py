"""Exercises of lesson 04 (compute_metrics). Each check runs the learner's code inside a real Trainer."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from exercises.checks import fixtures
from exercises.checks.core import Exercise, LearnerError, Wrong, bind_exercises, learner_code
from exercises.solutions import lesson_04 as solutions
from helpers.trainers import quiet


def _args(**settings: Any) -> Any:
    """The library's defaults, except where the check says otherwise."""
    from transformers import TrainingArguments

    base = {"output_dir": fixtures.scratch_dir(), "report_to": "none", "use_cpu": True, "disable_tqdm": True}
    with learner_code("building TrainingArguments from your keywords"):
        return TrainingArguments(**{**base, "per_device_eval_batch_size": 16, **settings})


def _reference(eval_prediction: Any) -> dict[str, float]:
    from helpers.metrics import make_compute_metrics

    metrics = make_compute_metrics(average="macro", probability_metrics=False)(eval_prediction)
    return {"accuracy": metrics["accuracy"], "f1_macro": metrics["f1"]}


def _compare(mine: dict[str, Any], expected: dict[str, float], where: str) -> None:
    if not isinstance(mine, dict):
        raise Wrong(f"{where}: compute_metrics must return a dict, got {type(mine).__name__}.")
    missing = [key for key in expected if key not in mine]
    if missing:
        raise Wrong(
            f"{where}: the dict has no {missing}; return keys 'accuracy' and 'f1_macro' (the Trainer adds eval_)."
        )
    for key, value in expected.items():
        if not np.isclose(float(mine[key]), value, atol=1e-6):
            advice = (
                "use f1_score(..., average='macro')"
                if key == "f1_macro"
                else "compare np.argmax(logits, -1) with label_ids"
            )
            raise Wrong(f"{where}: {key} is {float(mine[key]):.4f} but should be {value:.4f}; {advice}.")


def _check_compute_metrics(answer: Any) -> None:
    from transformers import EvalPrediction, Trainer

    if not callable(answer):
        raise Wrong("my_compute_metrics must be a function that takes an EvalPrediction.")
    rng = np.random.default_rng(4)  # varied synthetic cases first: a constant answer cannot pass them
    for rows, skew in ((50, 0.0), (37, 3.0)):  # the second predicts class 1 almost always: macro != binary F1
        logits, labels = rng.normal(size=(rows, 2)).astype(np.float32), rng.integers(0, 2, size=rows)
        logits[:, 1] += skew
        synthetic = EvalPrediction(predictions=(logits, np.zeros((rows, 3, 4), np.float32)), label_ids=labels)
        with learner_code(f"calling your function on {rows} predictions", _TUPLE_ADVICE):
            mine = answer(synthetic)
        _compare(mine, _reference(synthetic), f"on {rows} predictions given as (logits, hidden_states)")
    seen: list[Any] = []

    def recorded(eval_prediction: Any) -> dict[str, float]:
        seen.append(eval_prediction)
        with learner_code("calling your function inside trainer.evaluate()", _TUPLE_ADVICE):
            return answer(eval_prediction)

    model = fixtures.tiny_model(output_hidden_states=True)  # predictions arrive as (logits, hidden_states)
    trainer = quiet(
        Trainer(model=model, args=_args(), eval_dataset=fixtures.random_ids(48, seed=3), compute_metrics=recorded)
    )
    metrics = trainer.evaluate()
    expected = _reference(seen[-1])
    _compare({k.removeprefix("eval_"): v for k, v in metrics.items()}, expected, "inside trainer.evaluate()")


_TUPLE_ADVICE = "eval_prediction.predictions may be a tuple (logits, hidden_states): take its first item then."


def _toy_model(seed: int = 0) -> Any:
    """Logits = a linear map of 8 random features: cheap, and its predictions vary from row to row."""
    import torch

    class ToyClassifier(torch.nn.Module):
        main_input_name = "features"

        def __init__(self) -> None:
            super().__init__()
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                self.linear = torch.nn.Linear(8, 2)

        def forward(self, features: Any, labels: Any = None) -> dict[str, Any]:
            logits = self.linear(features)
            loss = torch.nn.functional.cross_entropy(logits, labels) if labels is not None else None
            return {"loss": loss, "logits": logits}

    return ToyClassifier()


def _toy_data(count: int, seed: int) -> Any:
    import datasets

    rng = np.random.default_rng(seed)
    features = rng.normal(size=(count, 8)).astype(np.float32)
    labels = (features[:, 0] + 0.8 * rng.normal(size=count) > 0).astype(np.int64)
    return datasets.Dataset.from_dict({"features": features, "label": labels})


def _check_streaming(answer: Any) -> None:
    from transformers import Trainer

    if not inspect.isclass(answer):
        raise Wrong("MyStreamingAccuracy must be a class (the check creates one instance and evaluates twice).")
    with learner_code("creating MyStreamingAccuracy()"):
        metric = answer()
    if "compute_result" not in inspect.signature(metric).parameters:
        raise Wrong(
            "__call__ must take (self, eval_prediction, compute_result): batch_eval_metrics passes compute_result."
        )
    import torch

    model, datasets_used = _toy_model(), [_toy_data(100, seed=1), _toy_data(60, seed=7)]
    trainer = quiet(Trainer(model=model, args=_args(batch_eval_metrics=True), compute_metrics=metric))
    with learner_code("evaluating twice with your metric"):
        results = [trainer.evaluate(eval_dataset=data) for data in datasets_used]  # two different evaluations
    for attempt, (metrics, data) in enumerate(zip(results, datasets_used), start=1):
        with torch.no_grad():
            logits = model(torch.tensor(np.array(data["features"]), dtype=torch.float32))["logits"]
        expected = float((logits.argmax(-1).numpy() == np.array(data["label"])).mean())
        if "eval_accuracy" not in metrics:
            raise Wrong(
                f"evaluation {attempt} returned no 'accuracy'; return {{'accuracy': ...}} when compute_result is True."
            )
        if not np.isclose(metrics["eval_accuracy"], expected, atol=1e-6):
            why = (
                "the first evaluation is wrong: count over every batch, not only the last one"
                if attempt == 1
                else "the second evaluation is wrong: reset your counts after returning the result"
            )
            raise Wrong(
                f"evaluation {attempt}: accuracy {metrics['eval_accuracy']:.4f}, expected {expected:.4f}; {why}."
            )


def _check_best_model_args(answer: Any) -> None:
    from transformers import Trainer

    if not isinstance(answer, dict):
        raise Wrong("my_best_model_args must be a dict of TrainingArguments keywords.")
    if not answer.get("load_best_model_at_end"):
        raise Wrong("without load_best_model_at_end=True the model after training is the last one, not the best.")
    settings = {"num_train_epochs": 4, "learning_rate": 0.05, "per_device_train_batch_size": 16, **answer}
    trainer = Trainer(
        model=_toy_model(seed=3),
        args=_args(**settings),
        train_dataset=_toy_data(96, seed=2),
        eval_dataset=_toy_data(64, seed=5),
    )
    quiet(trainer)
    fixtures.train(trainer, "training with your keywords")
    losses = [entry["eval_loss"] for entry in trainer.state.log_history if "eval_loss" in entry]
    final_loss = trainer.evaluate()["eval_loss"]
    if len(losses) < 2:
        raise Wrong("the run evaluated fewer than twice; evaluate every epoch (eval_strategy='epoch').")
    if not np.isclose(trainer.state.best_metric, min(losses)):
        raise Wrong(
            f"the best checkpoint has eval_loss {trainer.state.best_metric:.4f} but the lowest was "
            f"{min(losses):.4f}; for a loss, lower is better (greater_is_better=False)."
        )
    if not np.isclose(final_loss, min(losses), atol=1e-5):
        raise Wrong("the model at the end is not the best checkpoint; check load_best_model_at_end and save_strategy.")


def _two_sets(seed: int) -> dict[str, Any]:
    """Two evaluation sets of the same rows: ``clean`` with the true labels, ``noisy`` with all of them flipped, so
    the epoch with the lowest clean loss is never the one with the lowest noisy loss."""
    clean = _toy_data(64, seed=seed)
    noisy = clean.map(lambda row: {"label": 1 - row["label"]})
    return {"noisy": noisy, "clean": clean}


_TWO_SET_ADVICE = (
    "with a dict eval_dataset every metric is named eval_<set>_<metric>: metric_for_best_model must name one "
    "set's metric, such as 'clean_loss'."
)


def _check_two_set_args(answer: Any) -> None:
    from transformers import Trainer

    if not isinstance(answer, dict):
        raise Wrong("my_two_set_args must be a dict of TrainingArguments keywords.")
    if not answer.get("load_best_model_at_end"):
        raise Wrong("without load_best_model_at_end=True the model after training is the last one, not the best.")
    sets = _two_sets(seed=11)
    settings = {"num_train_epochs": 6, "learning_rate": 0.3, "per_device_train_batch_size": 8, **answer}
    trainer = quiet(
        Trainer(
            model=_toy_model(seed=5), args=_args(**settings), train_dataset=_toy_data(48, seed=9), eval_dataset=sets
        )
    )
    try:
        with learner_code("training with your keywords on eval_dataset={'noisy': ..., 'clean': ...}"):
            trainer.train()
    except LearnerError as error:
        if isinstance(error.__cause__, KeyError) and "metric_for_best_model" in str(error.__cause__):
            raise Wrong(
                f"the Trainer found no metric named by your metric_for_best_model: {_TWO_SET_ADVICE}"
            ) from error
        raise
    history = trainer.state.log_history
    clean = {entry["step"]: entry["eval_clean_loss"] for entry in history if "eval_clean_loss" in entry}
    if len(clean) < 2:
        raise Wrong("the run evaluated fewer than twice; evaluate every epoch (eval_strategy='epoch').")
    final = trainer.evaluate(eval_dataset=sets["clean"], metric_key_prefix="final")["final_loss"]
    best_step = min(clean, key=clean.get)
    kept = int(str(trainer.state.best_model_checkpoint or "checkpoint-0").rsplit("-", 1)[-1])
    metric, higher = trainer.args.metric_for_best_model, trainer.args.greater_is_better
    if kept in clean and not np.isclose(trainer.state.best_metric, clean[kept]):
        raise Wrong(
            f"your metric_for_best_model={metric!r} (greater_is_better={higher}) kept the checkpoint of step {kept} "
            f"for its value {trainer.state.best_metric:.4f}, which is not its clean loss ({clean[kept]:.4f}): the "
            "checkpoint must be chosen by the clean set's loss, 'clean_loss'"
            + (" (that metric is the noisy set's)." if "noisy" in str(metric) else ".")
        )
    if kept != best_step:
        said = (
            f"your metric_for_best_model={metric!r} (greater_is_better={higher}) kept the checkpoint of step {kept}, "
            f"whose clean loss is {clean.get(kept, float('nan')):.4f}; the lowest clean loss, {clean[best_step]:.4f}, "
            f"was at step {best_step}."
        )
        if "noisy" in str(metric):
            raise Wrong(f"{said} That metric is the noisy set's: name the clean set's loss, 'clean_loss'.")
        raise Wrong(
            f"{said} For a loss, lower is better (greater_is_better=False, the default for a name ending in 'loss')."
        )
    if not np.isclose(final, clean[best_step], atol=1e-5):
        raise Wrong(
            f"the model at the end has clean loss {final:.4f}, not the best checkpoint's {clean[best_step]:.4f}: check "
            "load_best_model_at_end and save_strategy."
        )


q1 = Exercise(
    answer_name="my_compute_metrics",
    checker=_check_compute_metrics,
    hint_text=(
        "The predictions can come as a tuple whose first item holds the logits; the predicted class is the index of "
        "the largest logit. scikit-learn computes both metrics; the macro F1 is the mean of the two classes' F1."
    ),
    solution_obj=solutions.my_compute_metrics,
)

q2 = Exercise(
    answer_name="MyStreamingAccuracy",
    checker=_check_streaming,
    hint_text=(
        "Batch by batch, add to running counts (the inputs are torch tensors); only when compute_result is true turn "
        "them into the accuracy, and start the counts again for the next evaluation."
    ),
    solution_obj=solutions.MyStreamingAccuracy,
)

q3 = Exercise(
    answer_name="my_best_model_args",
    checker=_check_best_model_args,
    hint_text=(
        "Evaluate and save on the same schedule (every epoch), load the best model at the end, and choose it by the "
        "evaluation loss, for which lower is better."
    ),
    solution_obj=solutions.MY_BEST_MODEL_ARGS,
)

q4 = Exercise(
    answer_name="my_two_set_args",
    checker=_check_two_set_args,
    hint_text=(
        "With a dict of evaluation sets every metric carries its set's name (eval_<set>_<metric>): the metric for the"
        " best model must name the clean set's loss, and lower is better for a loss; the rest as in exercise 3."
    ),
    solution_obj=solutions.MY_TWO_SET_ARGS,
)

bind_exercises(globals())
