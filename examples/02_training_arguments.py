"""02 · TrainingArguments, group by group: the pattern, as a script.

Generated from notebooks/02_training_arguments.ipynb by `python -m tools.examples`; do not edit.
Run: python 02_training_arguments.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 02_training_arguments.ipynb cell 4
import torch
from transformers import DataCollatorWithPadding, Trainer, TrainingArguments, set_seed

from helpers.data import load_reviews
from helpers.models import load_model, load_tokenizer

set_seed(42)  # the new classification head is drawn at random: seed first
ON_GPU = torch.cuda.is_available()
# your project: AutoModelForSequenceClassification.from_pretrained(name, num_labels=2)
model = load_model(num_layers=6 if ON_GPU else 2)  # a CPU keeps 2 of the 6 layers
tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained(name)
reviews = load_reviews()  # your project: datasets.load_dataset(name)


def tokenize(batch):
    return tokenizer(batch["text"], truncation=True, max_length=64 if ON_GPU else 32)


data = {}  # a seeded sample of each split, tokenized
for split, size in {"train": 512 if ON_GPU else 64, "validation": 16}.items():
    sample = reviews[split].shuffle(seed=0).select(range(size))
    data[split] = sample.map(tokenize, batched=True, remove_columns=["text", "movie"])
collator = DataCollatorWithPadding(tokenizer)


# %% 02_training_arguments.ipynb cell 5
from helpers import run_dir

parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=run_dir("02_pattern"),  # your project: any folder
    # batch and duration (section 1)
    per_device_train_batch_size=8,
    gradient_accumulation_steps=2,
    num_train_epochs=2,
    # optimizer (section 2)
    learning_rate=3e-4,
    weight_decay=0.01,
    max_grad_norm=1.0,
    # when to log, evaluate and save (sections 3 and 4)
    logging_steps=2,
    eval_strategy="steps",
    eval_steps=4,
    save_strategy="no",
    # reproducibility, precision, reporting (section 5)
    seed=42,
    bf16=ON_GPU and torch.cuda.is_bf16_supported(),
    report_to="none",
)
(args,) = parser.parse_args_into_dataclasses()
trainer = Trainer(
    model=model,
    args=args,
    train_dataset=data["train"],
    eval_dataset=data["validation"],
    data_collator=collator,
)
trainer.add_callback(ShowPlan())
train_result = trainer.train()
print(f"{train_result.global_step} updates, loss {train_result.training_loss:.3f}")
