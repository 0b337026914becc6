"""Ladder probes: callbacks (lessons 05, 06, 08), losses under gradient accumulation (lesson 07) and other
methods (lesson 08). Loaded by ``probes.py``; the kit is :mod:`probe_kit`."""

from __future__ import annotations

from probe_kit import (
    CannotRun,
    ListDataset,
    _Heard,
    _line,
    _rounded,
    callback_base,
    eval_key,
    event_names,
    examples,
    losses,
    make_trainer,
    probe,
    tiny_model,
    trainer_accepts,
)


# ---------------------------------------------------------------------------------------------------------------
# Callbacks (lessons 05, 06, 08)
# ---------------------------------------------------------------------------------------------------------------
@probe(
    "misspelled_event_is_silent",
    "A callback method with a misspelled event name is never called and nothing reports it.",
    "Long customisation post",
    "05 §6",
)
def misspelled_event_is_silent():
    calls = {"on_epoch_end": 0, "on_epoch_ended": 0}

    class Misspelled(callback_base()):
        def on_epoch_end(self, args, state, control, **kwargs):
            calls["on_epoch_end"] += 1

        def on_epoch_ended(self, args, state, control, **kwargs):
            calls["on_epoch_ended"] += 1

    heard = _Heard()
    with heard:
        make_trainer("misspelled", callbacks=[Misspelled()], max_steps=-1, num_train_epochs=1).train()
    mentions = [line for line in heard.lines if "on_epoch_ended" in line]
    return calls["on_epoch_ended"] == 0 and not mentions, f"calls {calls}; messages naming it: {len(mentions)}"


@probe(
    "metrics_only_at_on_evaluate",
    "`metrics` is passed only to `on_evaluate`.",
    "Callbacks notes",
    "05 §3",
)
def metrics_only_at_on_evaluate():
    receivers = set()

    class Any(callback_base()):
        pass

    for name in event_names():

        def record(self, args, state, control, _name=name, **kwargs):
            if "metrics" in kwargs:
                receivers.add(_name)

        setattr(Any, name, record)
    trainer = make_trainer("metrics_events", callbacks=[Any()], eval_dataset=examples(4, seed=1))
    trainer.train()
    trainer.evaluate()
    trainer.predict(examples(4, seed=2))
    return receivers == {"on_evaluate"}, f"events that received metrics: {sorted(receivers)}"


@probe(
    "step_begin_flags_switch_off_actions",
    "Setting `should_log`, `should_evaluate` and `should_save` to False in `on_step_begin` switches those actions off.",
    "Short customisation post",
    "06 §1 (MyCallback)",
)
def step_begin_flags_switch_off_actions():
    class MyCallback(callback_base()):
        def on_step_begin(self, args, state, control, **kwargs):
            control.should_log = False
            control.should_evaluate = False
            control.should_save = False

    trainer = make_trainer("step_begin", callbacks=[MyCallback()], max_steps=3, logging_steps=1)
    trainer.train()
    logged = [entry["step"] for entry in trainer.state.log_history if "loss" in entry]
    return not logged, f"training loss still logged at steps {logged}"


@probe(
    "callback_learning_rate_is_applied_and_logged",
    "A learning rate that a callback writes into `optimizer.param_groups` in `on_step_begin` is the one the step "
    "applies and the one the Trainer logs, both halves. (The applied half alone, the post's sentence, holds; the "
    "evidence shows each.)",
    "Long customisation post",
    "06 §5 (DynamicLRCallback)",
)
def callback_learning_rate_is_applied_and_logged():
    written = 0.0123

    class Dynamic(callback_base()):
        def on_step_begin(self, args, state, control, optimizer=None, **kwargs):
            for group in optimizer.param_groups:
                group["lr"] = written

    model = tiny_model()
    optimizer = _sgd_recording_norms()(model.parameters(), lr=0.1)
    trainer = make_trainer("dynamic_lr", model=model, callbacks=[Dynamic()], optimizers=(optimizer, None), max_steps=2)
    trainer.train()
    logged = [entry["learning_rate"] for entry in trainer.state.log_history if "learning_rate" in entry]
    applied = optimizer.rates
    holds = all(abs(rate - written) < 1e-12 for rate in applied + logged)
    return holds, f"written {written}: applied {_rounded(applied)}, logged {_rounded(logged)}"


@probe(
    "callbacks_are_read_only",
    "Callbacks cannot change the training (only the `TrainerControl` flags).",
    "Callbacks notes; Short customisation post",
    "06 §8; 08 §6",
)
def callbacks_are_read_only():
    import torch

    class Freeze(callback_base()):
        def on_train_begin(self, args, state, control, model=None, **kwargs):
            model.bert.embeddings.word_embeddings.weight.requires_grad_(False)

    trainer = make_trainer("read_only", callbacks=[Freeze()])
    before = trainer.model.bert.embeddings.word_embeddings.weight.detach().clone()
    trainer.train()
    unchanged = torch.equal(before, trainer.model.bert.embeddings.word_embeddings.weight.detach())
    return not unchanged, f"embeddings frozen from on_train_begin stayed unchanged over 2 steps: {unchanged}"


