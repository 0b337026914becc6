"""Lesson 02's rules (TrainingArguments), tried beyond the lesson's run: the stock BERT classifier and two other
stock classifiers (DistilBERT, Llama) built from configs, even and uneven micro-batches, accumulation 2 and 4,
clipping on and off, dropout on."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from datasets import Dataset
from rule_training import MODELS, first_step, ids, trainer
from transformers import TrainerCallback, TrainingArguments

from exercises.checks import fixtures


@pytest.mark.rule(
    lesson="02",
    section="Recap",
    text="With the stock classifier, 2 × 4 logs a loss and gradient 4 times those of 8 × 1 until "
    "`trainer.model_accepts_loss_kwargs = False` (exact when the micro-batches are of one size).",
    covers=["BERT, DistilBERT and Llama classifiers", "8 rows as 2 × 4 (even)", "7 rows as 2 × 4 (uneven last)"],
)
@pytest.mark.rule(
    lesson="02",
    section="1. Batch size",
    text="Setting `trainer.model_accepts_loss_kwargs = False` gives the 8 × 1 step back when the micro-batches are "
    "of one size (an uneven last one still weighs its reviews more).",
    covers=["BERT, DistilBERT and Llama classifiers", "8 rows as 2 × 4 (even)", "7 rows as 2 × 4 (uneven last)"],
)
@pytest.mark.parametrize("model", sorted(MODELS))
def test_accumulation_factor_and_the_flag(tmp_path: Any, model: str) -> None:
    full = first_step(tmp_path / "full", model, 8, 8, 1, None)
    stock = first_step(tmp_path / "stock", model, 8, 2, 4, None)
    fixed = first_step(tmp_path / "fixed", model, 8, 2, 4, False)
    assert stock == pytest.approx((4 * full[0], 4 * full[1]), rel=1e-4)
    assert fixed == pytest.approx(full, rel=1e-4)
    # 7 rows as 2, 2, 2, 1: each micro-batch's mean is divided by 4, so the lone last review weighs twice as much
    uneven_full = first_step(tmp_path / "ufull", model, 7, 7, 1, None)
    uneven_fixed = first_step(tmp_path / "ufixed", model, 7, 2, 4, False)
    assert uneven_fixed[1] != pytest.approx(uneven_full[1], rel=1e-3)


@pytest.mark.rule(
    lesson="02",
    section="Recap",
    text="Biases and LayerNorm are left out of weight decay",
    covers=["BERT (LayerNorm)", "DistilBERT (LayerNorm)", "Llama (RMSNorm)"],
)
@pytest.mark.parametrize("model", sorted(MODELS))
def test_biases_and_norms_get_no_weight_decay(tmp_path: Any, model: str) -> None:
    built = MODELS[model](seed=0)
    run = trainer(tmp_path, model=built, train_dataset=ids(4), weight_decay=0.1)
    optimizer = run.create_optimizer()
    names = {id(parameter): name for name, parameter in built.named_parameters()}
    undecayed = {
        names[id(p)] for group in optimizer.param_groups if group["weight_decay"] == 0.0 for p in group["params"]
    }
    norms = {name for name, module in built.named_modules() if "norm" in type(module).__name__.lower()}
    expected = {
        name for name, _ in built.named_parameters() if name.endswith(".bias") or name.rsplit(".", 1)[0] in norms
    }
    assert norms and undecayed == expected


@pytest.mark.rule(
    lesson="02",
    section="Recap",
    text="the logged `grad_norm` is before clipping.",
    covers=["accumulation 1 and 2", "uneven last micro-batch", "clipping at 1e-3"],
)
@pytest.mark.parametrize("accumulation", [1, 2])
def test_logged_grad_norm_is_before_clipping(tmp_path: Any, accumulation: int) -> None:
    def norms(folder: str, clip: float) -> list[float]:
        run = trainer(
            tmp_path / folder,
            rows=13,
            gradient_accumulation_steps=accumulation,
            max_grad_norm=clip,
            logging_strategy="steps",
            logging_steps=1,
            max_steps=1,
        )
        run.train()
        return [entry["grad_norm"] for entry in run.state.log_history if "grad_norm" in entry]

    clipped, unclipped = norms("clip", 1e-3), norms("free", 0.0)
    assert clipped == pytest.approx(unclipped, rel=1e-6) and clipped[0] > 1e-2


@pytest.mark.rule(
    lesson="02",
    section="Recap",
    text='`load_best_model_at_end` needs the save and evaluation schedules aligned (or `save_strategy="best"`).',
    covers=["steps against steps, not a multiple", "epoch against steps", "a multiple of eval_steps", 'save "best"'],
)
def test_load_best_needs_aligned_schedules(tmp_path: Any) -> None:
    def build(**settings: Any) -> TrainingArguments:
        return TrainingArguments(output_dir=str(tmp_path), load_best_model_at_end=True, report_to="none", **settings)

    with pytest.raises(ValueError):
        build(eval_strategy="steps", eval_steps=2, save_strategy="steps", save_steps=3)
    with pytest.raises(ValueError):
        build(eval_strategy="epoch", save_strategy="steps", save_steps=2)
    build(eval_strategy="steps", eval_steps=2, save_strategy="steps", save_steps=4)
    build(eval_strategy="steps", eval_steps=2, save_strategy="best")
    build(eval_strategy="epoch", save_strategy="epoch")


@pytest.mark.rule(
    lesson="02",
    section="Recap",
    text="`model_init` with a seed gives identical runs",
    covers=["dropout on", "accumulation 2", "uneven last micro-batch", "a second Trainer"],
)
def test_model_init_with_a_seed_gives_identical_runs(tmp_path: Any) -> None:
    def final_weights(folder: str) -> list[torch.Tensor]:
        run = trainer(
            tmp_path / folder,
            model_init=_dropout_model,
            train_dataset=ids(13),
            gradient_accumulation_steps=2,
            num_train_epochs=2,
            seed=3,
        )
        run.train()
        return [parameter.detach().clone() for parameter in run.model.parameters()]

    first, second = final_weights("a"), final_weights("b")
    assert all(torch.equal(a, b) for a, b in zip(first, second, strict=True))


def _dropout_model() -> Any:
    """A BERT whose head is drawn from torch's global generator (seeded by the Trainer) and that trains with
    dropout 0.1, so that only seeding makes two runs equal."""
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        num_labels=2,
    )
    return BertForSequenceClassification(config)


@pytest.mark.rule(
    lesson="02",
    section="Recap",
    text="`remove_unused_columns=False` keeps the columns a custom loss needs",
    covers=["a model whose forward lacks **kwargs (TinyModel)", "the stock BERT classifier"],
)
@pytest.mark.parametrize("model", ["tiny", "bert"])
def test_remove_unused_columns_false_keeps_a_loss_column(tmp_path: Any, model: str) -> None:
    from tiny_training import toy_dataset
    from transformers import Trainer

    class WeightedTrainer(Trainer):
        def compute_loss(
            self, model: Any, inputs: Any, return_outputs: bool = False, num_items_in_batch: Any = None
        ) -> Any:
            weight = inputs.pop("review_weight")
            outputs = model(**inputs)
            loss = outputs["loss"] * weight.float().mean()
            return (loss, outputs) if return_outputs else loss

    if model == "tiny":
        rows = [dict(row, review_weight=torch.tensor(2.0)) for row in toy_dataset(8)]
        built = None
    else:
        rows = ids(8).add_column("review_weight", [2.0] * 8)
        built = fixtures.tiny_model(seed=0)
    run = trainer(
        tmp_path / "keep",
        model=built,
        train_dataset=rows,
        trainer_class=WeightedTrainer,
        remove_unused_columns=False,
        max_steps=1,
    )
    run.train()
    dropped = trainer(tmp_path / "drop", model=built, train_dataset=rows, trainer_class=WeightedTrainer, max_steps=1)
    with pytest.raises(KeyError, match="review_weight"):
        dropped.train()


@pytest.mark.rule(
    lesson="02",
    section="Recap",
    text="every step count counts optimizer updates.",
    covers=["accumulation 3", "uneven last accumulation group", "max_steps, logging_steps, eval_steps, save_steps"],
)
@pytest.mark.parametrize("accumulation", [1, 3])
def test_every_step_count_counts_updates(tmp_path: Any, accumulation: int) -> None:
    from tiny_training import toy_dataset

    run = trainer(
        tmp_path,
        rows=26,
        gradient_accumulation_steps=accumulation,
        num_train_epochs=3,
        max_steps=5,
        logging_strategy="steps",
        logging_steps=2,
        eval_strategy="steps",
        eval_steps=3,
        eval_dataset=toy_dataset(4),
        save_strategy="steps",
        save_steps=4,
    )
    run.train()
    history = run.state.log_history
    assert run.state.global_step == 5
    assert [entry["step"] for entry in history if "loss" in entry] == [2, 4]
    assert [entry["step"] for entry in history if "eval_loss" in entry] == [3, 5]  # and where training ends
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("checkpoint-")) == [
        "checkpoint-4",
        "checkpoint-5",
    ]


@pytest.mark.rule(
    lesson="02",
    section="6. The data pipeline",
    text="In the pinned release the setting also groups the batches of `evaluate()` and `predict()`, so `predict()` "
    "returns its rows in another order than the dataset's. Metrics stay right (the labels come back in the same "
    "order as the predictions), but a prediction matched to its input by position belongs to another review: "
    "predict with a Trainer built without it.",
    covers=["BERT and Llama classifiers", "reviews of 3 to 30 tokens", "an uneven last batch (23 rows, batch 4)"],
)
@pytest.mark.parametrize("model", ["bert", "llama"])
def test_group_by_length_reorders_predictions(tmp_path: Any, model: str) -> None:
    generator = torch.Generator().manual_seed(5)
    lengths = torch.randint(3, 31, (23,), generator=generator).tolist()
    rows = [torch.randint(1, 100, (n,), generator=generator).tolist() for n in lengths]
    data = Dataset.from_dict(
        {"input_ids": rows, "attention_mask": [[1] * len(r) for r in rows], "labels": [n % 2 for n in lengths]}
    )

    def predict(folder: str, **settings: Any) -> Any:
        run = trainer(
            tmp_path / folder,
            model=MODELS[model](seed=0),
            train_dataset=data,
            per_device_eval_batch_size=4,
            processing_class=fixtures.tokenizer(),
            **settings,
        )
        return run.predict(data)

    grouped = predict("grouped", train_sampling_strategy="group_by_length")
    plain = predict("plain")
    assert list(plain.label_ids) == data["labels"] and list(grouped.label_ids) != data["labels"]

    def accuracy(output: Any) -> float:
        return float((output.predictions.argmax(-1) == output.label_ids).mean())

    assert sorted(grouped.label_ids.tolist()) == sorted(data["labels"])
    assert accuracy(grouped) == pytest.approx(accuracy(plain))  # metrics stay right


@pytest.mark.rule(
    lesson="02",
    section="Recap",
    text="label smoothing changes the loss, never the labels.",
    covers=[
        "BERT, DistilBERT and Llama classifiers, label_smoothing_factor 0.1 and 0.3",
        "a batch of the Trainer's own dataloader: compute_loss equals cross-entropy with that smoothing, differs "
        "from the plain loss, and the labels tensor is left as it was",
    ],
)
@pytest.mark.rule(
    lesson="02",
    section="7. Label smoothing",
    text="The labels `compute_metrics` receives are the same integers either way; the smoothing happens inside the "
    "loss, in training *and* in evaluation, so an `eval_loss` with smoothing cannot be compared with one without.",
    covers=[
        "BERT, DistilBERT and Llama classifiers, label_smoothing_factor 0.1 and 0.3",
        "training: compute_loss on a batch of the Trainer's dataloader; evaluation: evaluate() on 7 rows",
        "compute_metrics gets the dataset's labels with and without smoothing",
    ],
)
@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("smoothing", [0.1, 0.3])
def test_label_smoothing_changes_the_loss_not_the_labels(tmp_path: Any, model: str, smoothing: float) -> None:
    built = MODELS[model](seed=0).eval()  # no dropout: the same logits twice
    run = trainer(tmp_path, model=built, train_dataset=ids(8), label_smoothing_factor=smoothing)
    batch = next(iter(run.get_train_dataloader()))
    labels = batch["labels"].clone()
    with torch.no_grad():
        loss = run.compute_loss(built, dict(batch))
        logits = built(**{key: value for key, value in batch.items() if key != "labels"}).logits
    assert torch.equal(batch["labels"], labels)
    expected = torch.nn.functional.cross_entropy(logits, labels, label_smoothing=smoothing)
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    assert abs(loss.item() - torch.nn.functional.cross_entropy(logits, labels).item()) > 1e-5
    seen: list[Any] = []
    evaluation = ids(7)
    plain = trainer(tmp_path / "plain", model=built, compute_metrics=lambda p: seen.append(p.label_ids) or {})
    smoothed = trainer(
        tmp_path / "smoothed",
        model=built,
        label_smoothing_factor=smoothing,
        compute_metrics=lambda p: seen.append(p.label_ids) or {},
    )
    without, with_smoothing = plain.evaluate(evaluation), smoothed.evaluate(evaluation)
    assert abs(with_smoothing["eval_loss"] - without["eval_loss"]) > 1e-5  # not comparable
    assert (seen[0] == seen[1]).all() and (seen[0] == evaluation["labels"]).all()


class _RowsPerUpdate(TrainerCallback):
    """The reviews each optimizer update took: rows counted by a forward pre-hook, read at ``on_step_end``."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.rows, self.per_update = 0, []
        model.register_forward_pre_hook(self._count, with_kwargs=True)

    def _count(self, module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        self.rows += len(kwargs["labels"])

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.per_update.append(self.rows)
        self.rows = 0


@pytest.mark.rule(
    lesson="02",
    section="Recap",
    text="Batch × accumulation is the effective batch, and a smaller micro-batch keeps fewer activations.",
    covers=[
        "2 × 3 and 4 × 2 over 2 epochs, BERT and Llama classifiers",
        "an uneven last accumulation group (its update takes the reviews left: 22 rows as 2 × 3 give 6, 6, 6, 4)",
        "activations of 2 against 8 reviews: BERT, DistilBERT and Llama classifiers",
    ],
)
@pytest.mark.parametrize(("model", "batch", "accumulation"), [("bert", 2, 3), ("llama", 4, 2)])
def test_batch_times_accumulation_is_the_effective_batch(
    tmp_path: Any, model: str, batch: int, accumulation: int
) -> None:
    from helpers.performance import saved_tensor_bytes

    built = MODELS[model](seed=0)
    counter = _RowsPerUpdate(built)
    run = trainer(
        tmp_path,
        [counter],
        model=built,
        train_dataset=ids(22),
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=accumulation,
        num_train_epochs=2,
    )
    run.train()
    effective = batch * accumulation
    per_epoch = [effective] * (22 // effective) + ([22 % effective] if 22 % effective else [])
    assert counter.per_update == per_epoch * 2
    for name in MODELS:  # a smaller micro-batch keeps fewer activations
        other = MODELS[name](seed=0)
        rows = ids(8)[:]
        batch8 = {key: torch.tensor(rows[key]) for key in ("input_ids", "attention_mask", "labels")}
        batch2 = {key: value[:2] for key, value in batch8.items()}
        assert saved_tensor_bytes(other, batch2) < saved_tensor_bytes(other, batch8) / 2, name


@pytest.mark.rule(
    lesson="02",
    section="5. Reproducibility and precision",
    text="`data_seed` seeds only the order of the training data, independently of `seed`",
    covers=[
        "TinyModel built by model_init (its start follows seed)",
        "accumulation 2, uneven last micro-batch (13 rows), 2 epochs",
        "same data_seed, other seed: the same order, another start; same seed, other data_seed: another order, "
        "the same start",
    ],
)
def test_data_seed_orders_the_data_only(tmp_path: Any) -> None:
    from tiny_training import TinyModel, toy_dataset

    def run(seed: int, data_seed: int) -> tuple[list[float], torch.Tensor]:
        order: list[float] = []
        starts: list[torch.Tensor] = []

        def model_init() -> TinyModel:
            model = TinyModel()
            starts.append(model.linear.weight.detach().clone())
            model.register_forward_pre_hook(
                lambda module, args, kwargs: order.extend(kwargs["x"][:, 0].tolist()), with_kwargs=True
            )
            return model

        trainer(
            tmp_path / f"{seed}-{data_seed}",
            model_init=model_init,
            train_dataset=toy_dataset(13),
            gradient_accumulation_steps=2,
            num_train_epochs=2,
            seed=seed,
            data_seed=data_seed,
        ).train()
        return order, starts[-1]

    base_order, base_start = run(1, 7)
    other_seed_order, other_seed_start = run(2, 7)
    other_data_order, other_data_start = run(1, 8)
    assert other_seed_order == base_order and not torch.equal(other_seed_start, base_start)
    assert other_data_order != base_order and torch.equal(other_data_start, base_start)
    assert sorted(other_data_order) == sorted(base_order)


def _fired(tmp_path: Any, accumulation: int, **settings: Any) -> dict[str, list[int]]:
    """The updates that logged a training loss, evaluated and saved, in a TinyModel run of 13 rows."""
    import os

    from tiny_training import toy_dataset

    run = trainer(tmp_path, rows=13, gradient_accumulation_steps=accumulation, eval_dataset=toy_dataset(4), **settings)
    run.train()
    history = run.state.log_history
    return {
        "log": [entry["step"] for entry in history if "loss" in entry],
        "evaluate": [entry["step"] for entry in history if "eval_loss" in entry],
        "save": sorted(int(name.split("-")[1]) for name in os.listdir(tmp_path) if name.startswith("checkpoint-")),
    }


@pytest.mark.rule(
    lesson="02",
    section="3. Logging, evaluation and saving",
    text='With `"epoch"`, everything fires at the end of each epoch instead.',
    covers=["accumulation 1 (7 updates an epoch) and 3 (3, the last of one micro-batch)", "2 epochs"],
)
@pytest.mark.rule(
    lesson="02",
    section="3. Logging, evaluation and saving",
    text="the last update (5) is evaluated and saved because training ends off the interval.",
    covers=[
        "max_steps 5 with eval and save every 2: evaluated and saved at 5",
        "2 epochs ending on update 14 or 6 with an interval of 4: evaluated and saved at the last update",
        "accumulation 1 and 3",
    ],
)
@pytest.mark.parametrize("accumulation", [1, 3])
def test_when_logging_evaluation_and_saving_fire(tmp_path: Any, accumulation: int) -> None:
    per_epoch = -(-7 // accumulation)
    epochs = _fired(
        tmp_path / "epoch",
        accumulation,
        num_train_epochs=2,
        logging_strategy="epoch",
        eval_strategy="epoch",
        save_strategy="epoch",
    )
    assert epochs == {key: [per_epoch, 2 * per_epoch] for key in ("log", "evaluate", "save")}
    steps = dict(eval_strategy="steps", eval_steps=2, save_strategy="steps", save_steps=2)
    short = _fired(tmp_path / "max_steps", accumulation, num_train_epochs=3, max_steps=5, **steps)
    assert short["evaluate"] == short["save"] == [2, 4, 5]
    every_4 = dict(eval_strategy="steps", eval_steps=4, save_strategy="steps", save_steps=4)
    ends = _fired(tmp_path / "epochs", accumulation, num_train_epochs=2, **every_4)
    expected = [step for step in range(4, 2 * per_epoch + 1, 4)]
    expected += [] if 2 * per_epoch % 4 == 0 else [2 * per_epoch]
    assert ends["evaluate"] == ends["save"] == expected


@pytest.mark.rule(
    lesson="02",
    section="4. The best model",
    text="`greater_is_better` defaults to `False` for names that end in `loss`, `True` otherwise.",
    covers=["loss, eval_loss, my_loss", "accuracy, eval_f1, loss_ratio", "with and without load_best_model_at_end"],
)
def test_greater_is_better_follows_the_name(tmp_path: Any) -> None:
    for name in ("loss", "eval_loss", "my_loss", "accuracy", "eval_f1", "loss_ratio"):
        for best in (False, True):
            strategy = dict(eval_strategy="epoch", save_strategy="epoch") if best else {}
            built = TrainingArguments(
                output_dir=str(tmp_path), metric_for_best_model=name, load_best_model_at_end=best, **strategy
            )
            assert built.greater_is_better is (not name.endswith("loss")), (name, best)


@pytest.mark.rule(
    lesson="02",
    section="6. The data pipeline",
    text='`train_sampling_strategy="group_by_length"` puts reviews of similar length in the same batch, so dynamic '
    "padding adds fewer pad tokens.",
    covers=[
        "48 rows of 3 to 40 tokens, the course tokenizer's collator",
        "batch 4 and 6 (an uneven count of batches), accumulation 1 and 2, seeds 0, 1 and 2",
        "a whole epoch of the Trainer's own training dataloader",
    ],
)
@pytest.mark.parametrize(("batch", "accumulation"), [(4, 1), (6, 2)])
def test_group_by_length_pads_less(tmp_path: Any, batch: int, accumulation: int) -> None:
    from transformers import DataCollatorWithPadding

    from helpers.models import load_tokenizer

    tokenizer = load_tokenizer()
    lengths = torch.randint(3, 41, (48,), generator=torch.Generator().manual_seed(0)).tolist()
    rows = Dataset.from_dict(
        {
            "input_ids": [[101] + [1000 + i] * (n - 2) + [102] for i, n in enumerate(lengths)],
            "labels": [i % 2 for i in range(48)],
        }
    )

    def padding(seed: int, **settings: Any) -> int:
        run = trainer(
            tmp_path / f"{seed}-{len(settings)}",
            model=fixtures.tiny_model(seed=0),
            train_dataset=rows,
            data_collator=DataCollatorWithPadding(tokenizer),
            per_device_train_batch_size=batch,
            gradient_accumulation_steps=accumulation,
            seed=seed,
            **settings,
        )
        return sum(int((b["attention_mask"] == 0).sum()) for b in run.get_train_dataloader())

    for seed in (0, 1, 2):
        grouped = padding(seed, train_sampling_strategy="group_by_length")
        assert grouped < padding(seed), seed


@pytest.mark.rule(
    lesson="02",
    section="5. Reproducibility and precision",
    text="The Trainer seeds Python, NumPy and torch with `seed` when it is built, and `train()` seeds again right "
    "before it calls `model_init`.",
    covers=[
        "seeds 3 and 11: the draws after building equal those after random.seed, np.random.seed, torch.manual_seed",
        "draws made between building and train(): model_init's first draw is still the seeded one",
        "accumulation 2",
    ],
)
@pytest.mark.parametrize("seed", [3, 11])
def test_the_trainer_seeds_when_built_and_again_before_model_init(tmp_path: Any, seed: int) -> None:
    import random

    import numpy as np
    from tiny_training import TinyModel, toy_dataset

    def draws() -> tuple[float, float, float]:
        return random.random(), float(np.random.rand()), float(torch.rand(1))

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    expected = draws()
    first_in_init: list[float] = []

    def model_init() -> TinyModel:
        first_in_init.append(float(torch.rand(1)))
        return TinyModel()

    run = trainer(tmp_path, model=TinyModel(), train_dataset=toy_dataset(8), gradient_accumulation_steps=2, seed=seed)
    assert draws() == expected  # seeded when built
    run = trainer(
        tmp_path / "init", model_init=model_init, train_dataset=toy_dataset(8), gradient_accumulation_steps=2, seed=seed
    )
    draws(), draws()  # whatever runs between building and training
    run.train()
    assert first_in_init[-1] == expected[2]
