"""Ladder probes: the defaults the lessons rely on (lessons 01, 02, 05, 07). Loaded by ``probes.py``; the kit
is :mod:`probe_kit`."""

from __future__ import annotations

import tempfile
from pathlib import Path

from probe_kit import (
    VOCAB,
    CannotRun,
    _folder,
    _line,
    _rounded,
    arguments,
    callback_base,
    eval_key,
    examples,
    field_names,
    losses,
    make_trainer,
    probe,
    tiny_model,
)


# ---------------------------------------------------------------------------------------------------------------
# Defaults (lessons 01, 02, 05, 07)
# ---------------------------------------------------------------------------------------------------------------
@probe(
    "report_to_defaults_to_all",
    "`report_to` defaults to all installed integrations (so TensorBoardCallback is added when tensorboard is there).",
    "Convenient-Trainer guide; Callbacks notes",
    "17 §3 (defaults); 05 §5 (default callbacks)",
)
def report_to_defaults_to_all():
    import transformers.integrations as integrations

    original = getattr(integrations, "get_available_reporting_integrations", None)
    integrations.get_available_reporting_integrations = lambda: ["tensorboard"]
    try:
        from transformers import TrainingArguments

        args = TrainingArguments(output_dir=_folder("report_to"))
    finally:
        if original is not None:
            integrations.get_available_reporting_integrations = original
    resolved = list(args.report_to) if isinstance(args.report_to, list | tuple) else [args.report_to]
    return resolved == ["tensorboard"], f"with tensorboard installed, report_to resolves to {resolved}"


@probe(
    "skip_memory_metrics_defaults_to_false",
    "`skip_memory_metrics` defaults to False.",
    "Convenient-Trainer guide",
    "17 §3 (defaults)",
)
def skip_memory_metrics_defaults_to_false():
    from transformers import TrainingArguments

    value = TrainingArguments(output_dir=_folder("memory")).skip_memory_metrics
    return value is False, f"skip_memory_metrics = {value}"


@probe(
    "default_optimizer_is_adamw",
    "The default optimizer is AdamW.",
    "Convenient-Trainer guide",
    "17 §3 (defaults); 02 §2",
)
def default_optimizer_is_adamw():
    from transformers import TrainingArguments

    optim = TrainingArguments(output_dir=_folder("optim")).optim
    built = make_trainer("optim").create_optimizer()
    name = type(built).__name__
    module = type(built).__module__.split(".")[0]
    value = getattr(optim, "value", optim)
    return "adamw" in name.lower(), f"optim = {value!r} -> {module}.{name}"


@probe(
    "average_tokens_across_devices_defaults_to_true",
    "`average_tokens_across_devices` defaults to True.",
    "course",
    "07 §5; 10 §3",
)
def average_tokens_across_devices_defaults_to_true():
    if "average_tokens_across_devices" not in field_names():
        raise CannotRun("TrainingArguments has no average_tokens_across_devices")
    from transformers import TrainingArguments

    value = TrainingArguments(output_dir=_folder("average")).average_tokens_across_devices
    return value is True, f"average_tokens_across_devices = {value}"


@probe(
    "disable_tqdm_true_at_warning",
    "At the default log level (WARNING), `disable_tqdm` defaults to True (printed dicts, no progress bar).",
    "Convenient-Trainer guide",
    "01 §8",
)
def disable_tqdm_true_at_warning():
    from transformers import TrainingArguments
    from transformers.utils import logging as hf_logging

    before = hf_logging.get_verbosity()
    try:
        hf_logging.set_verbosity_warning()
        at_warning = TrainingArguments(output_dir=_folder("tqdm")).disable_tqdm
        hf_logging.set_verbosity_error()
        at_error = TrainingArguments(output_dir=_folder("tqdm")).disable_tqdm
    finally:
        hf_logging.set_verbosity(before)
    return at_warning is True, f"disable_tqdm = {at_warning} at WARNING, {at_error} at ERROR"


