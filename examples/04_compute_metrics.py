"""04 · compute_metrics, evaluation memory and evaluate offline: the pattern, as a script.

Generated from notebooks/04_compute_metrics.ipynb by `python -m tools.examples`; do not edit.
Run: python 04_compute_metrics.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 04_compute_metrics.ipynb cell 4
import numpy as np
import torch

from helpers.data import load_reviews
from helpers.models import load_model, load_tokenizer

gpu = torch.cuda.is_available()
device, max_length = ("cuda", 128) if gpu else ("cpu", 64)
sizes = dict(train=5000, validation=1000) if gpu else dict(train=640, validation=320)
kwargs = dict(padding=True, truncation=True, max_length=max_length, return_tensors="pt")
reviews = load_reviews()  # your project: datasets.load_dataset("rotten_tomatoes")
tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained(name)
encoder = load_model().bert.to(device)  # your project: AutoModel.from_pretrained(name)


@torch.inference_mode()
def embed(texts, batch_size=64):
    """Mean-pooled encoder embeddings; batches sorted by length, so little padding."""
    order = np.argsort([len(text) for text in texts])
    vectors = np.zeros((len(texts), encoder.config.hidden_size), dtype=np.float32)
    for start in range(0, len(texts), batch_size):
        rows = order[start : start + batch_size]
        batch = tokenizer([texts[row] for row in rows], **kwargs).to(device)
        hidden = encoder(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1)
        vectors[rows] = ((hidden * mask).sum(1) / mask.sum(1)).float().cpu().numpy()
    return vectors


def embedded_split(name, count):
    split = reviews[name].shuffle(seed=0).select(range(min(count, len(reviews[name]))))
    return split.add_column("embeddings", list(embed(split["text"])))


embedded = {name: embedded_split(name, count) for name, count in sizes.items()}


# %% 04_compute_metrics.ipynb cell 5
from torch.nn.functional import cross_entropy
from transformers.modeling_outputs import SequenceClassifierOutput


class ReviewHead(torch.nn.Module):
    """Dropout and a linear layer on a sentence embedding: two logits, and the loss."""

    main_input_name = "embeddings"  # what include_for_metrics=["inputs"] hands over

    def __init__(self, hidden_size=384, num_labels=2, dropout=0.1):
        super().__init__()
        self.dropout = torch.nn.Dropout(dropout)
        self.classifier = torch.nn.Linear(hidden_size, num_labels)

    def forward(self, embeddings, labels=None):
        logits = self.classifier(self.dropout(embeddings))
        loss = None if labels is None else cross_entropy(logits, labels)
        return SequenceClassifierOutput(loss=loss, logits=logits)


# %% 04_compute_metrics.ipynb cell 6
from sklearn.metrics import accuracy_score, f1_score
from transformers import Trainer, TrainingArguments, set_seed

from helpers import run_dir


def compute_metrics(eval_prediction):
    logits, labels = eval_prediction.predictions, eval_prediction.label_ids
    if isinstance(logits, tuple):  # a model that also returns hidden states
        logits = logits[0]
    preds = np.argmax(logits, axis=-1)  # the class with the largest logit
    return {"accuracy": accuracy_score(labels, preds), "f1": f1_score(labels, preds)}


parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("04_pattern")),
    eval_strategy="epoch",  # evaluate, and call compute_metrics, after every epoch
    logging_strategy="epoch",
    num_train_epochs=6,
    learning_rate=3e-3,
    per_device_train_batch_size=32,
    bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
    report_to="none",
    seed=42,
)
(args,) = parser.parse_args_into_dataclasses()
set_seed(42)  # before the model is built: its new weights are random
trainer = Trainer(
    model=ReviewHead(),
    args=args,
    train_dataset=embedded["train"],
    eval_dataset=embedded["validation"],
    compute_metrics=compute_metrics,
)
trainer.add_callback(ShowPlan())
trainer.train()
final = trainer.evaluate()
print(f"validation accuracy {final['eval_accuracy']:.3f}, f1 {final['eval_f1']:.3f}")
