"""03 · Learning-rate schedules: the pattern, as a script.

Generated from notebooks/03_lr_schedules.ipynb by `python -m tools.examples`; do not edit.
Run: python 03_lr_schedules.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 03_lr_schedules.ipynb cell 4
import torch
from transformers import DataCollatorWithPadding, Trainer, TrainingArguments, set_seed

from helpers.data import load_reviews
from helpers.models import load_model, load_tokenizer

set_seed(42)  # the new classification head is drawn from torch's generator
ON_GPU = torch.cuda.is_available()
# your project: AutoModelForSequenceClassification.from_pretrained(name, num_labels=2)
model = load_model(num_layers=6 if ON_GPU else 2)  # a CPU keeps 2 of the 6 layers
tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained(name)
reviews = load_reviews()  # your project: datasets.load_dataset(name)
sizes = {"train": 512 if ON_GPU else 64, "validation": 16, "test": 8}
max_length = 64 if ON_GPU else 32  # tokens kept per review


def tokenize(batch):
    return tokenizer(batch["text"], truncation=True, max_length=max_length)


data = {}
for split, size in sizes.items():  # a seeded sample of each split, tokenized
    sample = reviews[split].shuffle(seed=0).select(range(size))
    data[split] = sample.map(tokenize, batched=True, remove_columns=["text", "movie"])
collator = DataCollatorWithPadding(tokenizer)


# %% 03_lr_schedules.ipynb cell 6
from dataclasses import dataclass, field
from typing import Any



@dataclass
class AppliedLRRecorder(TrainerCallback):
    """The learning rate of one optimizer parameter group, read right after
    `optimizer.step()`: `steps[i]` is the 0-based optimizer update and `lrs[i]` the rate
    of parameter group `group` that the update used."""

    group: int = 0
    steps: list[int] = field(default_factory=list)
    lrs: list[float] = field(default_factory=list)

    def on_optimizer_step(
        self, args: Any, state: Any, control: Any, optimizer: Any = None, **kwargs: Any
    ) -> None:
        if optimizer is None:
            raise RuntimeError(
                "on_optimizer_step received no optimizer; this transformers version "
                "changed the event."
            )
        self.steps.append(int(state.global_step))  # incremented after this event
        self.lrs.append(float(optimizer.param_groups[self.group]["lr"]))


# %% 03_lr_schedules.ipynb cell 7
from helpers import run_dir

parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=run_dir("03_pattern"),  # your project: any folder, such as "runs/03"
    learning_rate=2e-4,
    lr_scheduler_type="polynomial",
    lr_scheduler_kwargs={"power": 2.0, "lr_end": 1e-5},
    warmup_steps=0.25,  # a float below 1: a quarter of all updates
    per_device_train_batch_size=4,
    num_train_epochs=1,
    logging_steps=0.25,  # log four times
    save_strategy="no",
    report_to="none",
    seed=42,
    bf16=ON_GPU and torch.cuda.is_bf16_supported(),
)
(args,) = parser.parse_args_into_dataclasses()
recorder = AppliedLRRecorder()
trainer = Trainer(
    model=model,
    args=args,
    train_dataset=data["train"],
    data_collator=collator,
    callbacks=[recorder],
)
trainer.add_callback(ShowPlan())
train_result = trainer.train()
updates = trainer.state.max_steps
warmup = args.get_warmup_steps(updates)
print(f"{updates} updates, {warmup} of warmup, last rate used: {recorder.lrs[-1]:.2e}")
