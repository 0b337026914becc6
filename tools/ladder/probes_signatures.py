"""Ladder probes: the signatures the lessons teach (lessons 01, 05, 07, 08) and the removed or renamed
``TrainingArguments`` (lessons 02, 03, 11). Loaded by ``probes.py``; the kit is :mod:`probe_kit`."""

from __future__ import annotations

from probe_kit import (
    CannotRun,
    _folder,
    _Heard,
    _line,
    _signature,
    accepts_argument,
    arguments,
    callback_base,
    examples,
    field_names,
    losses,
    make_trainer,
    probe,
    tiny_tokenizer,
    trainer_accepts,
)


# ---------------------------------------------------------------------------------------------------------------
# Signatures the lessons teach (lessons 01, 05, 07, 08)
# ---------------------------------------------------------------------------------------------------------------
@probe(
    "training_step_two_arguments",
    "A `training_step(self, model, inputs)` override (4.8.2's signature) trains.",
    "Short customisation post; Long customisation post",
    "08 §1 (PrintGradientTrainer, GradientMonitorTrainer)",
)
def training_step_two_arguments():
    from transformers import Trainer

    class PostTrainer(Trainer):
        def training_step(self, model, inputs):
            model.train()
            inputs = self._prepare_inputs(inputs)
            loss = self.compute_loss(model, inputs)
            loss.backward()
            return loss.detach()

    trainer = make_trainer("training_step_two", trainer_class=PostTrainer)
    try:
        trainer.train()
    except TypeError as error:
        return False, f"TypeError on the first step: {_line(error)}"
    return (
        True,
        f"trained {trainer.state.global_step} steps; the loop calls training_step({_signature(Trainer.training_step)})",
    )


@probe(
    "compute_loss_three_arguments",
    "A `compute_loss(self, model, inputs, return_outputs=False)` override (4.8.2's signature) trains and evaluates.",
    "Long customisation post",
    "07 §1 (MultiTaskTrainer)",
)
def compute_loss_three_arguments():
    from transformers import Trainer

    class PostTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False):
            outputs = model(**inputs)
            return (outputs.loss, outputs) if return_outputs else outputs.loss

    trainer = make_trainer("compute_loss_three", trainer_class=PostTrainer, eval_dataset=examples(8, seed=1))
    try:
        trainer.train()
        metrics = trainer.evaluate()
    except TypeError as error:
        return False, f"TypeError: {_line(error)}"
    return True, f"trained {trainer.state.global_step} steps, eval_loss {metrics['eval_loss']:.4f}"


@probe(
    "num_items_in_batch_reaches_compute_loss",
    "`compute_loss` receives `num_items_in_batch`, the number of labels in the whole accumulated batch.",
    "Subclassing article",
    "07 §1",
)
def num_items_in_batch_reaches_compute_loss():
    from transformers import Trainer

    seen = []

    class Recording(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, **keywords):
            seen.append(keywords.get("num_items_in_batch", "absent"))
            outputs = model(**inputs)
            return (outputs.loss, outputs) if return_outputs else outputs.loss

    make_trainer("num_items", trainer_class=Recording, max_steps=1, gradient_accumulation_steps=2).train()
    value = seen[0]
    if value == "absent":
        return False, "compute_loss was called without num_items_in_batch"
    value = int(value) if value is not None else None
    return value == 8, f"num_items_in_batch = {value} for 2 micro-batches of 4 labels"


@probe(
    "compute_loss_func_argument",
    "`Trainer(compute_loss_func=...)` is accepted and the function computes the training loss.",
    "Subclassing article",
    "07 §3 (compute_loss_func); 01 §7",
)
def compute_loss_func_argument():
    import torch

    if not trainer_accepts("compute_loss_func"):
        raise CannotRun("Trainer.__init__ has no compute_loss_func parameter")
    calls = []

    def doubled(outputs, labels, num_items_in_batch=None):
        calls.append(num_items_in_batch)
        return 2 * torch.nn.functional.cross_entropy(outputs.logits, labels)

    plain = make_trainer("loss_func_plain", max_steps=1)
    plain.train()
    custom = make_trainer("loss_func", max_steps=1, compute_loss_func=doubled)
    custom.train()
    ratio = losses(custom)[0] / losses(plain)[0]
    holds = len(calls) == 1 and abs(ratio - 2) < 2e-3  # 4.x logs the loss rounded to 4 decimals
    return holds, f"called {len(calls)} time(s); logged loss / plain loss = {ratio:.4f}"


