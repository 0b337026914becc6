"""A map of the training loop, recorded from a real run: where your override or your callback runs.

:class:`LoopRecorder` wraps the Trainer methods a course lesson overrides (:data:`LOOP_METHODS`) in a subclass
and records every call, with how deeply it was nested in the other recorded methods, interleaved with every
callback event the installed ``TrainerCallback`` defines. :func:`record_loop_map` makes one tiny run (a
one-layer random BERT with the course tokenizer's vocabulary, 8 real reviews, 2 optimizer steps of 2
accumulated batches, a log, an evaluation and a checkpoint at step 2, then ``predict``) and returns the
recorder; :func:`helpers.plots.loop_map.plot_loop_map` draws it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from transformers import Trainer, TrainerCallback

from helpers.callbacks import callback_event_names

# `train` and `predict` (the calls you make) and the methods worth overriding, as the lessons name them; checkpoint
# saving is `_save_checkpoint` (which calls `save_model`); `log` receives every logs dict before any on_log.
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


@dataclass(frozen=True)
class LoopCall:
    """One recorded call: a Trainer ``method`` or a callback ``event``.

    ``index`` is its position in the run; ``depth`` the number of recorded methods still running when it
    started (0: called by your code or by the Trainer's constructor); ``end`` the index of the
    last call made before a method returned (an event's ``end`` is its ``index``); ``global_step`` the
    ``TrainerState.global_step`` at the call.
    """

    index: int
    kind: str
    name: str
    depth: int
    global_step: int
    end: int


class LoopRecorder:
    """Records Trainer method calls and callback events into one ordered list, ``recorder.calls``.

    Use ``recorder.trainer_class()`` as the Trainer class and pass ``recorder.callback()`` in ``callbacks``.

    Raises:
        ValueError: a name in ``methods`` is not a method of the installed ``Trainer``.
    """

    def __init__(self, methods: Sequence[str] = LOOP_METHODS) -> None:
        missing = [name for name in methods if not callable(getattr(Trainer, name, None))]
        if missing:
            raise ValueError(
                f"the installed Trainer has no method(s) {missing}; pass names from dir(transformers.Trainer)."
            )
        self.methods = tuple(methods)
        self.calls: list[LoopCall] = []
        self._open: list[int] = []
        self.seconds: float | None = None  # how long the recorded train() and predict() took

    def _start(self, kind: str, name: str, step: int) -> int:
        index = len(self.calls)
        self.calls.append(LoopCall(index, kind, name, len(self._open), step, index))
        return index

    def _method_started(self, name: str, trainer: Any) -> None:
        self._open.append(self._start("method", name, int(trainer.state.global_step)))

    def _method_returned(self) -> None:
        index = self._open.pop()
        self.calls[index] = replace(self.calls[index], end=len(self.calls) - 1)

    def trainer_class(self, base: type = Trainer) -> type:
        """A subclass of ``base`` whose recorded methods note each call, then run ``base``'s own method."""
        if not (isinstance(base, type) and issubclass(base, Trainer)):
            raise TypeError(f"base must be transformers.Trainer or a subclass of it, got {base!r}.")
        recorder = self

        def wrap(name: str) -> Callable[..., Any]:
            original = getattr(base, name)

            def method(trainer: Any, *args: Any, **kwargs: Any) -> Any:
                recorder._method_started(name, trainer)
                try:
                    return original(trainer, *args, **kwargs)
                finally:
                    recorder._method_returned()

            method.__name__ = name
            method.__doc__ = original.__doc__
            return method

        return type(f"Recording{base.__name__}", (base,), {name: wrap(name) for name in self.methods})

    def callback(self) -> TrainerCallback:
        """A callback that records every event of the installed ``TrainerCallback`` at the current nesting."""
        recorder = self

        def make(event: str) -> Callable[..., None]:
            def handler(callback: Any, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                recorder._start("event", event, int(state.global_step))

            handler.__name__ = event
            return handler

        events = {event: make(event) for event in callback_event_names()}
        return type("LoopEventRecorder", (TrainerCallback,), events)()

    def names(self) -> list[str]:
        """The recorded names in calling order."""
        return [call.name for call in self.calls]

    def first(self, name: str) -> int:
        """The index of the first call of ``name``.

        Raises:
            KeyError: ``name`` was never called in the recorded run.
        """
        for call in self.calls:
            if call.name == name:
                return call.index
        raise KeyError(f"{name!r} was not called in the recorded run; recorded: {sorted(set(self.names()))}.")

    def inside(self, name: str) -> list[str]:
        """The names called while the first call of method ``name`` was running (its nested calls, in order)."""
        call = self.calls[self.first(name)]
        if call.kind != "method":
            raise ValueError(f"{name!r} is a callback event; only a method has calls inside it.")
        return [inner.name for inner in self.calls[call.index + 1 : call.end + 1]]


def _tiny_parts(examples: int) -> tuple[Any, Any, Any, Any]:
    """A one-layer random BERT (the course model's vocabulary), real reviews tokenized, and the collator."""
    from transformers import AutoConfig, AutoModelForSequenceClassification, DataCollatorWithPadding

    from helpers import seed_everything
    from helpers.data import load_reviews, tokenize_reviews
    from helpers.models import load_tokenizer, local_model_dir

    tokenizer = load_tokenizer()
    data = tokenize_reviews(load_reviews(), tokenizer, 32, sizes={"train": examples, "validation": 4})
    config = AutoConfig.from_pretrained(
        local_model_dir(),
        num_labels=2,
        num_hidden_layers=1,
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=64,
    )
    seed_everything(42)
    model = AutoModelForSequenceClassification.from_config(config)
    return model, data["train"], data["validation"], DataCollatorWithPadding(tokenizer)


def record_loop_map(callbacks: Iterable[TrainerCallback] = (), name: str = "loop_map") -> LoopRecorder:
    """Run one tiny ``train()`` and ``predict()`` with a :class:`LoopRecorder` and return it.

    The run: 8 reviews, batches of 2 with 2 accumulated, so 2 optimizer steps; a log, an evaluation and a
    checkpoint at step 2; then ``predict`` on 4 validation reviews. It takes a few seconds on a CPU and
    prints nothing (``helpers.quiet``).

    Args:
        callbacks: more callbacks for the same run (an ``EventRecorder``, for its kwargs); they come after the
            loop recorder's own callback.
        name: the folder under ``runs/`` for the checkpoint.
    """
    from transformers import TrainingArguments

    from helpers import quiet, run_dir

    recorder = LoopRecorder()
    model, train, validation, collator = _tiny_parts(examples=8)
    args = TrainingArguments(
        output_dir=str(run_dir(name)),
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
        use_cpu=True,
    )
    trainer = recorder.trainer_class()(
        model=model,
        args=args,
        train_dataset=train,
        eval_dataset=validation,
        data_collator=collator,
        callbacks=[recorder.callback(), *callbacks],
    )
    quiet(trainer)
    started = time.perf_counter()
    trainer.train()
    trainer.predict(validation)
    recorder.seconds = time.perf_counter() - started
    return recorder
