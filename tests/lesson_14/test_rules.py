"""Lesson 14's rules (hyperparameter search), tried beyond the lesson's run: TinyModel (a forward without
**kwargs), accumulation 2 with an uneven last micro-batch, evaluation by epochs and by steps, 3 trials."""

from __future__ import annotations

import os
from typing import Any

import optuna
import pytest
from rule_training import trainer
from tiny_training import TinyModel, toy_dataset
from transformers import TrainerCallback

optuna.logging.set_verbosity(optuna.logging.WARNING)
RATES = [1e-3, 3e-3, 1e-2]


def _space(trial: Any) -> dict[str, Any]:
    return {"learning_rate": trial.suggest_categorical("learning_rate", RATES)}


class _Seen(TrainerCallback):
    def __init__(self) -> None:
        self.ids: set[int] = set()
        self.rates: list[float] = []

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.ids.add(id(self))
        self.rates.append(args.learning_rate)


def _search(
    tmp_path: Any, strategy: dict[str, Any], seen: _Seen | None = None, seed: int = 0
) -> tuple[Any, list[tuple[int, float]], Any]:
    recorded: list[tuple[int, float]] = []
    run = trainer(
        tmp_path,
        [seen] if seen else None,
        model_init=lambda trial=None: TinyModel(),
        rows=13,
        gradient_accumulation_steps=2,
        num_train_epochs=2,
        eval_dataset=toy_dataset(6),
        **strategy,
    )

    def objective(metrics: dict[str, float]) -> float:
        value = run.args.learning_rate * 1000 - metrics["epoch"]  # falls with every evaluation of a trial
        recorded.append((len(recorded), value))
        return value

    best = run.hyperparameter_search(
        hp_space=_space,
        compute_objective=objective,
        n_trials=3,
        direction="maximize",
        backend="optuna",
        sampler=optuna.samplers.TPESampler(seed=seed),
    )
    return best, recorded, run


STRATEGIES = [{"eval_strategy": "epoch", "save_strategy": "epoch"}, {"eval_strategy": "steps", "eval_steps": 2}]


@pytest.mark.rule(
    lesson="14",
    section="Recap",
    text="A trial's value is its **last** evaluation's objective.",
    covers=[
        "evaluation by epochs and by steps",
        "an objective that falls at every evaluation",
        "accumulation 2",
        "uneven last micro-batch",
        "3 trials",
    ],
)
@pytest.mark.rule(
    lesson="14",
    section="1. Did the search find something?",
    text="A trial's value is the objective of its **last** evaluation, not of its best",
    covers=[
        "evaluation by epochs and by steps",
        "an objective that falls at every evaluation (the best is the first)",
        "accumulation 2",
        "uneven last micro-batch",
        "3 trials",
    ],
)
@pytest.mark.rule(
    lesson="14",
    section="Recap",
    text="they are the same objects in every trial, and `trainer.args` ends with the last trial's values.",
    covers=["3 trials", "evaluation by epochs and by steps"],
)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_last_evaluation_counts_and_callbacks_are_shared(tmp_path: Any, strategy: dict[str, Any]) -> None:
    seen = _Seen()
    best, recorded, run = _search(tmp_path, strategy, seen)
    per_trial = len(recorded) // 3
    lasts = [recorded[(index + 1) * per_trial - 1][1] for index in range(3)]
    firsts = [recorded[index * per_trial][1] for index in range(3)]
    assert per_trial >= 2 and best.objective == max(lasts) and best.objective < max(firsts)
    assert len(seen.ids) == 1 and len(seen.rates) == 3
    assert run.args.learning_rate == seen.rates[-1]


@pytest.mark.rule(
    lesson="14",
    section="5. Pruning",
    text="with `seed=` in the arguments and a seeded sampler, a search repeats exactly on the CPU.",
    covers=["TinyModel", "accumulation 2", "uneven last micro-batch", "TPE sampler", "a second search"],
)
def test_a_seeded_search_repeats(tmp_path: Any) -> None:
    first, recorded_first, _ = _search(tmp_path / "a", STRATEGIES[0])
    second, recorded_second, _ = _search(tmp_path / "b", STRATEGIES[0])
    assert first.hyperparameters == second.hyperparameters and recorded_first == recorded_second