@probe(
    "processing_class_argument",
    "`Trainer(processing_class=tokenizer)` is accepted.",
    "course",
    "01 §4",
)
def processing_class_argument():
    if not trainer_accepts("processing_class"):
        raise CannotRun("Trainer.__init__ has no processing_class parameter")
    trainer = make_trainer("processing_class", processing_class=tiny_tokenizer())
    return True, f"accepted; data collator {type(trainer.data_collator).__name__}"


@probe(
    "tokenizer_argument",
    "`Trainer(tokenizer=tokenizer)` is accepted (the 4.x way).",
    "Convenient-Trainer guide",
    "01 §4",
)
def tokenizer_argument():
    heard = _Heard()
    try:
        with heard:
            trainer = make_trainer("tokenizer_argument", tokenizer=tiny_tokenizer())
    except TypeError as error:
        return False, f"TypeError: {_line(error)}"
    said = heard.summary()
    return True, f"accepted, collator {type(trainer.data_collator).__name__}" + (f"; it warns: {said}" if said else "")


@probe(
    "callback_kwarg_tokenizer",
    "Every callback event receives the tokenizer as the keyword `tokenizer`.",
    "Callbacks notes",
    "05 §3 (tokenizer among the event kwargs)",
)
def callback_kwarg_tokenizer():
    seen: dict[str, set] = {}

    class Keys(callback_base()):
        def on_train_begin(self, args, state, control, **kwargs):
            seen["on_train_begin"] = set(kwargs)

    keyword = "processing_class" if trainer_accepts("processing_class") else "tokenizer"
    make_trainer("callback_tokenizer", callbacks=[Keys()], **{keyword: tiny_tokenizer()}).train()
    keys = seen["on_train_begin"]
    names = sorted(keys & {"tokenizer", "processing_class"})
    return "tokenizer" in keys, f"on_train_begin kwargs include {names or 'neither tokenizer nor processing_class'}"


@probe(
    "default_collator_choice",
    "With a tokenizer the default collator is `DataCollatorWithPadding`; without, `default_data_collator`.",
    "Convenient-Trainer guide",
    "01 §2",
)
def default_collator_choice():
    from transformers import DataCollatorWithPadding, default_data_collator

    keyword = "processing_class" if trainer_accepts("processing_class") else "tokenizer"
    with_tokenizer = make_trainer("collator_with", **{keyword: tiny_tokenizer()}).data_collator
    without = make_trainer("collator_without").data_collator
    holds = isinstance(with_tokenizer, DataCollatorWithPadding) and without is default_data_collator
    return holds, f"with {keyword}: {type(with_tokenizer).__name__}; without: {getattr(without, '__name__', without)}"


@probe(
    "collator_pads_to_max_length",
    "With a tokenizer, batches are padded to the maximum length, read literally: one width for every batch, wider "
    "than its longest review. (Read as each batch padded to its own longest review, it holds; the evidence shows "
    "both.)",
    "Convenient-Trainer guide",
    "01 §2",
)
def collator_pads_to_max_length():
    keyword = "processing_class" if trainer_accepts("processing_class") else "tokenizer"
    data = examples(8, length=12, variable=True, seed=3)
    trainer = make_trainer("padding", train_dataset=data, **{keyword: tiny_tokenizer()})
    batch = next(iter(trainer.get_train_dataloader()))
    width = int(batch["input_ids"].shape[1])
    longest_in_batch = int(batch["attention_mask"].sum(dim=1).max())
    return (
        width > longest_in_batch,
        f"batch width {width}; the longest review in that batch has {longest_in_batch} tokens",
    )


