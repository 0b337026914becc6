"""Lesson 07's appendix, many cases: each loss-scaling recipe's factor under gradient accumulation on one process,
measured on the logged loss, the logged grad_norm and the SGD update; clipping and AdamW against the inflated
gradient; and the helpers the lesson builds its data and short runs with (helpers.data's lesson 07 loader,
helpers.trainers)."""

from __future__ import annotations

import math

import pytest
import torch

from exercises.checks import fixtures

pytestmark = pytest.mark.filterwarnings("ignore")


def _step(trainer_class=None, k=1, optim="sgd", clip=0.0, **keywords):
    """One optimizer step on 8 fixed reviews of the tiny classifier, as batch 8 / k x accumulation k: the logged loss
    and grad_norm, and the norm of the change of the weights."""
    from transformers import Trainer, TrainingArguments

    from helpers.trainers import quiet

    model = fixtures.tiny_model(seed=3)
    start = [parameter.detach().clone() for parameter in model.parameters()]
    args = TrainingArguments(
        output_dir=fixtures.scratch_dir(),
        per_device_train_batch_size=8 // k,
        gradient_accumulation_steps=k,
        max_steps=1,
        optim=optim,
        max_grad_norm=clip,
        learning_rate=0.01,
        lr_scheduler_type="constant",
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        seed=0,
    )
    trainer = (trainer_class or Trainer)(
        model=model, args=args, train_dataset=fixtures.random_ids(8, seed=5), **keywords
    )
    quiet(trainer).train()
    log = trainer.state.log_history[0]
    moved = sum(
        float((after.detach() - before).double().pow(2).sum()) for after, before in zip(model.parameters(), start)
    )
    return {"loss": log["loss"], "grad": log["grad_norm"], "update": math.sqrt(moved)}


@pytest.fixture(scope="module")
def reference():
    return _step()


@pytest.mark.parametrize("k", [2, 4])
def test_the_stock_classifier_is_k_times_too_large_in_loss_gradient_and_update(reference, k):
    run = _step(k=k)
    for key in ("loss", "grad", "update"):
        assert run[key] / reference[key] == pytest.approx(k, rel=1e-3), key


def test_every_recipe_gives_its_factor_at_accumulation_4_on_one_process(reference):
    from helpers.lessons.lesson_07 import LOSS_SCALING_RECIPES, MeanLossTrainer

    runs = {"own mean, no switch": (_step(MeanLossTrainer, 4), 4)}
    for name, (trainer_class, keywords, factor) in LOSS_SCALING_RECIPES.items():
        runs[name] = (_step(trainer_class, 4, **keywords), factor(4, 1))
    assert len(runs) == 9
    for name, (run, factor) in runs.items():
        for key in ("loss", "grad", "update"):
            assert run[key] / reference[key] == pytest.approx(factor, rel=1e-4), (name, key)


def test_clipping_between_the_true_and_the_inflated_norm_leaves_the_step_twice_too_large(reference):
    threshold = 2 * reference["grad"]  # above the true norm, below 4 times it: the reference step is not clipped
    clipped = _step(k=4, clip=threshold)
    assert clipped["update"] / reference["update"] == pytest.approx(2, rel=1e-3)


def test_adamw_mostly_cancels_the_factor_on_the_first_step():
    right, inflated = _step(optim="adamw_torch"), _step(k=4, optim="adamw_torch")
    assert inflated["grad"] / right["grad"] == pytest.approx(4, rel=1e-3)
    assert inflated["update"] / right["update"] < 1.5


def test_the_recipes_factors_on_several_processes():
    from helpers.lessons.lesson_07 import LOSS_SCALING_RECIPES

    factors = {name: recipe[2](4, 2) for name, recipe in LOSS_SCALING_RECIPES.items()}
    assert factors == {
        "stock model": 8,
        "stock + loss_is_scaled_for_ga=False": 2,
        "stock + model_accepts_loss_kwargs=False": 1,
        "own mean + loss_is_scaled_for_ga=False": 1,
        "own mean + model_accepts_loss_kwargs=False": 1,
        "own sum / num_items_in_batch": 0.5,
        "own sum / num_items_in_batch x processes": 1,
        "compute_loss_func: sum / num_items_in_batch": 1,
    }


def test_one_in_ten_draws_nine_negative_reviews_for_each_positive_one():
    from helpers.data import load_reviews, one_in_ten

    rows = one_in_ten(load_reviews()["validation"], 12, seed=1)
    assert len(rows) == 120 and sum(rows["label"]) == 12
    with pytest.raises(ValueError, match="ask for fewer positives"):
        one_in_ten(load_reviews()["validation"], 10**6)
    with pytest.raises(ValueError, match="positive int"):
        one_in_ten(load_reviews()["validation"], 0)