@probe(
    "gradients_none_at_step_end",
    "In `on_step_end` the gradients are already cleared (None or zero); read them earlier.",
    "course",
    "06 §6; 08 §2",
)
def gradients_none_at_step_end():
    seen = []

    class Look(callback_base()):
        def on_step_end(self, args, state, control, model=None, **kwargs):
            grads = [p.grad for p in model.parameters() if p.requires_grad]
            seen.append(sum(g is None or not g.abs().sum().item() for g in grads) / len(grads))

    make_trainer("grads", callbacks=[Look()]).train()
    return all(share == 1.0 for share in seen), f"share of parameters with no (or zero) gradient at on_step_end: {seen}"


def _early_stopping_refusal(run: str, needed: str, unmet: str, **settings) -> tuple[bool, str]:
    """Train with an ``EarlyStoppingCallback`` and an evaluation every step, with ``settings`` leaving out
    ``needed``: the claim holds when the Trainer refuses with an error that names ``needed``."""
    from transformers import EarlyStoppingCallback

    try:
        make_trainer(
            run,
            callbacks=[EarlyStoppingCallback(early_stopping_patience=1)],
            eval_dataset=examples(4, seed=1),
            max_steps=3,
            eval_steps=1,
            **{eval_key(): "steps"},
            **settings,
        ).train()
    except (AssertionError, ValueError) as error:
        if needed not in str(error):
            raise CannotRun(f"stops first on another requirement: {_line(error)}") from error
        return True, f"{type(error).__name__}: {_line(error)}"
    return False, unmet


@probe(
    "early_stopping_requires_load_best_model",
    "`EarlyStoppingCallback` requires `load_best_model_at_end=True`.",
    "course",
    "06 §4",
)
def early_stopping_requires_load_best_model():
    return _early_stopping_refusal(
        "early",
        "load_best_model_at_end",
        "trained with load_best_model_at_end=False (metric_for_best_model set)",
        metric_for_best_model="eval_loss",
    )


@probe(
    "early_stopping_requires_metric",
    "`EarlyStoppingCallback` requires `metric_for_best_model`.",
    "course",
    "06 §4",
)
def early_stopping_requires_metric():
    return _early_stopping_refusal("early_metric", "metric_for_best_model", "trained without metric_for_best_model")


# ---------------------------------------------------------------------------------------------------------------
# Losses under gradient accumulation (lesson 07), other methods (lesson 08)
# ---------------------------------------------------------------------------------------------------------------
def _sgd_recording_norms():
    import torch

    class RecordingSGD(torch.optim.SGD):
        """Plain SGD that notes the global gradient norm and the learning rate of each step."""

        def __init__(self, params, lr):
            super().__init__(params, lr=lr)
            self.norms, self.rates = [], []

        def step(self, closure=None):
            grads = [p.grad.norm() for group in self.param_groups for p in group["params"] if p.grad is not None]
            self.norms.append(float(torch.linalg.vector_norm(torch.stack(grads))))
            self.rates.append(self.param_groups[0]["lr"])
            return super().step(closure)

    return RecordingSGD


def _accumulation_step(trainer_class, batch: int, accumulation: int) -> tuple[float, float, object]:
    """Loss logged and gradient norm received by the optimizer at the first step, 32 fixed reviews, no shuffling."""
    model = tiny_model(seed=0)
    optimizer = _sgd_recording_norms()(model.parameters(), lr=0.1)
    trainer = make_trainer(
        f"accumulation_{batch}x{accumulation}",
        trainer_class=trainer_class,
        model=model,
        train_dataset=examples(32, seed=4),
        optimizers=(optimizer, None),
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=accumulation,
        max_steps=1,
        max_grad_norm=1e9,
    )
    trainer.get_train_dataloader = _unshuffled(trainer)
    trainer.train()
    return losses(trainer)[0], optimizer.norms[0], trainer


def _unshuffled(trainer):
    import torch

    def loader():
        return torch.utils.data.DataLoader(
            trainer.train_dataset, batch_size=trainer.args.train_batch_size, collate_fn=trainer.data_collator
        )

    return loader


@probe(
    "stock_classifier_accumulation_matches",
    "The stock sequence classifier (no subclass) takes the same step at batch 2 × accumulation 4 as at batch 8: "
    "same logged loss and same gradient.",
    "course",
    "07 §5; 02 §1",
)
def stock_classifier_accumulation_matches():
    from transformers import Trainer

    loss_big, norm_big, _ = _accumulation_step(Trainer, 8, 1)
    loss_small, norm_small, trainer = _accumulation_step(Trainer, 2, 4)
    flag = getattr(trainer, "model_accepts_loss_kwargs", "absent")
    loss_ratio, norm_ratio = loss_small / loss_big, norm_small / norm_big
    holds = abs(loss_ratio - 1) < 1e-3 and abs(norm_ratio - 1) < 1e-3
    return (
        holds,
        f"2x4 / 8x1: logged loss x{loss_ratio:.3f}, gradient norm x{norm_ratio:.3f}; model_accepts_loss_kwargs={flag}",
    )