@probe(
    "plain_function_collator_refused",
    "A plain function is not accepted as `data_collator`.",
    "Convenient-Trainer guide",
    "01 §3",
)
def plain_function_collator_refused():
    import torch

    def stack(rows):
        return {key: torch.tensor([row[key] for row in rows]) for key in rows[0]}

    trainer = make_trainer("function_collator", data_collator=stack)
    trainer.train()
    return False, f"a plain function collated every batch: {trainer.state.global_step} steps trained"


@probe(
    "defaults_batch_lr_seed",
    "`per_device_train_batch_size` defaults to 8, `learning_rate` to 5e-05, and `seed` to 42.",
    "Convenient-Trainer guide",
    "00 §5",
)
def defaults_batch_lr_seed():
    from transformers import TrainingArguments

    args = TrainingArguments(output_dir=_folder("defaults"))
    values = (args.per_device_train_batch_size, args.learning_rate, args.seed)
    return values == (8, 5e-05, 42), f"batch {values[0]}, learning rate {values[1]}, seed {values[2]}"


# ---------------------------------------------------------------------------------------------------------------
# Removed and renamed TrainingArguments (lessons 02, 03, 11)
# ---------------------------------------------------------------------------------------------------------------
def _argument_probe(name: str, value, where: str, source: str = "Convenient-Trainer guide") -> None:
    @probe(f"argument_{name}", f"`TrainingArguments` accepts `{name}`.", source, where)
    def accepts():
        return accepts_argument(name, value)


_argument_probe("evaluation_strategy", "steps", "17 §1")
_argument_probe("warmup_ratio", 0.1, "03 §4; 17 §1")
_argument_probe("overwrite_output_dir", True, "17 §1")
_argument_probe("group_by_length", True, "02 §6; 09 §2")
_argument_probe("no_cuda", True, "17 §1")
_argument_probe("logging_dir", "logs", "17 §1")
_argument_probe("fp16_backend", "auto", "17 §3 (fp16_backend, fp16_opt_level)")
_argument_probe("fp16_opt_level", "O1", "17 §3 (fp16_backend, fp16_opt_level)")
_argument_probe("per_gpu_train_batch_size", 4, "17 §1; 10 §1")
_argument_probe("include_inputs_for_metrics", True, "17 §1", source="course")
# The names that replace them: from which release on can ported code use them?
_argument_probe("eval_strategy", "steps", "17 §1", source="course")
_argument_probe("use_cpu", True, "17 §1", source="course")
_argument_probe("train_sampling_strategy", "group_by_length", "02 §6; 09 §2", source="course")
_argument_probe("include_for_metrics", ["inputs"], "17 §1; 04 §1", source="course")


def _value_probe(name: str, value: str, where: str) -> None:
    """A value of an enum-valued field that the ladder's inventory saw go (``argument_choices``)."""

    @probe(f"value_{name}_{value}", f"`TrainingArguments` accepts `{name}={value!r}`.", "course", where)
    def accepts():
        try:
            return accepts_argument(name, value)
        except ValueError as error:
            return False, f"ValueError: {_line(error)}"


_value_probe("optim", "adamw_hf", "17 §1")
_value_probe("optim", "adamw_apex_fused", "17 §1")


@probe(
    "warmup_steps_overrides_warmup_ratio",
    "`warmup_steps` overrides any effect of `warmup_ratio`.",
    "Convenient-Trainer guide",
    "03 §4",
)
def warmup_steps_overrides_warmup_ratio():
    if "warmup_ratio" not in field_names():
        raise CannotRun("TrainingArguments has no warmup_ratio")
    args = arguments("warmup_both", warmup_ratio=0.5, warmup_steps=3)
    steps = args.get_warmup_steps(100)
    return steps == 3, f"warmup_ratio=0.5 and warmup_steps=3 -> {steps} warmup steps of 100"


@probe(
    "warmup_steps_takes_a_fraction",
    "`warmup_steps` below 1 is read as a fraction of the training steps.",
    "course",
    "03 §4",
)
def warmup_steps_takes_a_fraction():
    try:
        args = arguments("warmup_fraction", warmup_steps=0.1)
    except (TypeError, ValueError) as error:
        return False, f"{type(error).__name__}: {_line(error)}"
    steps = args.get_warmup_steps(100)
    return steps == 10, f"warmup_steps=0.1 -> {steps} warmup steps of 100"
