"""An instrument that records, in calling order, the Trainer methods a learner can override and the callback
events, nested as they ran: the data behind lesson 05's loop map (:func:`helpers.plots.loop_map.plot_loop_map`).

- :class:`LoopRecorder`: ``recorder.trainer_class()`` is a Trainer subclass whose methods note each call;
  ``recorder.callback()`` notes every event; both write :class:`LoopCall` items to ``recorder.calls``.
- :func:`record_loop_map`: one tiny, fixed run (CPU, fp32) recorded that way; the same map on every machine.

Lesson 05 and later lessons import them from here.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable
from typing import Any

from transformers import (
    AutoConfig,
    AutoModelForSequenceClassification,
    DataCollatorWithPadding,
    Trainer,
    TrainerCallback,
    TrainingArguments,
)

import helpers
from helpers.callback_events import callback_event_names
from helpers.models import load_tokenizer, local_model_dir

# the calls you make (train, predict) and the methods the lessons override; a
# checkpoint is _save_checkpoint (it calls save_model); log() wraps every on_log
LOOP_METHODS: tuple[str, ...] = (
    "train",
    "get_train_dataloader",
    "get_eval_dataloader",
    "get_test_dataloader",
    "create_optimizer",
    "create_scheduler",
    "training_step",
    "compute_loss",
    "prediction_step",
    "evaluate",
    "predict",
    "_save_checkpoint",
    "save_model",
    "log",
)


@dataclasses.dataclass(frozen=True)
class LoopCall:
    """One recorded call of a Trainer `method` or a callback `event`: `depth` counts
    the recorded methods still running, `end` is the index of the last call made
    before a method returned (an event's `end` is its own index)."""

    index: int
    kind: str
    name: str
    depth: int
    global_step: int
    end: int


class LoopCalls:
    """A list of LoopCall, `self.calls`: note() adds one, three methods read them."""

    def __init__(self) -> None:
        self.calls: list[LoopCall] = []
        self.running: list[int] = []  # the method calls not returned yet

    def note(self, kind: str, name: str, step: int) -> int:
        """Append a LoopCall nested in the methods still running; return its index."""
        index = len(self.calls)
        depth = len(self.running)
        self.calls.append(LoopCall(index, kind, name, depth, int(step), index))
        return index

    def names(self) -> list[str]:
        """The recorded names in calling order."""
        return [call.name for call in self.calls]

    def first(self, name: str) -> int:
        """The index of the first call of `name` (KeyError if it was never called)."""
        for call in self.calls:
            if call.name == name:
                return call.index
        raise KeyError(f"{name!r} was not called; recorded: {sorted(set(self.names()))}.")

    def inside(self, name: str) -> list[str]:
        """The names called while the first call of method `name` ran, in order."""
        call = self.calls[self.first(name)]
        if call.kind != "method":
            raise ValueError(f"{name!r} is a callback event; only a method has calls inside.")
        return [inner.name for inner in self.calls[call.index + 1 : call.end + 1]]


def recording_method(recorder: LoopCalls, base: type[Trainer], name: str) -> Callable[..., Any]:
    """`base`'s method `name`, noting its calls in `recorder` (a LoopRecorder)."""
    original = getattr(base, name)

    @functools.wraps(original)
    def method(trainer: Trainer, *args: Any, **kwargs: Any) -> Any:
        index = recorder.note("method", name, trainer.state.global_step)
        recorder.running.append(index)
        try:
            return original(trainer, *args, **kwargs)
        finally:  # the last call made before this one returned
            recorder.running.pop()
            end = len(recorder.calls) - 1
            recorder.calls[index] = dataclasses.replace(recorder.calls[index], end=end)

    return method


class LoopRecorder(LoopCalls):
    """Use `recorder.trainer_class()` as the Trainer class and `recorder.callback()`
    among its callbacks: both note their calls, in order, in `recorder.calls`."""

    def __init__(self, methods: Iterable[str] = LOOP_METHODS) -> None:
        super().__init__()
        methods = tuple(methods)
        missing = [name for name in methods if not hasattr(Trainer, name)]
        if missing:
            raise ValueError(f"the installed Trainer has no method(s) {missing}.")
        self.methods = methods

    def trainer_class(self, base: type[Trainer] = Trainer) -> type[Trainer]:
        """A subclass of `base` whose recorded methods note each call, then run."""
        if not (isinstance(base, type) and issubclass(base, Trainer)):
            raise TypeError(f"base must be Trainer or a subclass of it, got {base!r}.")
        methods = {name: recording_method(self, base, name) for name in self.methods}
        return type(f"Recording{base.__name__}", (base,), methods)

    def callback(self) -> TrainerCallback:
        """A callback that notes every event of the installed TrainerCallback."""

        def noting(event: str) -> Callable[..., None]:
            def handler(callback: Any, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                self.note("event", event, state.global_step)

            return handler

        events = {event: noting(event) for event in callback_event_names()}
        return type("LoopEventRecorder", (TrainerCallback,), events)()


def _tiny_parts(examples: int) -> tuple[Any, Any, Any, DataCollatorWithPadding]:
    """A one-layer random BERT with the course vocabulary, reviews, and a collator."""
    tokenizer = load_tokenizer()
    sizes = {"train": examples, "validation": 4}
    data = helpers.tokenize_reviews(helpers.load_reviews(), tokenizer, 32, sizes=sizes)
    config = AutoConfig.from_pretrained(
        local_model_dir(),
        num_labels=2,
        num_hidden_layers=1,
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=64,
    )
    helpers.seed_everything(42)
    model = AutoModelForSequenceClassification.from_config(config)
    return model, data["train"], data["validation"], DataCollatorWithPadding(tokenizer)


LOOP_MAP_SETTINGS: dict[str, Any] = dict(  # 2 optimizer steps of 2 batches of 2; all at step 2
    per_device_train_batch_size=2,
    gradient_accumulation_steps=2,
    max_steps=2,
    logging_steps=2,
    eval_strategy="steps",
    eval_steps=2,
    save_strategy="steps",
    save_steps=2,
    save_only_model=True,
    per_device_eval_batch_size=4,
    report_to="none",
    seed=42,
    use_cpu=True,  # the same map on every machine
)


def record_loop_map(callbacks: Iterable[TrainerCallback] = (), name: str = "loop_map") -> LoopRecorder:
    """A LoopRecorder of one tiny train() and predict() in runs/<name>; `callbacks`
    join the run after the recorder's own (an EventRecorder, say)."""
    recorder = LoopRecorder()
    model, train, validation, collator = _tiny_parts(examples=8)
    settings = {**LOOP_MAP_SETTINGS, "output_dir": str(helpers.run_dir(name))}
    trainer = recorder.trainer_class()(
        model=model,
        args=TrainingArguments(**settings),
        train_dataset=train,
        eval_dataset=validation,
        data_collator=collator,
        callbacks=[recorder.callback(), *callbacks],
    )
    helpers.quiet(trainer).train()
    trainer.predict(validation)
    return recorder
