"""Each exercise of lessons 01 to 11, tried as learners write it: at least two correct answers written differently
from the reference solution (they must pass) and at least two realistic mistakes (they must fail with the hint
that names the mistake). The answers are written here, not imported from the solutions."""

from __future__ import annotations

import importlib
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from transformers import Trainer, TrainerCallback, TrainingArguments
from transformers.trainer_callback import ExportableState
from transformers.trainer_utils import get_last_checkpoint

from helpers.checks import PASSED, WRONG


def exercise(name: str):
    lesson, number = name.split(".")
    return getattr(importlib.import_module(f"helpers.checks.lesson_{lesson}"), f"q{int(number)}")


# ---------- 01 ----------
def collate_pad_sequence(features, pad_token_id=0):
    ids = [torch.tensor(f["input_ids"]) for f in features]
    input_ids = torch.nn.utils.rnn.pad_sequence(ids, batch_first=True, padding_value=pad_token_id)
    mask = torch.nn.utils.rnn.pad_sequence([torch.ones_like(i) for i in ids], batch_first=True)
    return {"input_ids": input_ids, "attention_mask": mask, "labels": torch.tensor([f["label"] for f in features])}


def collate_numpy(features, pad_token_id=0):
    width = max(map(len, (f["input_ids"] for f in features)))
    ids = np.full((len(features), width), pad_token_id)
    for row, f in enumerate(features):
        ids[row, : len(f["input_ids"])] = f["input_ids"]
    mask = (np.arange(width)[None, :] < np.array([len(f["input_ids"]) for f in features])[:, None]).astype(int)
    labels = np.array([f["label"] for f in features])
    return {
        "input_ids": torch.from_numpy(ids),
        "attention_mask": torch.from_numpy(mask),
        "labels": torch.from_numpy(labels),
    }


def collate_pad_zero(features, pad_token_id=0):
    batch = collate_pad_sequence(features, 0)
    return batch


def collate_left_padding(features, pad_token_id=0):
    width = max(len(f["input_ids"]) for f in features)
    ids = [[pad_token_id] * (width - len(f["input_ids"])) + f["input_ids"] for f in features]
    mask = [[0] * (width - len(f["input_ids"])) + [1] * len(f["input_ids"]) for f in features]
    return {
        "input_ids": torch.tensor(ids),
        "attention_mask": torch.tensor(mask),
        "labels": torch.tensor([f["label"] for f in features]),
    }


def args_enum_style(output_dir):
    from transformers.trainer_utils import IntervalStrategy, SaveStrategy

    return TrainingArguments(
        output_dir,
        num_train_epochs=2,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
        eval_strategy=IntervalStrategy.EPOCH,
        save_strategy=SaveStrategy.EPOCH,
        save_total_limit=2,
        load_best_model_at_end=True,
        metric_for_best_model="accuracy",
    )


def args_from_dict(output_dir):
    settings = {"eval_strategy": "epoch", "save_strategy": "epoch", "save_total_limit": 2, "num_train_epochs": 2.0}
    return TrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=32 // 8,
        load_best_model_at_end=True,
        metric_for_best_model="eval_accuracy",
        **settings,
    )


def args_loss_metric(output_dir):
    return TrainingArguments(
        output_dir,
        num_train_epochs=2,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
        eval_strategy="epoch",
        save_strategy="epoch",
        save_total_limit=2,
        load_best_model_at_end=True,
    )


def args_no_limit(output_dir):
    return TrainingArguments(
        output_dir,
        num_train_epochs=2,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
        eval_strategy="epoch",
        save_strategy="epoch",
        load_best_model_at_end=True,
        metric_for_best_model="accuracy",
    )


# ---------- 02 ----------
def no_decay_by_trainer_rule(model):
    return [n for n, _ in model.named_parameters() if n not in Trainer.get_decay_parameter_names(None, model)]


def no_decay_by_modules(model):
    names = []
    for module_name, module in model.named_modules():
        for param_name, _ in module.named_parameters(recurse=False):
            if isinstance(module, torch.nn.LayerNorm) or param_name == "bias":
                names.append(f"{module_name}.{param_name}" if module_name else param_name)
    return names


