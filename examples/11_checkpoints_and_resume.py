"""11 · Checkpoints and resume: the pattern, as a script.

Generated from notebooks/11_checkpoints_and_resume.ipynb by `python -m tools.examples`; do not edit.
Run: python 11_checkpoints_and_resume.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 11_checkpoints_and_resume.ipynb cell 4
import torch
from transformers import DataCollatorWithPadding, Trainer, TrainingArguments, set_seed

from helpers import run_dir
from helpers.data import load_reviews
from helpers.models import load_model, load_tokenizer

tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained("...")
reviews = load_reviews()  # your project: load_dataset("...")
gpu = torch.cuda.is_available()
n, max_length = (512, 64) if gpu else (64, 32)  # short reviews: resuming is about steps


def encode(rows):
    return tokenizer(rows["text"], truncation=True, max_length=max_length)


tokenized = {}  # a seeded slice of each split, tokenized without padding
for split, count in {"train": n, "validation": n // 2, "test": 8}.items():
    rows = reviews[split].shuffle(seed=0).select(range(count))
    tokenized[split] = rows.map(encode, batched=True, remove_columns=["text", "movie"])
BATCH_SIZE = 8
STEPS_PER_EPOCH = len(tokenized["train"]) // BATCH_SIZE
TOTAL_STEPS = STEPS_PER_EPOCH * 3 // 2  # 1.5 epochs
STOP_STEP = TOTAL_STEPS // 2 + 1  # where we cut the run: inside epoch 1


def fresh_model():
    set_seed(42)  # the new classification head is drawn at random
    # your project: AutoModelForSequenceClassification.from_pretrained("...")
    return load_model(num_layers=6 if gpu else 2)


# %% 11_checkpoints_and_resume.ipynb cell 6
parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("11_interrupted")),  # your project: any folder
    per_device_train_batch_size=BATCH_SIZE,
    learning_rate=1e-4,
    max_steps=TOTAL_STEPS,
    save_strategy="steps",  # write output_dir/checkpoint-N ...
    save_steps=STOP_STEP,  # ... every STOP_STEP optimizer steps
    logging_steps=1,  # each step's own loss in the logs
    seed=42,
    bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
)
(args,) = parser.parse_args_into_dataclasses()


# %% 11_checkpoints_and_resume.ipynb cell 8


class StopAtStep(TrainerCallback):
    """Stop training once `global_step` reaches `stop_step` (a checkpoint due at that
    step is still saved)."""

    def __init__(self, stop_step):
        self.stop_step = stop_step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= self.stop_step:
            control.should_training_stop = True


# %% 11_checkpoints_and_resume.ipynb cell 10
from pathlib import Path

cut = [StopAtStep(STOP_STEP)]
trainer = Trainer(
    model=fresh_model(),
    args=args,
    train_dataset=tokenized["train"],
    data_collator=DataCollatorWithPadding(tokenizer),
    callbacks=cut,
)
trainer.add_callback(ShowPlan())
trainer.train()
interrupted, interrupted_dir = trainer, Path(args.output_dir)
print("folders written:", sorted(path.name for path in interrupted_dir.iterdir()))


# %% 11_checkpoints_and_resume.ipynb cell 13
resumed = Trainer(  # the same arguments, a fresh model
    model=fresh_model(),
    args=args,
    train_dataset=tokenized["train"],
    data_collator=DataCollatorWithPadding(tokenizer),
)
resumed.add_callback(ShowPlan())
resumed.train(resume_from_checkpoint=True)  # True: the latest checkpoint-N
print(f"resumed run: now at step {resumed.state.global_step} of {args.max_steps}")