@probe(
    "logging_first_step_evaluates",
    "`logging_first_step=True` logs and evaluates the first global step.",
    "Convenient-Trainer guide",
    "02 §3",
)
def logging_first_step_evaluates():
    steps = []

    class Evaluations(callback_base()):
        def on_evaluate(self, args, state, control, **kwargs):
            steps.append(state.global_step)

    trainer = make_trainer(
        "first_step",
        callbacks=[Evaluations()],
        eval_dataset=examples(4, seed=1),
        max_steps=3,
        logging_steps=10,
        logging_first_step=True,
        **{eval_key(): "steps"},
        eval_steps=10,
    )
    trainer.train()
    logged = [entry["step"] for entry in trainer.state.log_history if "loss" in entry]
    return 1 in steps and 1 in logged, f"loss logged at steps {logged}; evaluated at steps {steps}"


@probe(
    "logging_steps_count_optimizer_steps",
    "With gradient accumulation, step-based intervals count optimizer updates: `logging_steps=1` at accumulation 4 "
    "logs once every 4 batches.",
    "Convenient-Trainer guide",
    "02 §1",
)
def logging_steps_count_optimizer_steps():
    batches, logged_after = [0], []

    class Count(callback_base()):
        def on_substep_end(self, args, state, control, **kwargs):
            batches[0] += 1

        def on_step_end(self, args, state, control, **kwargs):
            batches[0] += 1

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs:
                logged_after.append(batches[0])

    make_trainer(
        "intervals",
        callbacks=[Count()],
        per_device_train_batch_size=2,
        gradient_accumulation_steps=4,
        logging_steps=1,
        max_steps=2,
    ).train()
    return logged_after == [4, 8], f"training loss logged after batches {logged_after}"


@probe(
    "eval_steps_defaults_to_logging_steps",
    "`eval_steps` defaults to `logging_steps`.",
    "Convenient-Trainer guide",
    "02 §3",
)
def eval_steps_defaults_to_logging_steps():
    args = arguments("eval_steps", logging_steps=7, **{eval_key(): "steps"})
    return args.eval_steps == 7, f"logging_steps=7 -> eval_steps = {args.eval_steps}"


@probe(
    "load_best_model_ignores_save_strategy",
    "With `load_best_model_at_end=True`, `save_strategy` is ignored (a save strategy that differs from the "
    "evaluation strategy is accepted).",
    "Convenient-Trainer guide",
    "02 §4; 11 §5",
)
def load_best_model_ignores_save_strategy():
    try:
        arguments("best", load_best_model_at_end=True, save_strategy="epoch", eval_steps=2, **{eval_key(): "steps"})
    except ValueError as error:
        return False, f"ValueError: {_line(error)}"
    return True, "eval every 2 steps with save_strategy='epoch' was accepted"


@probe(
    "prediction_loss_only_skips_metrics",
    "With `prediction_loss_only=True`, `compute_metrics` is not called.",
    "Convenient-Trainer guide",
    "02 §4; 04 §4",
)
def prediction_loss_only_skips_metrics():
    calls = []

    def metrics(prediction):
        calls.append(1)
        return {"seen": 1.0}

    result = make_trainer(
        "loss_only", prediction_loss_only=True, compute_metrics=metrics, eval_dataset=examples(8, seed=1)
    ).evaluate()
    return not calls, f"compute_metrics called {len(calls)} time(s); keys {sorted(result)[:3]}"


@probe(
    "max_steps_conflicts_with_epochs",
    "`max_steps` conflicts with `num_train_epochs`: set only one.",
    "Convenient-Trainer guide",
    "02 §1",
)
def max_steps_conflicts_with_epochs():
    try:
        trainer = make_trainer("duration", max_steps=2, num_train_epochs=10)
        trainer.train()
    except ValueError as error:
        return True, f"ValueError: {_line(error)}"
    return False, f"both accepted; max_steps won: {trainer.state.global_step} steps"


@probe(
    "fractional_epochs",
    "A fractional `num_train_epochs` runs that fraction of the last epoch.",
    "Convenient-Trainer guide",
    "02 §1",
)
def fractional_epochs():
    trainer = make_trainer("fraction", train_dataset=examples(8), max_steps=-1, num_train_epochs=1.5)
    trainer.train()
    return trainer.state.global_step == 3, f"1.5 epochs of 2 batches -> {trainer.state.global_step} steps"


