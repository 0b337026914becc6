"""Lesson 08's rules (training_step and gradients), tried beyond the lesson's run: accumulation 1 and 3 with an
uneven last accumulation group, a model whose forward lacks **kwargs (TinyModel) and the stock BERT classifier,
clipping on and off."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from rule_training import trainer
from transformers import Trainer, TrainerCallback

from exercises.checks import fixtures


class _Watch(Trainer):
    """Records, for every micro-batch: the returned loss, whether it is detached, whether every trainable
    parameter has a gradient after super(), sync_gradients, and the model's own loss on that batch."""

    rows: list[dict[str, Any]]

    def training_step(self, model: Any, inputs: Any, num_items_in_batch: Any = None) -> torch.Tensor:
        with torch.no_grad():
            own = model(**inputs)["loss"].item()
        loss = super().training_step(model, inputs, num_items_in_batch)
        self.rows.append(
            {
                "loss": loss.item(),
                "detached": not loss.requires_grad,
                "grads": all(p.grad is not None for p in model.parameters() if p.requires_grad),
                "sync": self.accelerator.sync_gradients,
                "own": own,
            }
        )
        return loss


def _watched(tmp_path: Any, model: str, accumulation: int) -> _Watch:
    _Watch.rows = []
    built, data = (None, None) if model == "tiny" else (fixtures.tiny_model(seed=0), fixtures.random_ids(14))
    run = trainer(
        tmp_path,
        model=built,
        train_dataset=data,
        rows=14,
        trainer_class=_Watch,
        gradient_accumulation_steps=accumulation,
        learning_rate=0.0,
    )
    run.train()
    return run


@pytest.mark.rule(
    lesson="08",
    section="Recap",
    text="Override `training_step(model, inputs, num_items_in_batch=None)` by calling `super()` first: it computes "
    "the loss, divides it by the update's number of micro-batches unless it takes the loss as already scaled "
    "(lesson 07), runs "
    "`accelerator.backward` and returns the loss detached; then the gradients are there to read "
    "(`self.accelerator.sync_gradients` marks the last micro-batch).",
    covers=[
        "accumulation 1 and 3",
        "uneven last accumulation group (3 + 3 + 1)",
        "TinyModel (no **kwargs)",
        "the stock BERT classifier (loss taken as scaled: not divided)",
    ],
)
@pytest.mark.parametrize("model", ["tiny", "bert"])
@pytest.mark.parametrize("accumulation", [1, 3])
def test_training_step_super_first(tmp_path: Any, model: str, accumulation: int) -> None:
    run = _watched(tmp_path, model, accumulation)
    rows = _Watch.rows
    assert len(rows) == 7 and all(row["detached"] and row["grads"] for row in rows)
    assert [row["sync"] for row in rows] == [(index + 1) % accumulation == 0 or index == 6 for index in range(7)]
    # TinyModel's forward takes no **kwargs: the Trainer divides; the stock classifier's loss is taken as scaled
    # by num_items_in_batch (it is not), so it is returned undivided (lesson 02's factor). The recap's first
    # wording, "scales it for accumulation", failed on the stock classifier at accumulation 3.
    # The uneven last update (1 micro-batch at accumulation 3) is divided by 1: its own number of micro-batches.
    groups = [min(accumulation, 7 - index // accumulation * accumulation) for index in range(7)]
    divisors = groups if model == "tiny" else [1] * 7
    assert [row["loss"] for row in rows] == pytest.approx([row["own"] / d for row, d in zip(rows, divisors)], rel=1e-5)
    assert run.model_accepts_loss_kwargs == (model == "bert")


class _GradientsAt(TrainerCallback):
    def __init__(self) -> None:
        self.pre: list[float] = []
        self.end: list[bool] = []

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        self.pre.append(float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))))

    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        self.end.append(all(p.grad is None for p in model.parameters()))