def no_decay_by_name(model):
    return [n for n, _ in model.named_parameters() if "bias" in n or "LayerNorm" in n]


def no_decay_biases(model):
    return [n for n, _ in model.named_parameters() if n.endswith(".bias")]


# ---------- 03 ----------
# ---------- 04 ----------
def metrics_by_hand(prediction):
    logits = prediction.predictions[0] if isinstance(prediction.predictions, tuple) else prediction.predictions
    predicted, labels = logits.argmax(-1), prediction.label_ids
    f1s = []
    for c in (0, 1):
        tp = np.sum((predicted == c) & (labels == c))
        precision = tp / max(np.sum(predicted == c), 1)
        recall = tp / max(np.sum(labels == c), 1)
        f1s.append(0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall))
    return {"accuracy": float((predicted == labels).mean()), "f1_macro": float(np.mean(f1s))}


def metrics_torch(prediction):
    from sklearn.metrics import f1_score

    predictions = prediction.predictions
    logits = torch.as_tensor(predictions[0] if isinstance(predictions, (tuple, list)) else predictions)
    predicted = logits.argmax(dim=-1).numpy()
    return {
        "accuracy": float(np.mean(predicted == prediction.label_ids)),
        "f1_macro": f1_score(prediction.label_ids, predicted, average="macro"),
    }


def metrics_binary_f1(prediction):
    from sklearn.metrics import f1_score

    predicted = prediction.predictions[0].argmax(-1)
    return {
        "accuracy": float((predicted == prediction.label_ids).mean()),
        "f1_macro": f1_score(prediction.label_ids, predicted),
    }


def metrics_no_tuple(prediction):
    predicted = np.argmax(prediction.predictions, axis=-1)
    return {"accuracy": float((predicted == prediction.label_ids).mean()), "f1_macro": 0.5}


class StreamingLists:
    def __init__(self):
        self.hits = []

    def __call__(self, prediction, compute_result):
        self.hits.append((prediction.predictions.argmax(-1) == prediction.label_ids).cpu())
        if compute_result:
            hits, self.hits = torch.cat(self.hits), []
            return {"accuracy": hits.float().mean().item()}
        return {}


class StreamingFloats:
    correct = None

    def __call__(self, eval_prediction, compute_result=False):
        if self.correct is None:
            self.correct, self.seen = 0.0, 0.0
        self.correct += float((eval_prediction.predictions.argmax(-1) == eval_prediction.label_ids).sum())
        self.seen += len(eval_prediction.label_ids)
        if not compute_result:
            return {}
        result, self.correct = {"accuracy": self.correct / self.seen}, None
        return result


class StreamingMeanOfBatches:
    def __init__(self):
        self.accuracies = []

    def __call__(self, prediction, compute_result):
        self.accuracies.append(float((prediction.predictions.argmax(-1) == prediction.label_ids).float().mean()))
        if compute_result:
            result, self.accuracies = {"accuracy": float(np.mean(self.accuracies))}, []
            return result
        return {}


class StreamingNoReset:
    def __init__(self):
        self.right = self.total = 0

    def __call__(self, prediction, compute_result):
        self.right += int((prediction.predictions.argmax(-1) == prediction.label_ids).sum())
        self.total += len(prediction.label_ids)
        return {"accuracy": self.right / self.total} if compute_result else {}


# ---------- 05 ----------
class HistoryFromLogs(TrainerCallback):
    def __init__(self):
        self.history = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        if "eval_loss" in logs:
            self.history.append((state.global_step, logs["eval_loss"]))


class HistoryFromState(TrainerCallback):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.history = list()

    def on_evaluate(self, args, state, control, **kwargs):
        self.history += [(int(state.global_step), float(kwargs["metrics"]["eval_loss"]))]


class HistoryEpochs(HistoryFromState):
    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.history.append((state.epoch, metrics["eval_loss"]))


class HistoryShared(TrainerCallback):
    history = []

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.history.append((state.global_step, metrics["eval_loss"]))


