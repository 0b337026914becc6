"""Lesson 14's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

import torch
from exercise_cases import answer_tests
from transformers import TrainerCallback

from helpers.lessons.lesson_14 import build_classifier


def model_init_categorical(trial):
    if not trial:
        return build_classifier(layers=2, dropout=0.1)
    layers = trial.suggest_categorical("num_layers", [1, 2, 3])
    dropout = trial.suggest_float("dropout", low=0.0, high=0.5)
    return build_classifier(layers, dropout)


def model_init_keywords(trial=None):
    layers, dropout = 2, 0.1
    if trial is not None:
        dropout = trial.suggest_float("dropout", 0.0, 0.5)
        layers = trial.suggest_int(name="num_layers", low=1, high=3)
    return build_classifier(layers=layers, dropout=dropout)


def model_init_ignores_trial(trial):
    return build_classifier(2, 0.1)


def model_init_no_none(trial):
    return build_classifier(trial.suggest_int("num_layers", 1, 3), trial.suggest_float("dropout", 0.0, 0.5))


def model_init_other_names(trial):
    if trial is None:
        return build_classifier(2, 0.1)
    return build_classifier(trial.suggest_int("layers", 1, 3), trial.suggest_float("dropout", 0.0, 0.5))


def model_init_narrow(trial):
    if trial is None:
        return build_classifier(2, 0.1)
    return build_classifier(trial.suggest_int("num_layers", 1, 2), trial.suggest_float("dropout", 0.0, 0.5))


class CurvesFromLogs(TrainerCallback):
    """Reads the evaluation loss from the log instead of on_evaluate: right too."""

    def __init__(self):
        self.curves = []
        self._searching = False

    def on_train_begin(self, args, state, control, **kwargs):
        self._searching = state.is_hyper_param_search
        if self._searching:
            self.curves.append([])

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self._searching and "eval_loss" in logs:
            self.curves[-1] += [logs["eval_loss"]]


class CurvesByTrialParams(TrainerCallback):
    """Starts a new curve whenever the trial's parameters change (each trial draws new ones)."""

    def __init__(self):
        super().__init__()
        self.curves = []
        self._params = object()

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if not state.is_hyper_param_search:
            return
        if state.trial_params is not self._params:
            self._params = state.trial_params
            self.curves.append([])
        self.curves[-1].append(metrics["eval_loss"])


class CurvesFlat(TrainerCallback):
    def __init__(self):
        self.curves = []

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if state.is_hyper_param_search:
            self.curves.append(metrics["eval_loss"])


class CurvesEverywhere(TrainerCallback):
    def __init__(self):
        self.curves = []

    def on_train_begin(self, args, state, control, **kwargs):
        self.curves.append([])

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.curves[-1].append(metrics["eval_loss"])


class CurvesPerEpoch(TrainerCallback):
    def __init__(self):
        self.curves = []

    def on_epoch_begin(self, args, state, control, **kwargs):
        if state.is_hyper_param_search:
            self.curves.append([])

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if state.is_hyper_param_search:
            self.curves[-1].append(metrics["eval_loss"])


def model_init_config_after(trial):
    """Writes the trial's dropout into the config after building: the nn.Dropout modules keep 0.1."""
    model = build_classifier(2 if trial is None else trial.suggest_int("num_layers", 1, 3), 0.1)
    if trial is not None:
        model.config.hidden_dropout_prob = trial.suggest_float("dropout", 0.0, 0.5)
    return model


def model_init_sets_modules(trial):
    """Builds at 0.1, then sets p on every hidden nn.Dropout (and the config to match): right too."""
    if trial is None:
        return build_classifier(2, 0.1)
    model = build_classifier(trial.suggest_int("num_layers", 1, 3), 0.1)
    rate = trial.suggest_float("dropout", 0.0, 0.5)
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Dropout) and "attention.self" not in name:
            module.p = rate
    model.config.hidden_dropout_prob = rate
    return model


model_not_function = build_classifier(2, 0.1)  # a model where a function of the trial belongs


class CurvesSharedList(TrainerCallback):
    """Right events, but the list is a class attribute: every instance shares it."""

    curves = []

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_hyper_param_search:
            self.curves.append([])

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if state.is_hyper_param_search:
            self.curves[-1].append(metrics["eval_loss"])


class CurvesDefaultList(TrainerCallback):
    """Right events, but the list is a mutable default argument: every instance made without it shares it."""

    def __init__(self, curves=[]):  # noqa: B006 - the mistake under test
        self.curves = curves

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_hyper_param_search:
            self.curves.append([])

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if state.is_hyper_param_search:
            self.curves[-1].append(metrics["eval_loss"])


CORRECT = {
    "q1": [model_init_categorical, model_init_keywords, model_init_sets_modules],
    "q2": [CurvesFromLogs, CurvesByTrialParams],
}

MISTAKES = {
    "q1": [
        (model_init_ignores_trial, "Build the model from what the trial suggests"),
        (model_init_no_none, "my_model_init(None)"),
        (model_init_other_names, '"num_layers"'),
        (model_init_narrow, "your search space is"),
        (model_not_function, "is a model"),
        (model_init_config_after, "a value written into model.config afterwards changes nothing"),
    ],
    "q2": [
        (CurvesFlat, "one list per trial"),
        (CurvesEverywhere, "outside a search add nothing"),
        (CurvesPerEpoch, "one list per trial"),
        (CurvesSharedList, "class attribute"),
        (CurvesDefaultList, "a mutable default argument"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