@pytest.mark.rule(
    lesson="08",
    section="Recap",
    text="A callback reads gradients at `on_pre_optimizer_step` (after clipping); at `on_step_end` they are `None`.",
    covers=[
        "accumulation 1 and 3",
        "uneven last accumulation group",
        "TinyModel and the stock BERT classifier",
        "clipping at 0.01",
    ],
)
@pytest.mark.rule(
    lesson="08",
    section="6. Subclass or callback?",
    text="| read gradients | callback at `on_pre_optimizer_step` | at `on_step_end` they are gone (section 2) |",
    covers=["accumulation 1 and 3", "uneven last accumulation group", "TinyModel and the stock BERT classifier"],
)
@pytest.mark.rule(
    lesson="08",
    section="Recap",
    text="`grad_norm` in the logs is the norm before clipping.",
    covers=["accumulation 1 and 3", "uneven last accumulation group", "TinyModel and the stock BERT classifier"],
)
@pytest.mark.parametrize("model", ["tiny", "bert"])
@pytest.mark.parametrize("accumulation", [1, 3])
def test_gradients_at_pre_optimizer_step_are_clipped_and_gone_at_step_end(
    tmp_path: Any, model: str, accumulation: int
) -> None:
    probe = _GradientsAt()
    built, data = (None, None) if model == "tiny" else (fixtures.tiny_model(seed=0), fixtures.random_ids(14))
    run = trainer(
        tmp_path,
        [probe],
        model=built,
        train_dataset=data,
        rows=14,
        gradient_accumulation_steps=accumulation,
        max_grad_norm=0.01,
        logging_strategy="steps",
        logging_steps=1,
    )
    run.train()
    logged = [entry["grad_norm"] for entry in run.state.log_history if "grad_norm" in entry]
    assert len(probe.pre) == len(logged) == run.state.global_step
    assert all(norm == pytest.approx(0.01, rel=1e-4) for norm in probe.pre)
    assert all(norm > 0.01 for norm in logged) and all(probe.end)


class _Direction(TrainerCallback):
    def __init__(self) -> None:
        self.grads: list[torch.Tensor] = []

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        self.grads.append(torch.cat([p.grad.flatten() for p in model.parameters()]).clone())


@pytest.mark.rule(
    lesson="08",
    section="Recap",
    text="Clip with `max_grad_norm`, not inside `training_step`",
    covers=["accumulation 1, 2 and 3", "uneven last accumulation group"],
)
@pytest.mark.parametrize("accumulation", [1, 2, 3])
def test_clipping_inside_training_step_changes_the_update(tmp_path: Any, accumulation: int) -> None:
    class ClipInside(Trainer):
        def training_step(self, model: Any, inputs: Any, num_items_in_batch: Any = None) -> torch.Tensor:
            loss = super().training_step(model, inputs, num_items_in_batch)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.01)
            return loss

    inside, outside = _Direction(), _Direction()
    trainer(
        tmp_path / "in",
        [inside],
        rows=14,
        trainer_class=ClipInside,
        gradient_accumulation_steps=accumulation,
        max_grad_norm=0.0,
        max_steps=1,
    ).train()
    trainer(
        tmp_path / "out", [outside], rows=14, gradient_accumulation_steps=accumulation, max_grad_norm=0.01, max_steps=1
    ).train()
    # Inside, each micro-batch clips the running sum, so the first micro-batches are cut before the later ones
    # add to it: the accumulated gradient points elsewhere. At accumulation 1 the two are the same.
    cosine = torch.nn.functional.cosine_similarity(inside.grads[0], outside.grads[0], dim=0).item()
    assert (cosine > 1 - 1e-6) == (accumulation == 1), cosine


