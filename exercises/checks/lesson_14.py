"""Exercises of lesson 14 (hyperparameter search): a ``model_init`` that takes the trial, and a callback that keeps
each trial's evaluation curve; both run in a real optuna search of the Trainer."""

from __future__ import annotations

import inspect
import random
import warnings
from typing import Any

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.checks.lesson_05 import misspelled_events_note
from exercises.solutions import lesson_14 as solutions

CASES_SEED = 1414  # the check draws its cases from this seed each time it runs; none is a setting the lesson shows
LAYERS, DROPOUT = (1, 3), (0.0, 0.5)  # the search space the exercise asks for


def search_cases(seed: int = CASES_SEED) -> dict[str, Any]:
    """What one check run uses: fixed trials (layers, dropout) to build, the sampler's seed and the search's size."""
    rng = random.Random(seed)
    fixed = [(layers, round(rng.uniform(*DROPOUT), 3)) for layers in rng.sample(range(1, 4), 3)]
    return {
        "fixed": fixed,
        "sampler_seed": rng.randint(100, 10_000),
        "n_trials": rng.randint(3, 4),
        "max_steps": rng.randint(5, 7),
        "eval_steps": 2,
    }


def _quiet_search_trainer(model_init: Any, callbacks: list[Any], max_steps: int, eval_steps: int) -> Any:
    """A silent Trainer for a search on the fixture data: 16 rows in batches of 4 (4 steps an epoch)."""
    from transformers import Trainer, TrainingArguments

    from helpers.trainers import quiet

    args = TrainingArguments(
        output_dir=fixtures.scratch_dir(),
        report_to="none",
        use_cpu=True,
        disable_tqdm=True,
        per_device_train_batch_size=4,
        max_steps=max_steps,
        eval_strategy="steps",
        eval_steps=eval_steps,
        save_strategy="no",
        seed=3,
    )
    return quiet(
        Trainer(
            model_init=model_init,
            args=args,
            train_dataset=fixtures.random_ids(16, seed=4),
            eval_dataset=fixtures.random_ids(8, seed=5),
            callbacks=callbacks,
        )
    )


