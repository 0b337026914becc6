"""01 · Your first fine-tune, and the anatomy of the Trainer: the pattern, as a script.

Generated from notebooks/01_first_fine_tune.ipynb by `python -m tools.examples`; do not edit.
Run: python 01_first_fine_tune.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 01_first_fine_tune.ipynb cell 4
import torch
from transformers import set_seed

from helpers.data import load_reviews
from helpers.models import load_model, load_tokenizer

set_seed(42)  # the new classification head is drawn at random: seed it first
ON_GPU = torch.cuda.is_available()
max_length = 128 if ON_GPU else 64  # tokens kept per review
# your project: AutoModelForSequenceClassification.from_pretrained(name, num_labels=2)
model = load_model()
tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained(name)
reviews = load_reviews()  # your project: datasets.load_dataset(name)
if not ON_GPU:  # a seeded sample: 256 reviews to train on, 200 to evaluate
    for split, size in {"train": 256, "validation": 200, "test": 200}.items():
        reviews[split] = reviews[split].shuffle(seed=0).select(range(size))


def tokenize(batch):
    return tokenizer(batch["text"], truncation=True, max_length=max_length)


tokenized = reviews.map(tokenize, batched=True, remove_columns=["text", "movie"])
print(tokenized["train"])


# %% 01_first_fine_tune.ipynb cell 6
from sklearn.metrics import f1_score


def compute_metrics(prediction):
    predicted = prediction.predictions.argmax(axis=-1)
    return {
        "accuracy": float((predicted == prediction.label_ids).mean()),
        "f1": float(f1_score(prediction.label_ids, predicted)),
    }


# %% 01_first_fine_tune.ipynb cell 8
from transformers import Trainer, TrainingArguments

from helpers import run_dir

parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=run_dir("01_fine_tune"),  # your project: any folder, such as "runs/01"
    num_train_epochs=3 if ON_GPU else 2,
    learning_rate=5e-5 if ON_GPU else 3e-4,
    per_device_train_batch_size=32 if ON_GPU else 16,
    per_device_eval_batch_size=256 if ON_GPU else 128,
    warmup_steps=0.1,  # below 1: a fraction of all steps
    weight_decay=0.01,
    eval_strategy="epoch",
    logging_steps=5,
    save_strategy="no",
    report_to="none",
    seed=42,
    bf16=ON_GPU and torch.cuda.is_bf16_supported(),
)
(args,) = parser.parse_args_into_dataclasses()
trainer = Trainer(
    model=model,
    args=args,
    train_dataset=tokenized["train"],
    eval_dataset=tokenized["validation"],
    processing_class=tokenizer,
    compute_metrics=compute_metrics,
)
trainer.add_callback(ShowPlan())
train_result = trainer.train()
last = [log for log in trainer.state.log_history if "eval_accuracy" in log][-1]
print(f"validation accuracy {last['eval_accuracy']:.3f} at epoch {last['epoch']:g}")