@pytest.mark.rule(
    lesson="08",
    section="5. Other methods",
    text="There is no `evaluation_step` to override: to change what happens to one evaluation batch, override "
    "`prediction_step`",
    covers=[
        "Trainer and Seq2SeqTrainer",
        "evaluate() and predict()",
        "an uneven last evaluation batch (7 rows, batch 2)",
        "eval_accumulation_steps 2",
        "BERT and Llama classifiers",
    ],
)
@pytest.mark.rule(
    lesson="08",
    section="Recap",
    text="there is no `evaluation_step`.",
    covers=["Trainer and Seq2SeqTrainer", "evaluate() and predict() through prediction_step, once a batch"],
)
@pytest.mark.parametrize(("model", "accumulation"), [("bert", None), ("llama", 2)])
def test_there_is_no_evaluation_step(tmp_path: Any, model: str, accumulation: int | None) -> None:
    from rule_training import MODELS, ids
    from transformers import Seq2SeqTrainer

    for cls in (Trainer, Seq2SeqTrainer):
        assert not hasattr(cls, "evaluation_step") and callable(cls.prediction_step)

    class ClassIds(Trainer):  # the lesson's override: class ids instead of logits, counted
        calls = 0

        def prediction_step(self, model: Any, inputs: Any, prediction_loss_only: bool, ignore_keys: Any = None):
            self.calls += 1
            loss, logits, labels = super().prediction_step(model, inputs, prediction_loss_only, ignore_keys)
            return loss, (logits.argmax(dim=-1) if logits is not None else None), labels

    built, seen = MODELS[model](seed=0), []
    settings = dict(per_device_eval_batch_size=2, eval_accumulation_steps=accumulation)
    stock = trainer(tmp_path / "stock", model=built, **settings).predict(ids(7)).predictions
    run = trainer(
        tmp_path / "ids",
        model=built,
        trainer_class=ClassIds,
        compute_metrics=lambda prediction: seen.append(prediction.predictions) or {},
        **settings,
    )
    predicted = run.predict(ids(7)).predictions
    run.evaluate(ids(7))
    assert run.calls == 2 * 4  # predict() and evaluate(): one call per batch of 2, 2, 2, 1
    assert predicted.shape == (7,) and (predicted == stock.argmax(-1)).all()
    assert (seen[-1] == predicted).all()


class _WritesRate(TrainerCallback):
    def on_step_begin(self, args: Any, state: Any, control: Any, optimizer: Any = None, **kwargs: Any) -> None:
        for group in optimizer.param_groups:
            group["lr"] = 0.01 / (1 + state.global_step)


class _OwnScheduler(Trainer):
    def create_scheduler(self, num_training_steps: int, optimizer: Any = None) -> Any:
        self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer or self.optimizer, lambda step: (0.01 / (1 + step)) / self.args.learning_rate
        )
        return self.lr_scheduler