def _search(trainer: Any, n_trials: int, sampler_seed: int, pruner: Any = None, step: str = "") -> Any:
    """Run a real optuna search; return the study."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = optuna.storages.InMemoryStorage()
    with learner_code(step or "running a search with your answer"):
        trainer.hyperparameter_search(
            hp_space=lambda trial: {"learning_rate": trial.suggest_float("learning_rate", 1e-4, 1e-2, log=True)},
            n_trials=n_trials,
            backend="optuna",
            sampler=optuna.samplers.RandomSampler(seed=sampler_seed),
            pruner=pruner,
            storage=storage,
            study_name="check",
        )
    return optuna.load_study(study_name="check", storage=storage)


def _shape(model: Any, what: str) -> tuple[int, float]:
    """(layers, dropout) of a built classifier, read from the modules that run, not from the config: the number
    of encoder layers, and the p of its nn.Dropout modules (all but the attention probabilities' own, which
    build_classifier leaves at 0.1). A config changed after the model was built changes neither."""
    import torch
    from transformers import PreTrainedModel

    if not isinstance(model, PreTrainedModel):
        raise Wrong(f"{what} returned {type(model).__name__}; return the model that build_classifier(...) builds.")
    config = model.config
    if config.hidden_size != 32 or config.num_labels != 2:
        raise Wrong(
            f"{what} returned a model {config.hidden_size} wide with {config.num_labels} labels; build it "
            "with this lesson's build_classifier(layers, dropout)."
        )
    encoder = getattr(model.base_model, "encoder", None)
    layers = len(encoder.layer) if hasattr(encoder, "layer") else config.num_hidden_layers
    rates = {
        round(module.p, 6)
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Dropout) and not name.endswith("attention.self.dropout")
    }
    if len(rates) != 1:
        raise Wrong(
            f"{what} returned a model whose dropout layers do not agree (p = {sorted(rates)}); build it with "
            "build_classifier(layers, dropout), which sets one dropout for all of them."
        )
    dropout = rates.pop()
    if config.hidden_dropout_prob != dropout:
        raise Wrong(
            f"{what} returned a model whose config says hidden_dropout_prob={config.hidden_dropout_prob} while "
            f"its nn.Dropout modules keep p={dropout}: a model reads its config once, when it is built, so a "
            "value written into model.config afterwards changes nothing. Pass dropout to build_classifier."
        )
    return layers, dropout


def _space_of(distribution: Any) -> Any:
    """The values a distribution can give: a set for integers and choices, the interval for floats."""
    import optuna.distributions as d

    if isinstance(distribution, d.CategoricalDistribution):
        return set(distribution.choices)
    if isinstance(distribution, d.IntDistribution) and not distribution.log:
        return set(range(distribution.low, distribution.high + 1, distribution.step))
    if isinstance(distribution, d.FloatDistribution) and not distribution.log:
        return (distribution.low, distribution.high)
    return distribution


def _check_model_init(answer: Any) -> None:
    import optuna
    import torch

    from helpers.lessons.lesson_14 import TrialRecorder

    if isinstance(answer, torch.nn.Module):
        raise Wrong(
            f"my_model_init is a model ({type(answer).__name__}), not a function: a search calls "
            "model_init once per trial to build a fresh model, so give it a function of the trial "
            "that returns a new one: def my_model_init(trial): ... return build_classifier(...)."
        )
    if not callable(answer) or inspect.isclass(answer):
        raise Wrong("my_model_init should be a function of the trial: def my_model_init(trial): ...")
    with learner_code("calling my_model_init(None), as a train() outside a search does"):
        plain = answer(None)
    if _shape(plain, "my_model_init(None)") != (2, 0.1):
        raise Wrong(
            f"my_model_init(None) built {_shape(plain, 'it')} (layers, dropout); without a trial, build "
            "2 layers with dropout 0.1."
        )
    cases = search_cases()
    for layers, dropout in cases["fixed"]:
        trial = optuna.trial.FixedTrial({"num_layers": layers, "dropout": dropout})
        with learner_code(
            f"calling my_model_init on a trial that answers num_layers={layers}, dropout={dropout}",
            'Ask the trial for the parameters named "num_layers" and "dropout".',
        ):
            with warnings.catch_warnings():  # optuna warns when a fixed value lies outside the asked range
                warnings.simplefilter("ignore", UserWarning)
                built = _shape(answer(trial), "my_model_init(trial)")
        if built != (layers, dropout):
            raise Wrong(
                f"the trial answered num_layers={layers}, dropout={dropout}; your model has {built[0]} "
                f"layers and dropout {built[1]}. Build the model from what the trial suggests."
            )
    recorder = TrialRecorder()
    trainer = _quiet_search_trainer(answer, [recorder], cases["max_steps"], cases["eval_steps"])
    study = _search(trainer, cases["n_trials"], cases["sampler_seed"])
    trained = [r["layers"] for r in recorder.records if r["event"] == "on_train_begin"]
    for trial, layers in zip(study.trials, trained):
        spaces = {name: _space_of(trial.distributions.get(name)) for name in ("num_layers", "dropout")}
        if spaces != {"num_layers": set(range(LAYERS[0], LAYERS[1] + 1)), "dropout": DROPOUT}:
            raise Wrong(
                f"your search space is {spaces}; the exercise asks for num_layers from 1 to 3 (every "
                "integer) and dropout from 0.0 to 0.5 (uniform)."
            )
        if layers != trial.params["num_layers"]:
            raise Wrong(
                f"in the search, trial {trial.number} chose {trial.params['num_layers']} layers and the "
                f"Trainer trained {layers}."
            )


def _eval_losses(recorder: Any) -> list[list[float]]:
    runs: list[list[float]] = []
    for record in recorder.records:
        if record["event"] == "on_train_begin":
            runs.append([])
        elif record["event"] == "on_evaluate":
            runs[-1].append(record["eval_loss"])
    return runs


def _odd_trials_pruner() -> Any:
    """A real optuna pruner that stops every odd-numbered trial at its second evaluation."""
    import optuna

    class OddTrials(optuna.pruners.BasePruner):
        def prune(self, study: Any, trial: Any) -> bool:
            return trial.number % 2 == 1 and len(trial.intermediate_values) >= 2

    return OddTrials()


def _check_curves(answer: Any) -> None:
    from transformers import TrainerCallback

    from helpers.lessons.lesson_14 import TrialRecorder, build_classifier

    if not (inspect.isclass(answer) and issubclass(answer, TrainerCallback)):
        raise Wrong("SearchCurves should be a class that subclasses transformers.TrainerCallback.")
    with learner_code("creating SearchCurves()"):
        callback = answer()
    if not isinstance(getattr(callback, "curves", None), list):
        raise Wrong("give the callback a list attribute `curves`, set in __init__.")
    with learner_code("creating a second SearchCurves()"):
        other = answer()
    if getattr(other, "curves", None) is callback.curves:
        raise Wrong(f"two SearchCurves() share one `curves` list: {_why_shared(answer, callback.curves)}")
    cases = search_cases(CASES_SEED + 1)

    def check_model_init(trial: Any = None) -> Any:
        return build_classifier(1 if trial is None else trial.suggest_int("num_layers", 1, 2), 0.0)

    recorder = TrialRecorder()
    max_steps = cases["max_steps"] + 2  # longer than an epoch of 4 steps: curves do not end with an epoch
    trainer = _quiet_search_trainer(check_model_init, [callback, recorder], max_steps, cases["eval_steps"])
    study = _search(
        trainer, cases["n_trials"], cases["sampler_seed"], _odd_trials_pruner(), "running a search with SearchCurves"
    )
    expected = _eval_losses(recorder)
    pruned = sum(trial.state.name == "PRUNED" for trial in study.trials)
    if callback.curves != expected:
        raise Wrong(
            f"the search ran {len(expected)} trials ({pruned} pruned) with these evaluation losses: "
            f"{[[round(x, 4) for x in curve] for curve in expected]}; your curves: {_rounded(callback.curves)}. "
            "Keep one list per trial, started when the trial's training begins."
        )
    fixtures.train(
        _quiet_search_trainer(check_model_init, [callback], max_steps, cases["eval_steps"]),
        "training with SearchCurves outside a search",
    )
    if callback.curves != expected:
        raise Wrong(
            f"a train() outside any search changed your curves to {_rounded(callback.curves)}; outside a "
            "search add nothing (TrainerState says whether a search is running)."
        )


def _why_shared(callback_class: type, curves: list[Any]) -> str:
    """Why two instances of ``callback_class`` hold the same ``curves`` list: a mutable default argument of
    ``__init__``, a class attribute, or neither that the check can see."""
    try:
        defaults = [p.default for p in inspect.signature(callback_class.__init__).parameters.values()]
    except (TypeError, ValueError):
        defaults = []
    if any(default is curves for default in defaults):
        return (
            "it is the default value of an argument of __init__ (a mutable default argument): Python builds a "
            "default once, when the def runs, so every instance made without that argument gets the same list. "
            "Default to None and set self.curves = [] (or a copy of the list given) in __init__."
        )
    if any("curves" in vars(owner) for owner in callback_class.__mro__):
        return (
            "it is a class attribute, so every instance (and every run of the cell) adds to the same list. "
            "Set self.curves = [] in __init__."
        )
    return "each instance needs a list of its own: set self.curves = [] in __init__."


def _rounded(curves: Any) -> Any:
    try:
        return [[round(float(x), 4) for x in curve] for curve in curves]
    except (TypeError, ValueError):
        return curves


q1 = Exercise(
    answer_name="my_model_init",
    checker=_check_model_init,
    hint_text="model_init receives the optuna trial (or None outside a search). Ask the trial with suggest_int and "
    "suggest_float, under the names the exercise gives, and hand the answers to build_classifier.",
    solution_obj=solutions.my_model_init,
)

q2 = Exercise(
    wrong_note=misspelled_events_note,
    answer_name="SearchCurves",
    checker=_check_curves,
    hint_text="a trial is one train(): start a new curve when a trial's training begins, add the evaluation "
    "loss the evaluation event hands you, and only while a search runs (the state says whether one does).",
    solution_obj=solutions.SearchCurves,
)

bind_exercises(globals())
