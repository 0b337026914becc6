"""Lesson 09's rules (GPU and performance), tried beyond the lesson's run where a CPU can: the accumulation line on
three stock classifiers, checkpointing left on in a reused BERT and Llama."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from rule_training import MODELS, arguments, first_step, trainer
from tiny_training import TinyModel

from exercises.checks import fixtures


@pytest.mark.rule(
    lesson="09",
    section="The pattern",
    text="the stock model averages its loss over the micro-batch, so the Trainer must divide by the accumulation "
    "steps itself (`model_accepts_loss_kwargs = False`), or the loss and gradients come out twice too large",
    covers=["BERT, DistilBERT and Llama classifiers", "8 rows as 4 x 2 against 8 x 1"],
)
@pytest.mark.parametrize("model", sorted(MODELS))
def test_accumulation_two_doubles_until_the_trainer_divides(tmp_path: Any, model: str) -> None:
    full = first_step(tmp_path / "full", model, 8, 8, 1, None)
    stock = first_step(tmp_path / "stock", model, 8, 4, 2, None)
    fixed = first_step(tmp_path / "fixed", model, 8, 4, 2, False)
    assert stock == pytest.approx((2 * full[0], 2 * full[1]), rel=1e-4)
    assert fixed == pytest.approx(full, rel=1e-4)


@pytest.mark.rule(
    lesson="09",
    section="4. Gradient checkpointing",
    text="the Trainer switches checkpointing on in the model and never off",
    covers=[
        "BERT and Llama classifiers",
        "activation_checkpointing=True and gradient_checkpointing=True",
        "a second Trainer without it",
    ],
)
@pytest.mark.rule(
    lesson="09",
    section="4. Gradient checkpointing",
    text="`gradient_checkpointing=True` is another name for the same switch (it warns that it will go).",
    covers=["BERT and Llama classifiers"],
)
@pytest.mark.parametrize("model", ["bert", "llama"])
@pytest.mark.parametrize("switch", ["activation_checkpointing", "gradient_checkpointing"])
def test_checkpointing_stays_on_in_a_reused_model(tmp_path: Any, model: str, switch: str, recwarn: Any) -> None:
    built = MODELS[model](seed=0)
    assert not built.is_gradient_checkpointing
    data = fixtures.random_ids(8)
    trainer(tmp_path / "on", model=built, train_dataset=data, max_steps=1, **{switch: True}).train()
    assert built.is_gradient_checkpointing
    if switch == "gradient_checkpointing":
        assert any("gradient_checkpointing" in str(w.message) for w in recwarn.list)
    trainer(tmp_path / "plain", model=built, train_dataset=data, max_steps=1).train()
    assert built.is_gradient_checkpointing  # never switched off


@pytest.mark.rule(
    lesson="09",
    section="Recap",
    text="Grouped dynamic padding left well under half the padding of `max_length`: the collator pads, the sampler "
    "groups.",
    covers=["512 course reviews", "batches of 8 and 32", "max_length 64 and 128", "the Trainer's own dataloader"],
)
@pytest.mark.parametrize("batch", [8, 32])
@pytest.mark.parametrize("max_length", [64, 128])
def test_grouped_dynamic_padding_pads_under_half(tmp_path: Any, batch: int, max_length: int) -> None:
    from transformers import DataCollatorWithPadding

    from helpers.data import padding_stats

    reviews = fixtures.reviews(count=512, max_length=max_length).remove_columns(["label"])
    tokenizer = fixtures.tokenizer()

    def padded(folder: str, collator: Any, **settings: Any) -> int:
        run = trainer(
            tmp_path / folder,
            model=fixtures.tiny_model(seed=0),
            train_dataset=reviews,
            per_device_train_batch_size=batch,
            data_collator=collator,
            **settings,
        )
        stats = padding_stats(run.get_train_dataloader())
        return stats["tokens"] - stats["real_tokens"]

    full = padded("full", DataCollatorWithPadding(tokenizer, padding="max_length", max_length=max_length))
    grouped = padded("grouped", DataCollatorWithPadding(tokenizer), train_sampling_strategy="group_by_length")
    assert grouped < 0.5 * full, (grouped, full)


def _linear_dtypes(model: Any) -> list[torch.dtype]:
    """Record the output dtype of every ``nn.Linear`` forward of ``model`` (a forward hook); returns the list."""
    seen: list[torch.dtype] = []
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            module.register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    return seen


def _precision_run(tmp_path: Any, model: str, built: Any = None, **settings: Any) -> tuple[Any, set[torch.dtype]]:
    """Train ``model`` ("tiny" or a key of MODELS, or ``built``) 2 steps with ``settings``; the Trainer and the
    dtypes its linear layers computed in."""
    built = built if built is not None else TinyModel() if model == "tiny" else MODELS[model](seed=0)
    seen = _linear_dtypes(built)
    data = None if model == "tiny" else fixtures.random_ids(8)
    run = trainer(tmp_path, model=built, train_dataset=data, max_steps=2, **settings)
    run.train()
    return run, set(seen)


@pytest.mark.rule(
    lesson="09",
    section="Recap",
    text="bf16 on Ampere and newer, fp16 on a T4, `torch_compile` on long GPU runs; workers only for costly batches.",
    covers=[
        "CPU only (no GPU here): TinyModel and a BERT classifier, 2 steps each",
        "bf16=True: linear layers compute in bf16, weights and optimizer state stay fp32, no scaler",
        "fp16=True on a CPU: accepted, but computes in fp32 with no scaler",
        "bf16 and fp16 together refused",
    ],
)
@pytest.mark.rule(
    lesson="09",
    section="7. What to switch on",
    text="| mixed precision | `fp16=True` | `bf16=True` | off (fp32) |",
    covers=[
        "CPU column only: fp16=True computes in fp32 (so off is what a CPU gets), bf16=True does run bf16 autocast",
        "TinyModel and a BERT classifier",
    ],
)
@pytest.mark.parametrize("model", ["tiny", "bert"])
def test_precision_switches_on_a_cpu(tmp_path: Any, model: str) -> None:
    plain, plain_dtypes = _precision_run(tmp_path / "fp32", model)
    assert plain_dtypes == {torch.float32}
    bf16, bf16_dtypes = _precision_run(tmp_path / "bf16", model, bf16=True)
    assert bf16_dtypes == {torch.bfloat16}
    assert {p.dtype for p in bf16.model.parameters()} == {torch.float32}
    assert {p.dtype for group in bf16.optimizer.param_groups for p in group["params"]} == {torch.float32}
    assert {s.dtype for state in bf16.optimizer.state.values() for s in state.values() if s.dim()} == {torch.float32}
    assert bf16.accelerator.scaler is None
    fp16, fp16_dtypes = _precision_run(tmp_path / "fp16", model, fp16=True)
    assert fp16.accelerator.mixed_precision == "fp16" and fp16_dtypes == {torch.float32}  # silently fp32 on a CPU
    assert fp16.accelerator.scaler is None
    with pytest.raises(ValueError, match="fp16 and bf16"):
        arguments(tmp_path / "both", bf16=True, fp16=True)


@pytest.mark.rule(
    lesson="09",
    section="5. Precision and torch_compile",
    text="a later Trainer with `bf16=True` or `torch_compile=True` on the same model object silently keeps fp32 and "
    "the eager forward",
    covers=[
        "bf16=True on a CPU: TinyModel and a BERT classifier trained by a plain Trainer first",
        "the fresh-model control computes in bf16",
        "torch_compile not tried (compiling is too slow for a unit test on this CPU)",
    ],
)
@pytest.mark.parametrize("model", ["tiny", "bert"])
def test_a_reused_model_keeps_fp32(tmp_path: Any, model: str) -> None:
    built = TinyModel() if model == "tiny" else MODELS[model](seed=0)
    _precision_run(tmp_path / "first", model, built=built)
    _, reused = _precision_run(tmp_path / "again", model, built=built, bf16=True)
    assert reused == {torch.float32}
    _, fresh = _precision_run(tmp_path / "fresh", model, bf16=True)
    assert fresh == {torch.bfloat16}


@pytest.mark.rule(
    lesson="09",
    section="7. What to switch on",
    text="| `tf32=True` | n/a | on | n/a |",
    covers=["CPU column only: `TrainingArguments(tf32=True)` is refused on a CPU with an error naming Ampere"],
)
def test_tf32_is_refused_without_an_ampere_gpu(tmp_path: Any) -> None:
    if torch.cuda.is_available():
        pytest.skip("this case is the CPU column")
    with pytest.raises(ValueError, match="Ampere"):
        arguments(tmp_path, tf32=True)


@pytest.mark.rule(
    lesson="09",
    section="Recap",
    text="bf16 on Ampere and newer, fp16 on a T4, `torch_compile` on long GPU runs; workers only for costly batches.",
    covers=[
        "torch_compile=True on a CPU: accepted, the accelerator gets the inductor backend, nothing compiles before "
        "train(), the model object is left as it is; compile time and speed not measured here",
    ],
)
@pytest.mark.rule(
    lesson="09",
    section="7. What to switch on",
    text="| `torch_compile` | long runs | long runs | not measured |",
    covers=["what the switch changes in the Trainer's objects on a CPU (not its cost or speed)"],
)
def test_torch_compile_is_a_switch_for_the_accelerator(tmp_path: Any) -> None:
    model = TinyModel()
    plain = trainer(tmp_path / "plain", model=TinyModel())
    assert plain.accelerator.state.dynamo_plugin.backend.value == "NO"  # the state is shared: read it at once
    compiled = trainer(tmp_path / "compiled", model=model, torch_compile=True)
    assert compiled.accelerator.state.dynamo_plugin.backend.value == "INDUCTOR"
    assert compiled.args.torch_compile_backend == "inductor"
    assert compiled.model is model and type(compiled.model_wrapped) is TinyModel  # not compiled yet


@pytest.mark.rule(
    lesson="09",
    section="6. Dataloader workers",
    text="For tokenized data in memory, starting the workers usually costs more than they save: leave them at 0.",
    covers=[
        "what workers change: the Trainer's DataLoader gets num_workers=2 and yields the same batches, in the same "
        "order, as with 0 (128 tokenized reviews, batch 8, grouped by length); the cost is timed in the lesson, "
        "not asserted here",
    ],
)
@pytest.mark.rule(
    lesson="09",
    section="7. What to switch on",
    text="| dataloader workers | if collation is costly | same | off for tokenized data |",
    covers=["0 and 2 workers give the same batches, so the choice is only about time"],
)
def test_workers_change_only_who_collates(tmp_path: Any) -> None:
    from transformers import DataCollatorWithPadding

    reviews = fixtures.reviews(count=128, max_length=64).remove_columns(["label"])

    def batches(folder: str, workers: int) -> list[torch.Tensor]:
        run = trainer(
            tmp_path / folder,
            model=fixtures.tiny_model(seed=0),
            train_dataset=reviews,
            per_device_train_batch_size=8,
            data_collator=DataCollatorWithPadding(fixtures.tokenizer()),
            train_sampling_strategy="group_by_length",
            dataloader_num_workers=workers,
        )
        loader = run.get_train_dataloader()
        assert loader.num_workers == workers
        return [batch["input_ids"] for batch in loader]

    none, two = batches("none", 0), batches("two", 2)
    assert len(none) == len(two) == 16
    assert all(torch.equal(a, b) for a, b in zip(none, two, strict=True))


def _attention_blocks(model: Any) -> list[Any]:
    """The attention block inside each layer of a BERT, DistilBERT or Llama classifier (what checkpointing
    recomputes)."""
    return [layer.attention if hasattr(layer, "attention") else layer.self_attn for layer in _layers(model)]


def _layers(model: Any) -> Any:
    base = getattr(model, model.base_model_prefix)
    return (
        base.layers
        if hasattr(base, "layers")
        else base.transformer.layer
        if hasattr(base, "transformer")
        else base.encoder.layer
    )


@pytest.mark.rule(
    lesson="09",
    section="Recap",
    text="Accumulation and checkpointing both buy activation memory: with smaller passes, or a second forward.",
    covers=[
        "BERT, DistilBERT and Llama classifiers",
        "bytes autograd keeps: a micro-batch of 4 keeps under 0.6 x those of the batch of 8",
        "activation_checkpointing=True: every attention block runs forward twice in a training step (2 steps)",
    ],
)
@pytest.mark.parametrize("model", sorted(MODELS))
def test_accumulation_and_checkpointing_buy_activation_memory(tmp_path: Any, model: str) -> None:
    from helpers.performance import forward_calls, saved_tensor_bytes

    built = MODELS[model](seed=0)
    data = fixtures.random_ids(8)
    batch = next(
        iter(
            trainer(
                tmp_path / "batch", model=built, train_dataset=data, per_device_train_batch_size=8
            ).get_train_dataloader()
        )
    )
    half = {key: value[:4] for key, value in batch.items()}
    assert saved_tensor_bytes(built, half) < 0.6 * saved_tensor_bytes(built, batch)

    def calls(folder: str, **settings: Any) -> int:
        fresh = MODELS[model](seed=0)
        run = trainer(tmp_path / folder, model=fresh, train_dataset=data, per_device_train_batch_size=4, **settings)
        with forward_calls(_attention_blocks(fresh)) as counted:
            run.train()
        return counted.count

    layers = len(_layers(built))
    assert calls("plain") == 2 * layers
    assert calls("checkpointed", activation_checkpointing=True) == 2 * 2 * layers


@pytest.mark.rule(
    lesson="09",
    section="5. Precision and torch_compile",
    text="On a CPU, `bf16=True` runs under CPU autocast too, while `fp16=True` is accepted and changes nothing: no "
    "autocast, no scaler, fp32 throughout.",
    covers=[
        "BERT and Llama classifiers",
        "accumulation 1 and 2 (uneven last micro-batch)",
        "the dtype of the head's output inside forward; the weights after training; the logged losses against fp32",
    ],
)
@pytest.mark.parametrize(("model", "accumulation"), [("bert", 1), ("llama", 2)])
def test_fp16_on_a_cpu_changes_nothing_bf16_autocasts(tmp_path: Any, model: str, accumulation: int) -> None:
    from rule_training import ids

    runs = {}
    for name, precision in (("fp32", {}), ("fp16", {"fp16": True}), ("bf16", {"bf16": True})):
        built, seen = MODELS[model](seed=0), []
        head = [module for module in built.modules() if isinstance(module, torch.nn.Linear)][-1]
        head.register_forward_hook(  # inside the forward (accelerate casts the model's outputs back to fp32)
            lambda module, args, output, seen=seen: seen.append((output.dtype, torch.is_autocast_enabled("cpu")))
        )
        run = trainer(
            tmp_path / name,
            model=built,
            train_dataset=ids(7),
            gradient_accumulation_steps=accumulation,
            logging_strategy="steps",
            logging_steps=1,
            **precision,
        )
        run.train()
        losses = [entry["loss"] for entry in run.state.log_history if "loss" in entry]
        runs[name] = (set(seen), losses, {p.dtype for p in run.model.parameters()}, run.accelerator.scaler)
    assert runs["fp16"][0] == runs["fp32"][0] == {(torch.float32, False)}
    assert runs["fp16"][1] == runs["fp32"][1] and runs["fp16"][3] is None
    assert runs["bf16"][0] == {(torch.bfloat16, True)} and runs["bf16"][1] != runs["fp32"][1]
    assert runs["fp16"][2] == runs["bf16"][2] == {torch.float32}


@pytest.mark.rule(
    lesson="09",
    section="6. Dataloader workers",
    text="`auto_find_batch_size=True` starts at `per_device_train_batch_size` and, each time training runs out of "
    "memory, multiplies the batch by 0.9 (rounded down) and starts again",
    covers=[
        "a pretend CUDA out-of-memory error above 40 rows, starting at 64: 64, 57, 51, 45, 40",
        "accumulation 1 and 2 (an uneven last micro-batch of 200 rows)",
    ],
)
@pytest.mark.rule(
    lesson="09",
    section="6. Dataloader workers",
    text="It keeps `gradient_accumulation_steps`, so each update then takes fewer reviews.",
    covers=["accumulation 1 and 2: 40 and 80 rows an update, not 64 and 128", "args keep the batch asked for"],
)
@pytest.mark.parametrize("accumulation", [1, 2])
def test_auto_find_batch_size_shrinks_the_batch_and_keeps_accumulation(tmp_path: Any, accumulation: int) -> None:
    class Sized(TinyModel):
        def __init__(self) -> None:
            super().__init__()
            self.sizes: list[int] = []

        def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
            self.sizes.append(len(x))
            if len(x) > 40:
                raise torch.OutOfMemoryError("CUDA out of memory. (pretend)")
            return super().forward(x, labels)

    model = Sized()
    run = trainer(
        tmp_path,
        model=model,
        rows=200,
        per_device_train_batch_size=64,
        gradient_accumulation_steps=accumulation,
        auto_find_batch_size=True,
        max_steps=2,
    )
    run.train()
    tried = list(dict.fromkeys(model.sizes))
    assert tried == [64, 57, 51, 45, 40]
    assert model.sizes.count(40) == 2 * accumulation  # 2 updates of `accumulation` micro-batches of 40
    assert run.args.gradient_accumulation_steps == accumulation and run.args.per_device_train_batch_size == 64


@pytest.mark.rule(
    lesson="09",
    section="6. Dataloader workers",
    text="`dataloader_pin_memory=True` (the default) puts batches in page-locked memory for faster copies to a GPU; "
    "without one it does nothing, and `use_cpu=True` switches it off.",
    covers=[
        "this CPU-only machine: use_cpu=True turns the argument and the loader's pin_memory off",
        "use_cpu=False: the loader asks for pinning, and its batches are the same tensors, not pinned",
        "accumulation 1 and 3",
    ],
)
@pytest.mark.parametrize("accumulation", [1, 3])
def test_pin_memory_does_nothing_without_a_gpu(tmp_path: Any, accumulation: int) -> None:
    if torch.cuda.is_available():
        pytest.skip("the rule's CPU half: a GPU pins")
    loaders = {}
    for cpu in (True, False):
        run = trainer(tmp_path / str(cpu), rows=9, use_cpu=cpu, gradient_accumulation_steps=accumulation)
        assert run.args.dataloader_pin_memory is (not cpu)
        loader = run.get_train_dataloader()
        assert loader.pin_memory is (not cpu)
        loaders[cpu] = [batch for batch in loader]
    assert len(loaders[True]) == len(loaders[False]) == 5
    for pinned_or_not, plain in zip(loaders[False], loaders[True], strict=True):
        assert torch.equal(pinned_or_not["x"], plain["x"]) and not pinned_or_not["x"].is_pinned()