def counts_by_simulation(num_examples, batch_size, accumulation, epochs):
    step_ends = substep_ends = 0
    for _ in range(epochs):
        batches = -(-num_examples // batch_size)
        for index in range(batches):
            if (index + 1) % accumulation == 0 or index + 1 == batches:
                step_ends += 1
            else:
                substep_ends += 1
    return {"on_step_end": step_ends, "on_substep_end": substep_ends, "on_epoch_end": epochs}


def counts_with_divmod(num_examples, batch_size, accumulation, epochs):
    batches, rest = divmod(num_examples, batch_size)
    batches += bool(rest)
    steps = batches // accumulation + (batches % accumulation > 0)
    return dict(on_step_end=epochs * steps, on_substep_end=epochs * (batches - steps), on_epoch_end=epochs)


def counts_floor(num_examples, batch_size, accumulation, epochs):
    batches = num_examples // batch_size
    return {
        "on_step_end": batches // accumulation * epochs,
        "on_substep_end": (batches - batches // accumulation) * epochs,
        "on_epoch_end": epochs,
    }


def counts_one_epoch(num_examples, batch_size, accumulation, epochs):
    batches = math.ceil(num_examples / batch_size)
    steps = math.ceil(batches / accumulation)
    return {"on_step_end": steps, "on_substep_end": batches - steps, "on_epoch_end": epochs}


# ---------- 06 ----------
class EvaluateFromList(TrainerCallback):
    def __init__(self, steps=()):
        self.remaining = sorted(steps)

    def on_step_end(self, args, state, control, **kwargs):
        if self.remaining and state.global_step == self.remaining[0]:
            self.remaining.pop(0)
            control.should_evaluate = True
        return control


class EvaluateOverwrite(TrainerCallback):
    def __init__(self, steps):
        self.steps = tuple(steps)

    def on_step_end(self, args, state, control, **kwargs):
        control.should_evaluate = state.global_step in self.steps


class EvaluateFixed(TrainerCallback):
    def __init__(self, steps):
        pass

    def on_step_end(self, args, state, control, **kwargs):
        control.should_evaluate = state.global_step in (2, 5)


class EvaluateAtBegin(EvaluateOverwrite):
    def on_step_end(self, args, state, control, **kwargs):
        pass

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step in self.steps:
            control.should_evaluate = True


class CheckpointsFrom(TrainerCallback):
    def __init__(self, first=4):
        self.first = first

    def on_step_end(self, args, state, control, **kwargs):
        control.should_save = control.should_save and state.global_step >= self.first


class CheckpointsFromSubclassedFlow(TrainerCallback):
    def __init__(self, **kwargs):
        self.first = kwargs["first"]

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step < self.first and control.should_save:
            control.should_save = False
        return control


class CheckpointsAddsSaves(CheckpointsFrom):
    def on_step_end(self, args, state, control, **kwargs):
        control.should_save = state.global_step >= self.first


class CheckpointsFixed(CheckpointsFrom):
    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step < 4:
            control.should_save = False


# ---------- 07 ----------
def _balanced(dataset):
    labels = np.array(dataset["labels"])
    return torch.tensor([len(labels) / (2 * np.sum(labels == c)) for c in (0, 1)], dtype=torch.float32)


class BalancedScaledFlag(Trainer):
    loss_is_scaled_for_ga = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.weights = _balanced(self.train_dataset)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        per = F.cross_entropy(outputs.logits, inputs["labels"], reduction="none") * self.weights[inputs["labels"]]
        return (per.mean(), outputs) if return_outputs else per.mean()


class BalancedNoLossKwargs(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.model_accepts_loss_kwargs = False
        self.weights = _balanced(self.train_dataset)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss = (F.cross_entropy(outputs.logits, labels, reduction="none") * self.weights[labels]).mean()
        return (loss, outputs) if return_outputs else loss


class BalancedInverse(BalancedScaledFlag):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.weights = 1 / self.weights


class BalancedPerBatchMean(BalancedScaledFlag):
    loss_is_scaled_for_ga = None


def focal_from_ce(outputs, labels, num_items_in_batch=None):
    ce = F.cross_entropy(outputs.logits, labels, reduction="none")
    per = (1 - torch.exp(-ce)) ** 2 * ce
    return per.sum() / (labels.shape[0] if num_items_in_batch is None else num_items_in_batch)


def focal_from_softmax(outputs, labels, num_items_in_batch=None):
    p = outputs.logits.softmax(-1)[torch.arange(len(labels)), labels]
    count = num_items_in_batch if num_items_in_batch is not None else len(labels)
    return torch.sum(-((1 - p) ** 2) * torch.log(p)) / count


def focal_mean(outputs, labels, num_items_in_batch=None):
    ce = F.cross_entropy(outputs.logits, labels, reduction="none")
    return ((1 - torch.exp(-ce)) ** 2 * ce).mean()


def focal_gamma_one(outputs, labels, num_items_in_batch=None):
    ce = F.cross_entropy(outputs.logits, labels, reduction="none")
    return ((1 - torch.exp(-ce)) * ce).sum() / (num_items_in_batch or len(labels))


# ---------- 08 ----------
class MonitorVectorNorm(TrainerCallback):
    def __init__(self):
        self.norms = []

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        grads = [p.grad.flatten() for n, p in kwargs["model"].named_parameters() if n.startswith("classifier")]
        self.norms.append(float(torch.linalg.vector_norm(torch.cat(grads))))


class MonitorAfterOptimizer(TrainerCallback):
    def __init__(self):
        self.norms = []

    def on_optimizer_step(self, args, state, control, model=None, **kwargs):
        head = [p.grad for n, p in model.named_parameters() if n.startswith("classifier.")]
        self.norms.append(math.sqrt(sum(float((g**2).sum()) for g in head)))


class MonitorWeightOnly(MonitorVectorNorm):
    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        self.norms.append(float(model.classifier.weight.grad.norm()))


class MonitorStepEnd(MonitorVectorNorm):
    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        pass

    def on_step_end(self, args, state, control, model=None, **kwargs):
        grads = [p.grad for n, p in model.named_parameters() if n.startswith("classifier") and p.grad is not None]
        if grads:
            self.norms.append(float(torch.stack([g.norm() for g in grads]).norm()))


class DecayRegex(Trainer):
    def __init__(self, decay=0.5, **kwargs):
        self.decay = decay
        super().__init__(**kwargs)

    def create_optimizer(self, model=None):
        if self.optimizer is None:
            layers, decayed = self.model.config.num_hidden_layers, set(self.get_decay_parameter_names(self.model))
            groups = []
            for name, param in self.model.named_parameters():
                match = re.search(r"\.layer\.(\d+)\.", name)
                depth = layers - int(match.group(1)) if match else (layers + 1 if "embeddings" in name else 0)
                groups.append(
                    {
                        "params": [param],
                        "lr": self.args.learning_rate * self.decay**depth,
                        "weight_decay": self.args.weight_decay * (name in decayed),
                    }
                )
            self.optimizer = torch.optim.AdamW(groups)
        return self.optimizer


class DecayOptimizerClsAndKwargs(DecayRegex):
    def create_optimizer(self, model=None):
        if self.optimizer is None:
            super().create_optimizer(model)
            self.optimizer = torch.optim.SGD(self.optimizer.param_groups, lr=self.args.learning_rate)
        return self.optimizer


class DecayEverywhere(DecayRegex):
    def create_optimizer(self, model=None):
        if self.optimizer is None:
            super().create_optimizer(model)
            for group in self.optimizer.param_groups:
                group["weight_decay"] = self.args.weight_decay
        return self.optimizer


class DecayFixedHalf(DecayRegex):
    def __init__(self, decay=0.5, **kwargs):
        super().__init__(decay=0.5, **kwargs)


# ---------- 09 ----------
def plan_top_down(target_batch, max_micro_batch):
    for micro in range(min(target_batch, max_micro_batch), 0, -1):
        if target_batch % micro == 0:
            return {"per_device_train_batch_size": micro, "gradient_accumulation_steps": target_batch // micro}


def plan_from_steps(target_batch, max_micro_batch):
    steps = next(
        s for s in range(1, target_batch + 1) if target_batch % s == 0 and target_batch // s <= max_micro_batch
    )
    return dict(gradient_accumulation_steps=steps, per_device_train_batch_size=target_batch // steps)


def plan_no_divisibility(target_batch, max_micro_batch):
    micro = min(target_batch, max_micro_batch)
    return {"per_device_train_batch_size": micro, "gradient_accumulation_steps": math.ceil(target_batch / micro)}


def plan_powers_of_two(target_batch, max_micro_batch):
    micro = 1
    while micro * 2 <= max_micro_batch and target_batch % (micro * 2) == 0:
        micro *= 2
    return {"per_device_train_batch_size": micro, "gradient_accumulation_steps": target_batch // micro}


# ---------- 10 ----------
def steps_ceil_trick(examples, per_device_batch, processes, accumulation):
    return -(-examples // (per_device_batch * processes * accumulation))


def steps_by_loop(examples, per_device_batch, processes, accumulation):
    batches = 0
    while batches * per_device_batch * processes < examples:
        batches += 1
    return max((batches + accumulation - 1) // accumulation, 1)


def steps_no_processes(examples, per_device_batch, processes, accumulation):
    return math.ceil(math.ceil(examples / per_device_batch) / accumulation)


def steps_floor(examples, per_device_batch, processes, accumulation):
    return max(examples // (per_device_batch * processes) // accumulation, 1)


class CollectorEarlyReturn(TrainerCallback):
    def __init__(self):
        self.losses = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero:
            return
        if logs.get("loss") is not None:
            self.losses.append(logs["loss"])


class CollectorDict(TrainerCallback):
    def __init__(self):
        super().__init__()
        self.losses: list = []

    def on_log(self, args, state, control, **kwargs):
        logs = kwargs.get("logs") or {}
        if state.is_world_process_zero and "loss" in logs:
            self.losses += [float(logs["loss"])]


class CollectorLocal(CollectorDict):
    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_local_process_zero and "loss" in logs:
            self.losses.append(logs["loss"])


class CollectorAnyLoss(CollectorDict):
    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_world_process_zero:
            self.losses += [value for key, value in logs.items() if key.endswith("loss")]


# ---------- 11 ----------
def latest_by_glob(output_dir):
    found = [p for p in Path(output_dir).glob("checkpoint-*") if p.is_dir() and p.name.split("-", 1)[1].isdigit()]
    return str(max(found, key=lambda p: int(p.name.split("-")[1]))) if found else None


def latest_by_library(output_dir):
    return get_last_checkpoint(output_dir)


def latest_by_text(output_dir):
    names = sorted(n for n in os.listdir(output_dir) if n.startswith("checkpoint-"))
    return os.path.join(output_dir, names[-1]) if names else None


def latest_name_only(output_dir):
    path = latest_by_glob(output_dir)
    return os.path.basename(path) if path else None


class CounterWithArgs(TrainerCallback, ExportableState):
    def __init__(self, evaluations=0):
        self.evaluations = evaluations

    def on_evaluate(self, args, state, control, **kwargs):
        self.evaluations = self.evaluations + 1

    def state(self):
        return {"args": {"evaluations": self.evaluations}, "attributes": {}}


class CounterAttributes(ExportableState, TrainerCallback):
    def __init__(self):
        self.evaluations = 0

    def on_evaluate(self, *args, **kwargs):
        self.evaluations += 1

    def state(self):
        return {"args": {}, "attributes": {"evaluations": self.evaluations}}


class CounterForgotState(TrainerCallback, ExportableState):
    def __init__(self):
        self.evaluations = 0

    def on_evaluate(self, args, state, control, **kwargs):
        self.evaluations += 1


class CounterNoExport(TrainerCallback):
    def __init__(self):
        self.evaluations = 0

    def on_evaluate(self, args, state, control, **kwargs):
        self.evaluations += 1


CORRECT = {
    "01.1": [collate_pad_sequence, collate_numpy],
    "01.2": [args_enum_style, args_from_dict],
    "02.1": [
        {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 8, "max_steps": 3},
        {"max_steps": 3, "gradient_accumulation_steps": 16, "per_device_train_batch_size": 1, "seed": 3},
    ],
    "02.2": [no_decay_by_trainer_rule, no_decay_by_modules],
    "02.3": [
        {
            "eval_strategy": "steps",
            "eval_steps": 2,
            "save_steps": 2,
            "save_total_limit": 2,  # default strategy
            "load_best_model_at_end": True,
            "metric_for_best_model": "eval_accuracy",
        },
        {
            "eval_strategy": "steps",
            "eval_steps": 2,
            "save_strategy": "best",
            "save_total_limit": 2,
            "load_best_model_at_end": True,
            "metric_for_best_model": "accuracy",
            "greater_is_better": True,
        },
    ],
    "03.1": [0.25, 0.2549],
    "03.2": [
        {
            "learning_rate": 3e-4,
            "lr_scheduler_type": "cosine_with_min_lr",
            "warmup_steps": 0.25,
            "lr_scheduler_kwargs": {"min_lr": 3e-5},
        },
        {
            "lr_scheduler_type": "cosine_with_min_lr",
            "lr_scheduler_kwargs": {"min_lr_rate": 0.1},
            "warmup_steps": 1 / 4,
            "learning_rate": 0.0003,
            "weight_decay": 0.01,
        },
    ],
    "04.1": [metrics_by_hand, metrics_torch],
    "04.2": [StreamingLists, StreamingFloats],
    "04.3": [
        {"eval_strategy": "epoch", "save_strategy": "epoch", "load_best_model_at_end": True},
        {
            "eval_strategy": "epoch",
            "save_strategy": "epoch",
            "load_best_model_at_end": True,
            "metric_for_best_model": "loss",
            "save_total_limit": 1,
        },
    ],
    "05.1": [HistoryFromLogs, HistoryFromState],
    "05.2": [counts_by_simulation, counts_with_divmod],
    "06.1": [EvaluateFromList, EvaluateOverwrite],
    "06.2": [CheckpointsFrom, CheckpointsFromSubclassedFlow],
    "07.1": [BalancedScaledFlag, BalancedNoLossKwargs],
    "07.2": [focal_from_ce, focal_from_softmax],
    "08.1": [MonitorVectorNorm, MonitorAfterOptimizer],
    "08.2": [DecayRegex, DecayOptimizerClsAndKwargs],
    "09.1": [
        {"train_sampling_strategy": "group_by_length"},
        {"train_sampling_strategy": "group_by_length", "dataloader_drop_last": False, "seed": 7},
    ],
    "09.2": [plan_top_down, plan_from_steps],
    "10.1": [steps_ceil_trick, steps_by_loop],
    "10.2": [CollectorEarlyReturn, CollectorDict],
    "11.1": [latest_by_glob, latest_by_library],
    "11.2": [CounterWithArgs, CounterAttributes],
}

MISTAKES = {
    "01.1": [(collate_pad_zero, "pad id 7"), (collate_left_padding, "pad on the right")],
    "01.2": [(args_loss_metric, "judged by accuracy"), (args_no_limit, "save_total_limit=2")],
    "02.1": [
        ({"per_device_train_batch_size": 16, "max_steps": 3}, "at most 4"),
        ({"per_device_train_batch_size": 4, "gradient_accumulation_steps": 4, "max_steps": 12}, "not 3"),
    ],
    "02.2": [(no_decay_by_name, "GPT-2"), (no_decay_biases, "LayerNorm")],
    "02.3": [
        (
            {
                "eval_strategy": "steps",
                "eval_steps": 2,
                "save_steps": 2,
                "save_total_limit": 2,
                "load_best_model_at_end": True,
            },
            "so the best is checkpoint-",
        ),
        (
            {
                "eval_strategy": "steps",
                "eval_steps": 2,
                "save_steps": 2,
                "load_best_model_at_end": True,
                "metric_for_best_model": "accuracy",
            },
            "save_total_limit",
        ),
    ],
    "03.1": [(1 / 3, "linear"), (0.2061, "without warmup")],
    "03.2": [
        ({"learning_rate": 3e-4, "lr_scheduler_type": "cosine", "warmup_steps": 0.25}, "10% or more"),
        (
            {
                "learning_rate": 3e-4,
                "lr_scheduler_type": "cosine_with_min_lr",
                "warmup_steps": 3,
                "lr_scheduler_kwargs": {"min_lr_rate": 0.1},
            },
            "a quarter of the updates",
        ),
    ],
    "04.1": [(metrics_binary_f1, "average='macro'"), (metrics_no_tuple, "take its first item")],
    "04.2": [(StreamingMeanOfBatches, "count over every batch"), (StreamingNoReset, "reset your counts")],
    "04.3": [
        (
            {
                "eval_strategy": "epoch",
                "save_strategy": "epoch",
                "load_best_model_at_end": True,
                "metric_for_best_model": "eval_loss",
                "greater_is_better": True,
            },
            "lower is better",
        ),
        ({"eval_strategy": "epoch", "save_strategy": "epoch"}, "load_best_model_at_end=True"),
    ],
    "05.1": [(HistoryEpochs, "use state.global_step"), (HistoryShared, "its own list")],
    "05.2": [(counts_floor, "smaller last batch"), (counts_one_epoch, "2 epoch(s)")],
    "06.1": [(EvaluateFixed, "asked for steps [1, 3, 4]"), (EvaluateAtBegin, "one step late")],
    "06.2": [(CheckpointsAddsSaves, "add none"), (CheckpointsFixed, "with first=5")],
    "07.1": [(BalancedInverse, "N / (2 * count_c)"), (BalancedPerBatchMean, "batch 4 x accumulation 2")],
    "07.2": [(focal_mean, "num_items_in_batch=13"), (focal_gamma_one, "focal loss (gamma 2)")],
    "08.1": [
        (MonitorWeightOnly, "every parameter whose name starts with 'classifier'"),
        (MonitorStepEnd, "on_pre_optimizer_step"),
    ],
    "08.2": [(DecayEverywhere, "get_decay_parameter_names"), (DecayFixedHalf, "decay=0.8")],
    "09.1": [
        ({"group_by_length": True}, "group_by_length"),
        ({"train_sampling_strategy": "sequential"}, "sequential sampler"),
    ],
    "09.2": [(plan_no_divisibility, "equal the target exactly"), (plan_powers_of_two, "smaller passes")],
    "10.1": [(steps_no_processes, "Each process reads its own batch"), (steps_floor, "the Trainer takes")],
    "10.2": [(CollectorLocal, "is_local_process_zero=True"), (CollectorAnyLoss, "nothing else")],
    "11.1": [(latest_by_text, "as ints"), (latest_name_only, "whole path")],
    "11.2": [(CounterForgotState, "implement a `state`"), (CounterNoExport, "ExportableState")],
}

CASES = [(name, answer) for name, answers in CORRECT.items() for answer in answers]
WRONG_CASES = [(name, answer, hint) for name, pairs in MISTAKES.items() for answer, hint in pairs]


@pytest.mark.parametrize("name, answer", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_a_correct_answer_written_differently_passes(name, answer) -> None:
    verdict = exercise(name).evaluate(answer)
    assert verdict.status == PASSED, verdict


@pytest.mark.parametrize("name, answer, hint", WRONG_CASES, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(WRONG_CASES)])
def test_a_realistic_mistake_fails_with_its_hint(name, answer, hint) -> None:
    verdict = exercise(name).evaluate(answer)
    assert verdict.status == WRONG and hint in verdict.message, verdict


def test_every_exercise_of_lessons_01_to_11_has_two_alternatives_and_two_mistakes() -> None:
    names = {f"{lesson:02d}.{number}" for lesson in range(1, 12) for number in range(1, 5)}
    names = {
        name for name in names if hasattr(importlib.import_module(f"helpers.checks.lesson_{name[:2]}"), f"q{name[3]}")
    }
    assert names == set(CORRECT) == set(MISTAKES)
    assert all(len(CORRECT[n]) >= 2 and len(MISTAKES[n]) >= 2 for n in names)