@pytest.mark.rule(
    lesson="14",
    section="Recap",
    text="Each trial saves under `run-<number>/`",
    covers=["3 trials", "saving by epochs", "accumulation 2"],
)
def test_each_trial_saves_under_its_run_folder(tmp_path: Any) -> None:
    _search(tmp_path, STRATEGIES[0])
    runs = sorted(name for name in os.listdir(tmp_path) if name.startswith("run-"))
    assert runs == ["run-0", "run-1", "run-2"]
    assert all(any(n.startswith("checkpoint-") for n in os.listdir(tmp_path / name)) for name in runs)


@pytest.mark.rule(
    lesson="14",
    section="Recap",
    text="`hyperparameter_search` needs `model_init` (a fresh model per trial)",
    covers=["a Trainer built with model=", "TinyModel"],
)
def test_search_needs_model_init(tmp_path: Any) -> None:
    run = trainer(tmp_path, rows=8)
    with pytest.raises(RuntimeError, match="model_init"):
        run.hyperparameter_search(hp_space=_space, n_trials=1, backend="optuna")


class _State(TrainerCallback):
    def __init__(self) -> None:
        self.seen: list[tuple[bool, Any, Any]] = []

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.seen.append((state.is_hyper_param_search, state.trial_params, state.trial_name))


@pytest.mark.rule(
    lesson="14",
    section="Recap",
    text="Callbacks see `is_hyper_param_search` and `trial_params` (`trial_name` with `hp_name`)",
    covers=[
        "with and without hp_name",
        "every step, not only the first",
        "a plain train() (no search)",
        "accumulation 2",
    ],
)
@pytest.mark.parametrize("named", [True, False])
def test_callbacks_see_the_trial(tmp_path: Any, named: bool) -> None:
    probe = _State()
    run = trainer(
        tmp_path,
        [probe],
        model_init=lambda trial=None: TinyModel(),
        rows=13,
        gradient_accumulation_steps=2,
        eval_dataset=toy_dataset(4),
        eval_strategy="epoch",
    )
    extra = {"hp_name": lambda trial: f"lr-{trial.number}"} if named else {}
    run.hyperparameter_search(
        hp_space=_space,
        n_trials=2,
        backend="optuna",
        compute_objective=lambda m: 0.0,
        sampler=optuna.samplers.TPESampler(seed=0),
        **extra,
    )
    assert probe.seen and all(searching for searching, _, _ in probe.seen)
    assert all(set(params) == {"learning_rate"} for _, params, _ in probe.seen)
    names = {name for _, _, name in probe.seen}
    assert names == ({"lr-0", "lr-1"} if named else {None})
    probe.seen.clear()
    trainer(tmp_path / "plain", [probe], rows=8).train()
    assert probe.seen and not any(searching for searching, _, _ in probe.seen)


@pytest.mark.rule(
    lesson="14",
    section="Recap",
    text="`hp_space(trial)` returns `TrainingArguments` values; `model_init(trial)` may choose the architecture.",
    covers=[
        "a model width chosen in model_init(trial)",
        "the learning rate in hp_space",
        "3 trials",
        "accumulation 2",
        "the width lands in best.hyperparameters",
    ],
)
def test_model_init_may_choose_the_architecture(tmp_path: Any) -> None:
    from torch import nn

    built: list[int] = []

    class Wide(nn.Module):
        def __init__(self, width: int) -> None:
            super().__init__()
            self.body, self.head = nn.Linear(4, width), nn.Linear(width, 2)

        def forward(self, x: Any, labels: Any = None) -> dict[str, Any]:
            logits = self.head(self.body(x).relu())
            loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
            return {"logits": logits, **({"loss": loss} if loss is not None else {})}

    def model_init(trial: Any = None) -> nn.Module:
        width = trial.suggest_categorical("width", [3, 5, 7]) if trial is not None else 3
        built.append(width)
        return Wide(width)

    run = trainer(
        tmp_path,
        model_init=model_init,
        rows=13,
        gradient_accumulation_steps=2,
        eval_dataset=toy_dataset(4),
        eval_strategy="epoch",
    )
    best = run.hyperparameter_search(
        hp_space=_space, n_trials=3, backend="optuna", direction="minimize", sampler=optuna.samplers.TPESampler(seed=0)
    )
    assert set(best.hyperparameters) == {"learning_rate", "width"}
    assert best.hyperparameters["width"] in built[1:] and len(built) == 4  # one at construction, one per trial


