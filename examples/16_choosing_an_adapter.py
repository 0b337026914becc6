"""16 · Choosing a LoRA adapter: the pattern, as a script.

Generated from notebooks/16_choosing_an_adapter.ipynb by `python -m tools.examples`; do not edit.
Run: python 16_choosing_an_adapter.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
"""

from transformers import HfArgumentParser, TrainerCallback


class ShowPlan(TrainerCallback):
    """Prints the global batch and the planned optimizer steps when training starts."""

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            per_device = args.per_device_train_batch_size
            accumulation = args.gradient_accumulation_steps
            batch = per_device * accumulation * args.world_size
            print(
                f"global batch {batch} = {per_device} per device x {accumulation} "
                f"accumulation x {args.world_size} processes; "
                f"{state.max_steps} optimizer steps planned"
            )


# %% 16_choosing_an_adapter.ipynb cell 4
from collections import Counter

import torch
from peft import LoraConfig
from torch import nn
from transformers import set_seed

from helpers.models import load_model

on_gpu = torch.cuda.is_available()


def base_classifier(seed=0):
    set_seed(seed)  # the new head: the same in every trial
    # your project: AutoModelForSequenceClassification.from_pretrained(...)
    return load_model()


def course_lora_config(**changes):
    """Rank 8 on every linear layer of the encoder; the head trained in full."""
    settings = dict(task_type="SEQ_CLS", r=8, lora_alpha=16, lora_dropout=0.0)
    settings["target_modules"] = ["query", "key", "value", "dense"]
    return LoraConfig(**{**settings, **changes})


linear = Counter(
    name.rsplit(".", 1)[-1]
    for name, module in base_classifier().named_modules()
    if isinstance(module, nn.Linear)
)
print(linear)


# %% 16_choosing_an_adapter.ipynb cell 6
import warnings

from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

from helpers.data import load_reviews
from helpers.models import load_tokenizer

# PEFT 0.21 reads the model's old name `is_gradient_checkpointing`; transformers 5.24
# answers with a FutureWarning at every call. Nothing to act on.
warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated")

tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained(...)
reviews = load_reviews()  # your project: load_dataset("rotten_tomatoes")
n_train, n_validation, max_length = (2560, 1536, 128) if on_gpu else (320, 192, 64)


def encode(rows):
    return tokenizer(rows["text"], truncation=True, max_length=max_length)


data = {
    split: reviews[split]
    .shuffle(seed=0)
    .select(range(count))
    .map(encode, batched=True, remove_columns=["text", "movie"])
    for split, count in (("train", n_train), ("validation", n_validation))
}
labels = data["validation"]["label"]
majority = max(labels.count(0), labels.count(1)) / len(labels)


def accuracy(prediction):
    predicted = prediction.predictions.argmax(-1)
    return {"accuracy": float((predicted == prediction.label_ids).mean())}


# %% 16_choosing_an_adapter.ipynb cell 8
from dataclasses import replace

from peft import get_peft_model
from transformers import PrinterCallback

from helpers import run_dir

parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("16_trial")),
    num_train_epochs=2,
    per_device_train_batch_size=16,
    per_device_eval_batch_size=256 if on_gpu else 128,
    learning_rate=3e-3,
    train_sampling_strategy="group_by_length",  # less padding: lesson 09
    save_strategy="no",  # a trial: nothing to keep
    bf16=on_gpu and torch.cuda.is_bf16_supported(),
    disable_tqdm=True,  # no progress table for a trial
    seed=42,
)
(args,) = parser.parse_args_into_dataclasses()


def adapter_trainer(config, **changes):
    trainer = Trainer(
        model=get_peft_model(base_classifier(), config),
        args=replace(args, **changes),
        train_dataset=data["train"],
        eval_dataset=data["validation"],
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=accuracy,
    )
    trainer.add_callback(ShowPlan())
    trainer.remove_callback(PrinterCallback)  # nor its logs
    return trainer


# %% 16_choosing_an_adapter.ipynb cell 9
def trial(name, config, **changes):
    trainer = adapter_trainer(config, **changes)
    seconds = trainer.train().metrics["train_runtime"]
    trainable, _ = trainer.model.get_nb_trainable_parameters()
    return {
        "adapter": name,
        "trainable": trainable,
        "s per step": round(seconds / trainer.state.global_step, 3),
        "accuracy": round(trainer.evaluate()["eval_accuracy"], 3),
    }


# %% 16_choosing_an_adapter.ipynb cell 11
def show(rows):
    for row in rows:
        print(" | ".join(f"{key} {value}" for key, value in row.items()))


rows = [
    trial("query, value", course_lora_config(target_modules=["query", "value"])),
    trial("every linear layer", course_lora_config()),
]
show(rows)
print(f"majority class: {majority:.3f}")
