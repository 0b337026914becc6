"""07 · Custom losses with `compute_loss`: the pattern, as a script.

Generated from notebooks/07_custom_loss.ipynb by `python -m tools.examples`; do not edit.
Run: python 07_custom_loss.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 07_custom_loss.ipynb cell 4
import torch
import torch.nn.functional as F
from transformers.modeling_outputs import SequenceClassifierOutput

from helpers.data import imbalanced_review_features

positives = 512 if torch.cuda.is_available() else 64  # 640 training reviews on a CPU
# your project: load_dataset("...") and your tokenizer; here 1 : 9 MiniLM features
imbalanced_train, imbalanced_validation = imbalanced_review_features(positives)


class LinearHead(torch.nn.Module):
    """A linear classifier on ready-made features (a mean CE given labels)."""

    def __init__(self, width=384):
        super().__init__()
        self.linear = torch.nn.Linear(width, 2)

    def forward(self, features, labels=None):  # no **kwargs
        logits = self.linear(features)
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return SequenceClassifierOutput(loss=loss, logits=logits)


# %% 07_custom_loss.ipynb cell 5
from transformers import Trainer


def sum_over_count(per_review, num_items_in_batch):
    """The sum over the count of the whole accumulated batch, or of this batch."""
    count = per_review.numel() if num_items_in_batch is None else num_items_in_batch
    return per_review.sum() / count


class WeightedLossTrainer(Trainer):
    """Class-weighted cross-entropy: `WeightedLossTrainer(..., class_weights=...)`."""

    def __init__(self, *args, class_weights, **kwargs):
        super().__init__(*args, **kwargs)
        self.class_weights = class_weights
        self.model_accepts_loss_kwargs = True  # always count: see below

    def compute_loss(
        self, model, inputs, return_outputs=False, num_items_in_batch=None
    ):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs.logits
        weights = self.class_weights.to(logits.device, logits.dtype)
        per_review = F.cross_entropy(logits, labels, weight=weights, reduction="none")
        loss = sum_over_count(per_review, num_items_in_batch)  # over all processes
        if num_items_in_batch is not None and self.args.average_tokens_across_devices:
            loss = loss * self.accelerator.num_processes  # DDP averages: undo that
        return (loss, outputs) if return_outputs else loss


# %% 07_custom_loss.ipynb cell 7
import numpy as np
from sklearn.metrics import f1_score, recall_score
from transformers import TrainingArguments, set_seed

import helpers


def compute_metrics(prediction):
    """Recall and F1 of the minority (positive) class."""
    predicted, labels = np.argmax(prediction.predictions, -1), prediction.label_ids
    recall = recall_score(labels, predicted, zero_division=0)
    return {"recall": recall, "f1": f1_score(labels, predicted, zero_division=0)}


parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(helpers.run_dir("07_imbalanced")),  # your project: any folder
    per_device_train_batch_size=64,
    num_train_epochs=10,
    learning_rate=1e-2,
    logging_steps=25,
    save_strategy="no",
    seed=0,
    bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
)
(args,) = parser.parse_args_into_dataclasses()


# %% 07_custom_loss.ipynb cell 8
set_seed(0)  # before the head is built: the same start for every loss
trainer = WeightedLossTrainer(
    model=LinearHead(),
    args=args,
    train_dataset=imbalanced_train,
    compute_metrics=compute_metrics,
    class_weights=torch.tensor([1.0, 9.0]),
)
trainer.add_callback(ShowPlan())
trainer.train()
weighted_metrics = trainer.evaluate(imbalanced_validation)
print({key: round(weighted_metrics[f"eval_{key}"], 3) for key in ("recall", "f1")})
