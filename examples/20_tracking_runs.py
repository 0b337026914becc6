"""20 · Tracking and comparing runs: the pattern, as a script.

Generated from notebooks/20_tracking_runs.ipynb by `python -m tools.examples`; do not edit.
Run: python 20_tracking_runs.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 20_tracking_runs.ipynb cell 4
import os

import torch
from transformers import DataCollatorWithPadding, Trainer, TrainingArguments, set_seed

from helpers import run_dir
from helpers.data import load_reviews
from helpers.embedding_head import course_embedding_classifier
from helpers.models import load_tokenizer

# your project: any folder, set before trackio is first imported
os.environ["TRACKIO_DIR"] = os.path.relpath(run_dir("20_trackio"))
on_gpu = torch.cuda.is_available()
n_train, n_validation, max_length = (4096, 2048, 128) if on_gpu else (512, 256, 64)
tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained(...)
raw = load_reviews()  # your project: load_dataset("rotten_tomatoes")
data = {  # a seeded slice of each split, tokenized; the collator pads each batch
    split: raw[split]
    .shuffle(seed=0)
    .select(range(size))
    .map(
        lambda batch: tokenizer(batch["text"], truncation=True, max_length=max_length),
        batched=True,
        remove_columns=["text", "movie"],
    )
    for split, size in [("train", n_train), ("validation", n_validation)]
}
PROJECT = "20-learning-rates"


# %% 20_tracking_runs.ipynb cell 6
parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("20_lr0.001_seed1")),
    report_to=["trackio", "tensorboard"],
    project=PROJECT,  # trackio's project: the runs you compare
    run_name="lr=0.001 seed=1",  # one name per run
    learning_rate=1e-3,
    num_train_epochs=4,
    per_device_train_batch_size=16,
    logging_steps=8,
    eval_strategy="epoch",
    save_strategy="no",
    seed=1,
)
(args,) = parser.parse_args_into_dataclasses()
set_seed(args.seed)  # the new linear layer is drawn at random
trainer = Trainer(
    model=course_embedding_classifier(),  # your project: ...from_pretrained(...)
    args=args,
    train_dataset=data["train"],
    eval_dataset=data["validation"],
    data_collator=DataCollatorWithPadding(tokenizer),
)
trainer.add_callback(ShowPlan())
trainer.train()  # trackio prints where it stores the run
eval_losses = [
    log["eval_loss"] for log in trainer.state.log_history if "eval_loss" in log
]
print(f"{args.run_name}: eval_loss {eval_losses[-1]:.4f}")