@pytest.mark.rule(
    lesson="08",
    section="6. Subclass or callback?",
    text="| change the LR mid-run | `create_scheduler` or `optimizers=` | a rate a callback writes trains but is not "
    "logged (06) |",
    covers=["accumulation 1 and 3", "uneven last accumulation group", "logging every update"],
)
@pytest.mark.parametrize("accumulation", [1, 3])
def test_a_rate_changed_mid_run_is_logged_only_from_a_scheduler(tmp_path: Any, accumulation: int) -> None:
    from helpers.lessons.lesson_03 import AppliedLRRecorder

    def rates(folder: str, callbacks: list[Any], trainer_class: type) -> tuple[list[float], list[float]]:
        applied = AppliedLRRecorder()
        run = trainer(
            tmp_path / folder,
            [*callbacks, applied],
            rows=14,
            trainer_class=trainer_class,
            gradient_accumulation_steps=accumulation,
            logging_strategy="steps",
            logging_steps=1,
        )
        run.train()
        logged = [entry["learning_rate"] for entry in run.state.log_history if "learning_rate" in entry]
        return applied.lrs, logged

    wanted = [0.01 / (1 + step) for step in range(-(-7 // accumulation))]
    applied, logged = rates("callback", [_WritesRate()], Trainer)
    assert applied == pytest.approx(wanted) and logged != pytest.approx(wanted)
    applied, logged = rates("scheduler", [], _OwnScheduler)
    assert applied == pytest.approx(wanted) and logged == pytest.approx(wanted)


@pytest.mark.rule(
    lesson="08",
    section="6. Subclass or callback?",
    text="| change the loss | `compute_loss`, or `compute_loss_func=` over `num_items_in_batch` | a callback cannot "
    "change what is differentiated (07) |",
    covers=["TinyModel (forward without **kwargs)", "accumulation 1 and 2", "uneven last micro-batch"],
)
@pytest.mark.parametrize("accumulation", [1, 2])
def test_the_loss_changes_by_either_route(tmp_path: Any, accumulation: int) -> None:
    def doubled(outputs: Any, labels: Any, num_items_in_batch: Any = None) -> torch.Tensor:
        return 2 * torch.nn.functional.cross_entropy(outputs["logits"], labels)

    class Doubled(Trainer):
        def compute_loss(
            self, model: Any, inputs: Any, return_outputs: bool = False, num_items_in_batch: Any = None
        ) -> Any:
            labels = inputs.pop("labels")
            outputs = model(**inputs)
            loss = doubled(outputs, labels)
            return (loss, outputs) if return_outputs else loss

    def first_loss(folder: str, **settings: Any) -> float:
        run = trainer(
            tmp_path / folder,
            rows=13,
            gradient_accumulation_steps=accumulation,
            max_steps=1,
            logging_strategy="steps",
            logging_steps=1,
            **settings,
        )
        run.train()
        return next(entry["loss"] for entry in run.state.log_history if "loss" in entry)

    def doubled_sum(outputs: Any, labels: Any, num_items_in_batch: Any = None) -> torch.Tensor:
        loss = torch.nn.functional.cross_entropy(outputs["logits"], labels, reduction="sum")
        return 2 * loss / num_items_in_batch

    plain = first_loss("plain")
    by_function = first_loss("function", compute_loss_func=doubled)
    by_sum = first_loss("sum", compute_loss_func=doubled_sum)
    by_subclass = first_loss("subclass", trainer_class=Doubled)
    assert by_subclass == pytest.approx(2 * plain, rel=1e-5) and by_sum == pytest.approx(2 * plain, rel=1e-5)
    # A compute_loss_func is taken as scaled for accumulation (lesson 07): a per-batch mean logs (and steps)
    # `accumulation` times too much. The chart's first row, "`compute_loss_func=` or `compute_loss`", failed here.
    assert by_function == pytest.approx(2 * plain * accumulation, rel=1e-5)


@pytest.mark.rule(
    lesson="08",
    section="Recap",
    text="clipping does not rescue a learning rate that is too high.",
    covers=[
        "a BERT classifier from a config, 32 random rows, 4 epochs of batch 4 (accumulation 1 and 2)",
        "learning rate 1 (too high) with max_grad_norm 1.0 and 0.1 against 1e-3 without clipping: both clipped "
        "runs have a mean training loss above the good run's, by more than 0.1",
    ],
)
@pytest.mark.parametrize("accumulation", [1, 2])
def test_clipping_does_not_rescue_a_high_learning_rate(tmp_path: Any, accumulation: int) -> None:
    def final_loss(folder: str, rate: float, clip: float) -> float:
        run = trainer(
            tmp_path / folder,
            model=fixtures.tiny_model(seed=0),
            train_dataset=fixtures.random_ids(32),
            per_device_train_batch_size=4 // accumulation,
            gradient_accumulation_steps=accumulation,
            num_train_epochs=4,
            learning_rate=rate,
            max_grad_norm=clip,
        )
        return run.train().training_loss

    good = final_loss("good", 1e-3, 0.0)
    for clip in (1.0, 0.1):
        assert final_loss(f"clip{clip}", 1.0, clip) > good + 0.1


class _LargeBatches(Trainer):
    """The lesson's get_train_dataloader override: 4 steps' worth of rows a fetch, counted."""

    dataloader_calls = 0

    def get_train_dataloader(self) -> Any:
        self.dataloader_calls += 1
        return self._get_dataloader(
            dataset=self.train_dataset,
            description="Training",
            batch_size=self._train_batch_size * 4,
            sampler_fn=self._get_train_sampler,
            is_training=True,
        )


class _HalfwayScheduler(_LargeBatches):
    """create_optimizer (SGD, one group for the bias) and create_scheduler (halve the rate after one update)."""

    def create_optimizer(self, model: Any = None) -> Any:
        if self.optimizer is None:
            bias = [p for n, p in self.model.named_parameters() if n.endswith("bias")]
            rest = [p for n, p in self.model.named_parameters() if not n.endswith("bias")]
            lr = self.args.learning_rate
            self.optimizer = torch.optim.SGD([{"params": rest, "lr": lr}, {"params": bias, "lr": lr / 10}])
        return self.optimizer

    def create_scheduler(self, num_training_steps: int, optimizer: Any = None) -> Any:
        if self.lr_scheduler is None:
            self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
                optimizer or self.optimizer, lambda step: 1.0 if step < 1 else 0.5
            )
        return self.lr_scheduler


class _Applied(TrainerCallback):
    def __init__(self) -> None:
        self.rates: list[list[float]] = []

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, optimizer: Any = None, **kwargs: Any):
        self.rates.append([group["lr"] for group in optimizer.param_groups])


@pytest.mark.rule(
    lesson="08",
    section="Recap",
    text="`get_train_dataloader`, `create_optimizer`, `create_scheduler` and `prediction_step` are small, useful "
    "overrides",
    covers=[
        "accumulation 1 and 2, an uneven last fetched batch (18 rows, 8 a fetch)",
        "get_train_dataloader: called once per train(), a second train() too",
        "create_optimizer: its SGD and its two groups' rates are the ones applied",
        "create_scheduler: its rate is the one applied at each update",
        "prediction_step: test_there_is_no_evaluation_step",
    ],
)
@pytest.mark.rule(
    lesson="08",
    section="5. Other methods",
    text="The Trainer still takes one optimizer step per fetched batch (per `gradient_accumulation_steps` fetched "
    "batches when it is above 1)",
    covers=["accumulation 1 and 2", "an uneven last fetched batch (18 rows, 8 a fetch)", "2 epochs"],
)
@pytest.mark.rule(
    lesson="08",
    section="6. Subclass or callback?",
    text="| change the batches | subclass `get_train_dataloader` | section 5 |",
    covers=["accumulation 1 and 2", "8 rows a fetch instead of 2, an uneven last fetch", "2 epochs"],
)
@pytest.mark.rule(
    lesson="08",
    section="6. Subclass or callback?",
    text="| parameter groups, a custom optimizer | subclass `create_optimizer` | section 5 |",
    covers=["accumulation 1 and 2", "SGD with two groups at 0.1 and 0.01: the rates applied"],
)
@pytest.mark.parametrize("accumulation", [1, 2])
def test_the_small_overrides_take_effect(tmp_path: Any, accumulation: int) -> None:
    applied = _Applied()
    run = trainer(
        tmp_path,
        [applied],
        rows=18,
        trainer_class=_HalfwayScheduler,
        gradient_accumulation_steps=accumulation,
        num_train_epochs=2,
        learning_rate=0.1,
    )
    fetched: list[int] = []
    run.model.register_forward_pre_hook(lambda module, args, kwargs: fetched.append(len(kwargs["x"])), with_kwargs=True)
    run.train()
    assert fetched == [8, 8, 2] * 2 and run.dataloader_calls == 1
    assert run.state.global_step == 2 * -(-3 // accumulation)  # one update per `accumulation` fetched batches
    assert isinstance(run.optimizer.optimizer, torch.optim.SGD)  # inside accelerate's wrapper
    assert applied.rates == [[0.1, 0.01]] + [[0.05, 0.005]] * (run.state.global_step - 1)
    run.train()
    assert run.dataloader_calls == 2


class _EveryEvent(TrainerCallback):
    """For every event: whether it got a model and an optimizer; and, at on_step_end of update 2, raises every
    action flag it is given."""

    def __init__(self, flags: tuple[str, ...] = ()) -> None:
        self.flags, self.got = flags, {}

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("on_"):
            got, flags = object.__getattribute__(self, "got"), object.__getattribute__(self, "flags")

            def record(args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                seen = (kwargs.get("model") is not None, kwargs.get("optimizer") is not None, state is not None)
                got.setdefault(name, set()).add(seen)
                if name == "on_step_end" and state.global_step == 2:
                    for flag in flags:
                        setattr(control, flag, True)

            return record
        return object.__getattribute__(self, name)


@pytest.mark.rule(
    lesson="08",
    section="6. Subclass or callback?",
    text="| watch losses, metrics, LR, timing | callback | every event gets `state`, `model`, `optimizer` (05) |",
    covers=[
        "every event of a run with evaluation, accumulation 1 and 3: state, model and optimizer, except at "
        "on_init_end (no optimizer yet: the Trainer builds it in train())",
    ],
)
@pytest.mark.rule(
    lesson="08",
    section="6. Subclass or callback?",
    text="| stop, evaluate, save or log now | callback | `control` flags (06) |",
    covers=["should_log, should_evaluate, should_save and should_training_stop at update 2", "accumulation 1 and 3"],
)
@pytest.mark.parametrize("accumulation", [1, 3])
def test_a_callback_watches_every_event_and_acts_through_control(tmp_path: Any, accumulation: int) -> None:
    import os

    from tiny_training import toy_dataset

    flags = ("should_log", "should_evaluate", "should_save", "should_training_stop")
    watcher = _EveryEvent(flags)
    run = trainer(
        tmp_path,
        [watcher],
        rows=13,
        num_train_epochs=2,
        gradient_accumulation_steps=accumulation,
        eval_dataset=toy_dataset(4),
    )
    run.train()
    assert watcher.got.pop("on_init_end") == {(True, False, True)}
    assert watcher.got and all(seen == {(True, True, True)} for seen in watcher.got.values()), watcher.got
    history = run.state.log_history
    assert [entry["step"] for entry in history if "loss" in entry] == [2]
    assert [entry["step"] for entry in history if "eval_loss" in entry] == [2]
    assert os.listdir(tmp_path) == ["checkpoint-2"] and run.state.global_step == 2


@pytest.mark.rule(
    lesson="08",
    section="5. Other methods",
    text="Returning class ids instead of logits shrinks what evaluation keeps in memory once there are more than "
    "two classes (an int64 id against a float32 logit per class;",
    covers=[
        "BERT classifiers of 2 and 5 classes, 7 rows at eval batch 2 (uneven last batch)",
        "2 classes: 56 bytes either way; 5 classes: 56 against 140",
    ],
)
@pytest.mark.parametrize("classes", [2, 5])
def test_class_ids_shrink_predictions_only_beyond_two_classes(tmp_path: Any, classes: int) -> None:
    from rule_training import ids
    from transformers import BertConfig, BertForSequenceClassification

    class ClassIds(Trainer):  # the lesson's override
        def prediction_step(self, model: Any, inputs: Any, prediction_loss_only: bool, ignore_keys: Any = None):
            loss, logits, labels = super().prediction_step(model, inputs, prediction_loss_only, ignore_keys)
            return loss, (logits.argmax(dim=-1) if logits is not None else None), labels

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64
    )
    config.num_labels = classes
    model = BertForSequenceClassification(config)
    rows = ids(7).map(lambda row: {"labels": row["labels"] % classes})
    logits = trainer(tmp_path / "logits", model=model, per_device_eval_batch_size=2).predict(rows).predictions
    class_ids = trainer(tmp_path / "ids", model=model, trainer_class=ClassIds, per_device_eval_batch_size=2)
    kept = class_ids.predict(rows).predictions
    assert (kept == logits.argmax(-1)).all()
    assert kept.nbytes == 8 * 7 and logits.nbytes == 4 * classes * 7
    assert (kept.nbytes < logits.nbytes) == (classes > 2)