def test_embedded_reviews_is_the_mean_of_the_last_hidden_states_over_the_real_tokens():
    from datasets import Dataset
    from transformers import BertConfig, BertModel

    from helpers.data import embedded_reviews

    tokenizer = fixtures.tokenizer()
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2)
    encoder = BertModel(config).eval()
    texts = ["a short one", "a rather longer review of a film that goes on", "ok", "fine, I suppose, for a while"]
    rows = Dataset.from_dict({"text": texts, "label": [0, 1, 0, 1]})
    features = embedded_reviews(rows, encoder, tokenizer, max_length=16, batch_size=3)
    assert features["labels"] == [0, 1, 0, 1]
    with torch.no_grad():
        for text, got in zip(texts, features["features"]):
            alone = encoder(**tokenizer(text, truncation=True, max_length=16, return_tensors="pt")).last_hidden_state
            assert torch.allclose(torch.tensor(got), alone[0].mean(0), atol=1e-5), text
    with pytest.raises(ValueError, match="text and label"):
        embedded_reviews(rows.remove_columns("label"), encoder, tokenizer, max_length=16)


def test_imbalanced_review_features_are_computed_once_then_read_from_the_cache(tmp_path, monkeypatch):
    """Lesson 07's loader keeps its features beside the reviews: a second call (another process: the notebook,
    then its script) reads them back equal, without the model; other arguments are another cache entry."""
    from helpers import data

    monkeypatch.setenv("COURSE_DATA_CACHE", str(tmp_path))
    train, validation = data.imbalanced_review_features(2, max_length=16, device="cpu")
    assert (len(train), len(validation)) == (20, 10) and sum(train["labels"]) == 2

    def no_model(*args, **kwargs):
        raise AssertionError("the features were computed again instead of read from the cache")

    monkeypatch.setattr(data, "_embed_imbalanced", no_model)
    again, validation_again = data.imbalanced_review_features(2, max_length=16, device="cpu")
    assert again["features"] == train["features"] and again["labels"] == train["labels"]
    assert validation_again["features"] == validation["features"]
    with pytest.raises(AssertionError, match="computed again"):
        data.imbalanced_review_features(2, max_length=8, device="cpu")
    assert len([folder for folder in tmp_path.iterdir() if folder.name.startswith("features-")]) == 1


def test_the_stock_classifier_asks_for_the_count_and_leaves_the_scaling_to_the_trainer():
    trainer = fixtures.trainer({})
    assert trainer.model_accepts_loss_kwargs is True  # BERT's forward takes **kwargs
    assert trainer.loss_is_scaled_for_ga is None  # so training_step guesses "already scaled"


def test_a_compute_loss_func_gives_the_subclass_loss_on_one_batch():
    import torch.nn.functional as F

    from helpers.lessons.lesson_07 import WeightedLossTrainer

    weights = torch.tensor([1.0, 9.0])

    def weighted_loss_func(outputs, labels, num_items_in_batch=None):
        per_review = F.cross_entropy(outputs.logits, labels, weight=weights, reduction="none")
        return per_review.sum() / (labels.numel() if num_items_in_batch is None else num_items_in_batch)

    model = fixtures.tiny_model(seed=4)
    batch = fixtures.batch(fixtures.random_ids(8, seed=6), 8)
    by_func = fixtures.trainer({}, model=model, compute_loss_func=weighted_loss_func)
    by_class = fixtures.trainer({}, model=model, trainer_class=WeightedLossTrainer, class_weights=weights)
    with torch.no_grad():
        for count in (None, torch.tensor(8), torch.tensor(13)):
            got = by_func.compute_loss(model, dict(batch), num_items_in_batch=count)
            want = by_class.compute_loss(model, dict(batch), num_items_in_batch=count)
            assert torch.allclose(got, want), count


def test_short_runs_builds_fresh_equal_models_and_the_length_column() -> None:
    """helpers.trainers.short_runs (lesson 07's instrument): every model is a fresh copy of the same weights with
    no dropout, the multi-task head starts the same each time, and the review sets have the sizes the profile asks."""
    from types import SimpleNamespace

    from helpers.trainers import WithLengthHead, short_runs

    demo = short_runs(SimpleNamespace(max_length=32, demo_examples=8, demo_layers=1))
    first, second = demo.model(), demo.model()
    assert first is not second and first is not demo.base_model
    for a, b in zip(first.parameters(), second.parameters(), strict=True):
        assert torch.equal(a, b)
    assert all(module.p == 0.0 for module in first.modules() if isinstance(module, torch.nn.Dropout))
    heads = [demo.multitask_model() for _ in range(2)]
    assert all(isinstance(head, WithLengthHead) for head in heads)
    assert torch.equal(heads[0].length_head.weight, heads[1].length_head.weight)
    assert (len(demo.train), len(demo.aux_train), len(demo.aux_validation)) == (8, 32, 8)
    assert "length_target" in demo.aux_train.column_names
    assert len(demo.tokenized(10)) == 10 and max(len(ids) for ids in demo.tokenized(10)["input_ids"]) <= 16