class _Evaluations(TrainerCallback):
    """Counts the evaluations of each trial (a new trial starts at each ``on_train_begin``)."""

    def __init__(self) -> None:
        self.per_trial: list[int] = []

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.per_trial.append(0)

    def on_evaluate(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.per_trial[-1] += 1


def _worsening_search(tmp_path: Any, trials: int, accumulation: int, **study: Any) -> list[int]:
    """A search whose every trial scores worse than the ones before it at every evaluation (2 epochs, evaluated
    each epoch); the evaluations each trial got. ``study`` goes to ``optuna.create_study`` (through the Trainer)."""
    counted = _Evaluations()
    run = trainer(
        tmp_path,
        [counted],
        model_init=lambda trial=None: TinyModel(),
        rows=13,
        gradient_accumulation_steps=accumulation,
        num_train_epochs=2,
        eval_strategy="epoch",
        eval_dataset=toy_dataset(6),
    )
    run.hyperparameter_search(
        hp_space=_space,
        compute_objective=lambda metrics: -float(len(counted.per_trial)),
        n_trials=trials,
        direction="maximize",
        backend="optuna",
        sampler=optuna.samplers.TPESampler(seed=0),
        **study,
    )
    return counted.per_trial


@pytest.mark.rule(
    lesson="14",
    section="Recap",
    text="optuna's default `MedianPruner` stops trials unless you pass `NopPruner`",
    covers=[
        "7 trials, each worse than the median of the earlier ones: with no pruner given, trials 6 and 7 stop after "
        "their first evaluation (MedianPruner waits 5 trials); with `pruner=NopPruner()` none stops",
        "accumulation 1 and 2 (uneven last micro-batch)",
    ],
)
@pytest.mark.rule(
    lesson="14",
    section="Recap",
    text="every other keyword goes to `optuna.create_study` (sampler, pruner, storage).",
    covers=["pruner: `NopPruner()` through `hyperparameter_search` changes which trials stop", "a seeded TPE sampler"],
)
@pytest.mark.parametrize("accumulation", [1, 2])
def test_the_default_pruner_stops_trials_unless_nop(tmp_path: Any, accumulation: int) -> None:
    assert _worsening_search(tmp_path / "default", 7, accumulation) == [2, 2, 2, 2, 2, 1, 1]
    nop = _worsening_search(tmp_path / "nop", 7, accumulation, pruner=optuna.pruners.NopPruner())
    assert nop == [2] * 7


@pytest.mark.rule(
    lesson="14",
    section="Recap",
    text="Compare the best-to-worst gap with the spread of one setting over seeds before trusting the best trial; "
    "then train the final model with `best.hyperparameters`.",
    covers=[
        "a search over the seed alone (one learning rate): its best-to-worst gap is above 0, a 'best' made of noise",
        "a search over 3 learning rates 10x apart (TinyModel, toy data): its gap is computed beside the seed spread "
        "(here below it, so the rule's comparison is what tells the learner not to trust it)",
        "retraining with `best.hyperparameters` gives the best trial's objective again, exactly",
        "accumulation 2, uneven last micro-batch",
    ],
)
@pytest.mark.rule(
    lesson="14",
    section="1. Did the search find something?",
    text='When all trials score within the seed spread, the "best" trial is chosen by noise',
    covers=["a search over the seed alone: a best trial picked, by a gap of noise only"],
)
def test_compare_the_gap_with_the_seed_spread(tmp_path: Any) -> None:
    losses: list[float] = []

    def search(folder: str, space: Any, trials: int) -> tuple[Any, Any]:
        losses.clear()
        run = trainer(
            tmp_path / folder,
            model_init=lambda trial=None: TinyModel(),
            rows=13,
            gradient_accumulation_steps=2,
            num_train_epochs=2,
            eval_strategy="epoch",
            eval_dataset=toy_dataset(6),
            learning_rate=3e-3,
        )

        def objective(metrics: dict[str, float]) -> float:
            if metrics["epoch"] >= 2:
                losses.append(metrics["eval_loss"])
            return metrics["eval_loss"]

        best = run.hyperparameter_search(
            hp_space=space,
            compute_objective=objective,
            n_trials=trials,
            direction="minimize",
            backend="optuna",
            sampler=optuna.samplers.GridSampler(grids[folder]),
            pruner=optuna.pruners.NopPruner(),
        )
        return best, run

    grids = {"seeds": {"seed": [0, 1, 2, 3]}, "rates": {"learning_rate": [1e-3, 1e-2, 1e-1]}}
    seeded, _ = search("seeds", lambda trial: {"seed": trial.suggest_categorical("seed", grids["seeds"]["seed"])}, 4)
    seed_spread = max(losses) - min(losses)
    assert seed_spread > 0 and seeded.objective == min(losses)  # one setting, four seeds: a "best" trial anyway
    rates = grids["rates"]["learning_rate"]
    best, run = search("rates", lambda trial: {"learning_rate": trial.suggest_categorical("learning_rate", rates)}, 3)
    assert len(losses) == 3 and 0 < max(losses) - min(losses) < seed_spread
    for key, value in best.hyperparameters.items():
        setattr(run.args, key, value)
    run.model = run.call_model_init()
    run.train()
    assert run.evaluate()["eval_loss"] == pytest.approx(best.objective, rel=1e-6)


class _Counts(_Seen):
    """Counts optimizer steps; with ``reset``, from 0 again in on_train_begin; the count at each train end."""

    def __init__(self, reset: bool) -> None:
        super().__init__()
        self.reset, self.steps, self.at_end = reset, 0, []

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        super().on_train_begin(args, state, control, **kwargs)
        if self.reset:
            self.steps = 0

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.steps += 1

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.at_end.append(self.steps)


@pytest.mark.rule(
    lesson="14",
    section="3. What a callback sees",
    text="The callbacks are **not** rebuilt: the same objects serve every trial, so a callback that keeps its own "
    "counters must reset them in `on_train_begin` (exercise 2).",
    covers=[
        "3 trials, accumulation 2, uneven last micro-batch, evaluation by epochs",
        "a step counter reset in on_train_begin counts each trial's 8 updates; one that is not counts 8, 16, 24",
    ],
)
def test_counters_reset_in_on_train_begin_count_each_trial(tmp_path: Any) -> None:
    fresh, kept = _Counts(reset=True), _Counts(reset=False)
    _search(tmp_path / "reset", STRATEGIES[0], fresh)
    _search(tmp_path / "kept", STRATEGIES[0], kept)
    per_trial = fresh.at_end[0]
    assert len(fresh.ids) == 1 and fresh.at_end == [per_trial] * 3
    assert kept.at_end == [per_trial, 2 * per_trial, 3 * per_trial]


@pytest.mark.rule(
    lesson="14",
    section="4. Where each trial's checkpoints go",
    text="A trial saves under `output_dir/run-<trial number>/` (or `output_dir/<hp_name(trial)>/`, if `hp_name` "
    "gives each trial its own name), so trials never overwrite each other.",
    covers=[
        "3 trials saving by epoch, 2 epochs, accumulation 2 (uneven last micro-batch)",
        "hp_name giving one name per trial: a folder each, 2 checkpoints in each",
        "hp_name giving the same name to every trial: one folder, 2 checkpoints left of 6 (each trial overwrote)",
    ],
)
def test_hp_name_names_each_trials_folder(tmp_path: Any) -> None:
    def search(folder: str, hp_name: Any) -> None:
        run = trainer(
            tmp_path / folder,
            model_init=lambda trial=None: TinyModel(),
            rows=13,
            gradient_accumulation_steps=2,
            num_train_epochs=2,
            eval_strategy="epoch",
            save_strategy="epoch",
            eval_dataset=toy_dataset(6),
        )
        run.hyperparameter_search(
            hp_space=_space,
            n_trials=3,
            direction="minimize",
            backend="optuna",
            hp_name=hp_name,
            sampler=optuna.samplers.TPESampler(seed=0),
        )

    search("named", lambda trial: f"trial-{trial.number}")
    folders = sorted(os.listdir(tmp_path / "named"))
    assert folders == ["trial-0", "trial-1", "trial-2"]
    assert all(len(os.listdir(tmp_path / "named" / name)) == 2 for name in folders)
    search("same", lambda trial: "one")
    assert os.listdir(tmp_path / "same") == ["one"] and len(os.listdir(tmp_path / "same" / "one")) == 2


@pytest.mark.rule(
    lesson="14",
    section="1. Did the search find something?",
    text='A search always returns a "best" trial, even when every trial scores the same.',
    covers=["3 trials whose objective is the same constant", "minimize and maximize", "accumulation 2"],
)
@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_a_search_returns_a_best_trial_when_all_score_the_same(tmp_path: Any, direction: str) -> None:
    run = trainer(
        tmp_path,
        model_init=lambda trial=None: TinyModel(),
        rows=13,
        gradient_accumulation_steps=2,
        eval_strategy="epoch",
        eval_dataset=toy_dataset(6),
    )
    best = run.hyperparameter_search(
        hp_space=_space,
        compute_objective=lambda metrics: 0.5,
        n_trials=3,
        direction=direction,
        backend="optuna",
        sampler=optuna.samplers.TPESampler(seed=0),
    )
    assert best.objective == 0.5 and best.hyperparameters["learning_rate"] in RATES