@probe(
    "model_accepts_loss_kwargs_false_fixes_mean_loss",
    "A `compute_loss` that returns the micro-batch mean takes the right step under accumulation once "
    "`self.model_accepts_loss_kwargs = False` is set.",
    "Subclassing article",
    "07 §5 (claim box)",
)
def model_accepts_loss_kwargs_false_fixes_mean_loss():
    from transformers import Trainer

    class MeanLoss(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            outputs = model(**inputs)
            return (outputs.loss, outputs) if return_outputs else outputs.loss

    class WithAdvice(MeanLoss):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.model_accepts_loss_kwargs = False

    try:
        loss_big, norm_big, _ = _accumulation_step(Trainer, 8, 1)
        loss_naive, norm_naive, naive = _accumulation_step(MeanLoss, 2, 4)
        loss_fixed, norm_fixed, _ = _accumulation_step(WithAdvice, 2, 4)
    except TypeError as error:
        return False, f"TypeError: {_line(error)}"
    has_flag = hasattr(naive, "model_accepts_loss_kwargs")
    holds = abs(loss_fixed / loss_big - 1) < 1e-3 and abs(norm_fixed / norm_big - 1) < 1e-3
    return holds, (
        f"with the flag: loss x{loss_fixed / loss_big:.3f}, gradient x{norm_fixed / norm_big:.3f}; without: loss "
        f"x{loss_naive / loss_big:.3f}, gradient x{norm_naive / norm_big:.3f}"
        + ("" if has_flag else "; this Trainer has no such attribute")
    )


@probe(
    "label_smoothing_before_compute_loss_func",
    "With both `label_smoothing_factor` and `compute_loss_func`, label smoothing is applied.",
    "Subclassing article",
    "07 §3 (claim box)",
)
def label_smoothing_before_compute_loss_func():
    import torch

    if not trainer_accepts("compute_loss_func"):
        raise CannotRun("Trainer.__init__ has no compute_loss_func parameter")

    def plain(outputs, labels, num_items_in_batch=None):
        return torch.nn.functional.cross_entropy(outputs.logits, labels)

    runs = {}
    for name, extra in [
        ("plain", {}),
        ("smoothing", {"label_smoothing_factor": 0.3}),
        ("both", {"label_smoothing_factor": 0.3, "compute_loss_func": plain}),
    ]:
        model = tiny_model()
        with torch.no_grad():
            model.classifier.bias += torch.tensor([0.0, 3.0])  # a margin, so that smoothing changes the loss
        positive = ListDataset([{**row, "labels": 1} for row in examples().rows])  # a margin towards every label
        trainer = make_trainer("smoothing_order", model=model, train_dataset=positive, max_steps=1, **extra)
        trainer.train()
        runs[name] = losses(trainer)[0]
    applied = abs(runs["both"] - runs["smoothing"]) < 1e-6 and abs(runs["smoothing"] - runs["plain"]) > 1e-4
    return applied, (
        f"first logged loss: plain {runs['plain']:.5f}, smoothing alone {runs['smoothing']:.5f}, "
        f"both {runs['both']:.5f}"
    )


@probe(
    "evaluation_step_is_called",
    "`evaluation_step` is a Trainer method that evaluation calls, so overriding it changes evaluation.",
    "Long customisation post",
    "08 §5 (evaluation_step)",
)
def evaluation_step_is_called():
    from transformers import Trainer

    calls = []

    class Override(Trainer):
        def evaluation_step(self, *args, **kwargs):
            calls.append(1)
            raise RuntimeError("evaluation_step was called")

    make_trainer("evaluation_step", trainer_class=Override, eval_dataset=examples(4, seed=1)).evaluate()
    return bool(calls), f"Trainer has evaluation_step: {hasattr(Trainer, 'evaluation_step')}; calls: {len(calls)}"


@probe(
    "get_train_dataloader_delegates_to_get_dataloader",
    "`get_train_dataloader` delegates to the internal `_get_dataloader`, and training calls it once.",
    "Subclassing article",
    "08 §5",
)
def get_train_dataloader_delegates_to_get_dataloader():
    from transformers import Trainer

    if not hasattr(Trainer, "_get_dataloader"):
        raise CannotRun("Trainer has no _get_dataloader")
    calls = {"get_train_dataloader": 0, "_get_dataloader": 0}

    class Counting(Trainer):
        def get_train_dataloader(self, *args, **kwargs):
            calls["get_train_dataloader"] += 1
            return super().get_train_dataloader(*args, **kwargs)

        def _get_dataloader(self, *args, **kwargs):
            calls["_get_dataloader"] += 1
            return super()._get_dataloader(*args, **kwargs)

    make_trainer("dataloader", trainer_class=Counting, max_steps=-1, num_train_epochs=2).train()
    return calls == {"get_train_dataloader": 1, "_get_dataloader": 1}, f"calls over 2 epochs: {calls}"
