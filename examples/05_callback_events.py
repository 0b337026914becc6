"""05 · Callback events: the pattern, as a script.

Generated from notebooks/05_callback_events.ipynb by `python -m tools.examples`; do not edit.
Run: python 05_callback_events.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 05_callback_events.ipynb cell 4
import torch
from transformers import DataCollatorWithPadding, set_seed

from helpers.data import load_reviews
from helpers.models import load_model, load_tokenizer

gpu = torch.cuda.is_available()
n_train = 512 if gpu else 64
sizes = dict(train=n_train, validation=n_train // 2, test=n_train // 4)
max_length, num_layers = (128, 6) if gpu else (64, 2)
tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained(name)
reviews = load_reviews()  # your project: datasets.load_dataset("rotten_tomatoes")


def tokenize(batch):
    return tokenizer(batch["text"], truncation=True, max_length=max_length)


data = {
    name: reviews[name]
    .shuffle(seed=0)
    .select(range(count))
    .map(tokenize, batched=True, remove_columns=["text", "movie"])
    for name, count in sizes.items()
}


def small_model():
    set_seed(42)  # the new classification head is drawn at random
    return load_model(num_layers=num_layers)  # your project: from_pretrained(name)


# %% 05_callback_events.ipynb cell 6
from transformers import Trainer, TrainingArguments

from helpers import run_dir


class LossCollector(TrainerCallback):
    def __init__(self):
        self.losses = []  # (global_step, training loss)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if "loss" in logs:  # a training log; evaluation logs hold "eval_loss"
            self.losses.append((state.global_step, logs["loss"]))

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        print(f"epoch {state.epoch:.0f}: eval_loss {metrics['eval_loss']:.3f}")


parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("05_pattern")),
    num_train_epochs=2,
    per_device_train_batch_size=8,
    logging_steps=2,  # a training log every 2 optimizer steps
    eval_strategy="epoch",
    report_to="none",
    seed=42,
    bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
)
(args,) = parser.parse_args_into_dataclasses()
collector = LossCollector()
trainer = Trainer(
    model=small_model(),
    args=args,
    train_dataset=data["train"],
    eval_dataset=data["validation"],
    processing_class=tokenizer,
    data_collator=DataCollatorWithPadding(tokenizer),
    callbacks=[collector],
)
trainer.add_callback(ShowPlan())
trainer.train()
print(len(collector.losses), "losses collected, the first:", collector.losses[0])