@probe(
    "weight_decay_skips_bias_and_layernorm",
    "Weight decay applies to every parameter except biases and LayerNorm weights.",
    "Convenient-Trainer guide",
    "02 §2",
)
def weight_decay_skips_bias_and_layernorm():
    trainer = make_trainer("decay", weight_decay=0.01)
    optimizer = trainer.create_optimizer()
    names = {id(parameter): name for name, parameter in trainer.model.named_parameters()}
    no_decay = {names[id(p)] for group in optimizer.param_groups if group["weight_decay"] == 0 for p in group["params"]}
    expected = {name for name in names.values() if name.endswith("bias") or "LayerNorm" in name}
    return no_decay == expected, f"{len(no_decay)} tensors without decay, {len(expected)} biases and LayerNorm tensors"


@probe(
    "model_init_reproducible",
    "With `model_init`, two runs with the same seed are identical.",
    "Convenient-Trainer guide",
    "02 §5",
)
def model_init_reproducible():
    def model_init(*_):
        return _unseeded_model()  # its weights come from torch's generator, which the Trainer seeds

    runs = []
    for seed in (5, 5, 6):
        trainer = make_trainer("model_init", model=None, model_init=model_init, seed=seed)
        trainer.train()
        runs.append(losses(trainer))
    evidence = f"losses seed 5: {_rounded(runs[0])}, again: {_rounded(runs[1])}, seed 6: {_rounded(runs[2])}"
    return runs[0] == runs[1] != runs[2], evidence


def _unseeded_model():
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return BertForSequenceClassification(config)


@probe(
    "label_smoothing_changes_labels",
    "With `label_smoothing_factor`, `compute_metrics` receives smoothed labels (0 and 1 become ε/2 and 1 − ε/2).",
    "Convenient-Trainer guide",
    "02 §7; 04 §4",
)
def label_smoothing_changes_labels():
    received = {}

    def record(factor):
        def metrics(prediction):
            received[factor] = prediction.label_ids
            return {}

        return metrics

    import numpy as np

    for factor in (0.0, 0.1):
        make_trainer(
            "smoothing", label_smoothing_factor=factor, compute_metrics=record(factor), eval_dataset=examples(8, seed=1)
        ).evaluate()
    same = np.array_equal(received[0.0], received[0.1])
    return not same, f"labels with ε=0.1: {received[0.1][:4].tolist()} ({received[0.1].dtype}); unchanged: {same}"


@probe(
    "linear_schedule_keeps_a_floor",
    "The linear schedule never reaches 0: a very small rate is used as the final learning rate, read as the "
    "scheduler's rate after the last step. (Read as the rate the last update uses, it holds; the evidence shows "
    "both.)",
    "Convenient-Trainer guide",
    "03 §5",
)
def linear_schedule_keeps_a_floor():
    import torch
    from transformers import get_linear_schedule_with_warmup

    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = get_linear_schedule_with_warmup(optimizer, 0, 10)
    applied = []
    for _ in range(10):
        applied.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    final = scheduler.get_last_lr()[0]
    return final > 0, f"last applied rate {applied[-1]:.3g} (peak/10), rate after the last step {final}"


@probe(
    "overwrite_output_dir_false_resumes",
    "With `overwrite_output_dir=False` (or True), a Trainer whose `output_dir` holds a checkpoint resumes from it.",
    "Convenient-Trainer guide",
    "17 §3",
)
def overwrite_output_dir_false_resumes():
    folder = "resume"
    first = make_trainer(folder, max_steps=2, save_strategy="steps", save_steps=2)
    first.train()
    starts = []

    class Start(callback_base()):
        def on_train_begin(self, args, state, control, **kwargs):
            starts.append(state.global_step)

        def on_step_end(self, args, state, control, **kwargs):
            starts.append(state.global_step)

    extra = {"overwrite_output_dir": False} if "overwrite_output_dir" in field_names() else {}
    second = make_trainer(folder, max_steps=4, callbacks=[Start()], **extra)
    second.train()
    steps_run = len(starts) - 1
    resumed = steps_run < 4
    how = "overwrite_output_dir=False" if extra else "no overwrite_output_dir (removed)"
    return resumed, f"{how}: checkpoint-2 in output_dir, train() ran {steps_run} steps from step {starts[0]}"


