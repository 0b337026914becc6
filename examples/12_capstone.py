"""12 · Capstone: rare positives: the pattern, as a script.

Generated from notebooks/12_capstone.ipynb by `python -m tools.examples`; do not edit.
Run: python 12_capstone.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 12_capstone.ipynb cell 4
from sklearn.metrics import accuracy_score, precision_recall_fscore_support


def minority_metrics(prediction):
    """Accuracy, and precision, recall and F1 of the rare class, `positive` (1)."""
    labels, predicted = prediction.label_ids, prediction.predictions.argmax(-1)
    precision, recall, f1, _ = precision_recall_fscore_support(
        labels, predicted, average="binary", zero_division=0
    )
    accuracy = accuracy_score(labels, predicted)
    return {"accuracy": accuracy, "precision": precision, "recall": recall, "f1": f1}


# %% 12_capstone.ipynb cell 5
import torch
from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

from helpers import run_dir
from helpers.capstone import load_data, model_init
from helpers.models import load_tokenizer


def make_starter_trainer():
    """The capstone's starter: a plain Trainer on the capstone's data, untrained. It
    runs, but its mean loss lets the rare class be ignored, and it keeps the last
    model."""
    data = load_data()  # your project: load_dataset(...), tokenized
    parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
    parser.set_defaults(
        output_dir=str(run_dir("12_starter")),
        seed=42,
        report_to="none",
        num_train_epochs=3,
        learning_rate=5e-3,
        per_device_train_batch_size=16,
        per_device_eval_batch_size=128,
        eval_strategy="epoch",
        save_strategy="no",
        logging_steps=10,
        use_cpu=not torch.cuda.is_available(),
        bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
    )
    (args,) = parser.parse_args_into_dataclasses()
    trainer = Trainer(
        model_init=model_init,  # your project: a from_pretrained in a function
        args=args,
        train_dataset=data["train"],
        eval_dataset=data["validation"],
        data_collator=DataCollatorWithPadding(load_tokenizer()),  # your project: yours
        compute_metrics=minority_metrics,
    )
    trainer.add_callback(ShowPlan())
    return trainer


# %% 12_capstone.ipynb cell 7
starter = make_starter_trainer()
starter.train()
f1s = [log["eval_f1"] for log in starter.state.log_history if "eval_f1" in log]
print(f"starter: validation minority F1 {f1s[-1]:.3f}")