@probe(
    "ignore_data_skip_resumes_at_the_interrupted_batch",
    "With `ignore_data_skip=True`, a resumed run continues from the batch where the first run was interrupted.",
    "Convenient-Trainer guide",
    "11 §3; 17 §3",
)
def ignore_data_skip_resumes_at_the_interrupted_batch():
    from transformers import Trainer

    class Batches(Trainer):
        def training_step(self, model, inputs, *args, **kwargs):
            self.seen.append(tuple(inputs["input_ids"][:, 1].tolist()))
            return super().training_step(model, inputs, *args, **kwargs)

    def run(**keywords):
        trainer = make_trainer(
            "skip", trainer_class=Batches, train_dataset=examples(16, seed=7), per_device_train_batch_size=2, **keywords
        )
        trainer.seen = []
        return trainer

    reference = run(max_steps=6, save_strategy="steps", save_steps=3)
    reference.train()
    resumed = run(max_steps=6, ignore_data_skip=True)
    try:
        resumed.train(resume_from_checkpoint=str(Path(reference.args.output_dir) / "checkpoint-3"))
    except Exception as error:
        if "Weights only load failed" in str(error):
            raise CannotRun(
                "this release resumes by loading the checkpoint's RNG state with torch.load, which torch 2.13 "
                "refuses (weights_only=True by default)"
            ) from error
        raise
    first = resumed.seen[0]
    where = (
        "the interrupted run's batch 4"
        if first == reference.seen[3]
        else "the epoch's first batch again"
        if first == reference.seen[0]
        else "another batch"
    )
    return first == reference.seen[3], f"the resumed step 4 trained on {where}"


@probe(
    "get_resumed_dataloader_decides_the_resumed_batches",
    "A run resumed mid-epoch asks `Trainer.get_resumed_dataloader(dataloader, num_batches)` for its data, once, "
    "with the batches to skip; a subclass that overrides it decides which batches the resumed steps train on.",
    "course",
    "11 §3",
)
def get_resumed_dataloader_decides_the_resumed_batches():
    from transformers import Trainer

    if not hasattr(Trainer, "get_resumed_dataloader"):
        raise CannotRun("Trainer has no get_resumed_dataloader (a resume skips batches inside train())")

    class Rewinding(Trainer):
        """Asks the default for nothing: restarts the epoch, so the override visibly decides."""

        def get_resumed_dataloader(self, dataloader, num_batches):
            self.asked.append(num_batches)
            return dataloader

        def training_step(self, model, inputs, *args, **kwargs):
            self.seen.append(tuple(inputs["input_ids"][:, 1].tolist()))
            return super().training_step(model, inputs, *args, **kwargs)

    def run(**keywords):
        trainer = make_trainer(
            "resumed_dataloader",
            trainer_class=Rewinding,
            train_dataset=examples(16, seed=7),
            per_device_train_batch_size=2,
            **keywords,
        )
        trainer.seen, trainer.asked = [], []
        return trainer

    reference = run(max_steps=6, save_strategy="steps", save_steps=3)
    reference.train()
    resumed = run(max_steps=6)
    resumed.train(resume_from_checkpoint=str(Path(reference.args.output_dir) / "checkpoint-3"))
    holds = resumed.asked == [3] and resumed.seen[0] == reference.seen[0]
    return holds, f"called with num_batches={resumed.asked}; resumed step 4 trained on reference batch " + (
        "1 (the override's choice)" if resumed.seen[0] == reference.seen[0] else "another batch"
    )


@probe(
    "from_pretrained_turns_kernels_on",
    "A model loaded with `from_pretrained` and no `use_kernels` argument has `use_kernels` switched on.",
    "course",
    "09 §7",
)
def from_pretrained_turns_kernels_on():
    import importlib.util

    model = tiny_model()
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        loaded = type(model).from_pretrained(folder)
    value = getattr(loaded, "use_kernels", "no such attribute")
    installed = importlib.util.find_spec("kernels") is not None
    return value is True, f"use_kernels after from_pretrained: {value}; the kernels package installed: {installed}"
