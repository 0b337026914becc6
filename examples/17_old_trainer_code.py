"""17 · Old Trainer code on 5.x: the pattern, as a script.

Generated from notebooks/17_old_trainer_code.ipynb by `python -m tools.examples`; do not edit.
Run: python 17_old_trainer_code.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 17_old_trainer_code.ipynb cell 15
import torch
from transformers import DataCollatorWithPadding, Trainer


class WeightedLossTrainer(Trainer):
    def compute_loss(
        self, model, inputs, return_outputs=False, num_items_in_batch=None
    ):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        weights = torch.tensor([1.0, 3.0], device=outputs.logits.device)
        loss = torch.nn.functional.cross_entropy(outputs.logits, labels, weight=weights)
        return (loss, outputs) if return_outputs else loss


class EpochReport(TrainerCallback):
    def on_epoch_end(self, args, state, control, **kwargs):  # was on_epoch_ended
        print(f"epoch {state.epoch:.0f} done")

    def on_evaluate(
        self, args, state, control, metrics=None, **kwargs
    ):  # on_evaluation
        print(f"eval_loss {metrics['eval_loss']:.4f}")


def compute_metrics(prediction):  # attributes: the tuple has 3 items with inputs
    predicted = prediction.predictions.argmax(-1)
    return {"accuracy": float((predicted == prediction.label_ids).mean())}


# %% 17_old_trainer_code.ipynb cell 16
from transformers import set_seed

from helpers.data import load_reviews
from helpers.models import load_model, load_tokenizer

on_gpu = torch.cuda.is_available()
num_layers, n_train, max_length = (6, 512, 128) if on_gpu else (2, 64, 64)
set_seed(42)
model = load_model(  # your project: AutoModelForSequenceClassification.from_pretrained
    num_layers=num_layers
)
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
    for split, size in [("train", n_train), ("validation", 32)]
}


# %% 17_old_trainer_code.ipynb cell 17
from transformers import TrainingArguments

from helpers import run_dir

parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(  # overwrite_output_dir, logging_dir, fp16_opt_level: deleted
    output_dir=str(run_dir("17_ported")),
    eval_strategy="epoch",  # was evaluation_strategy
    save_strategy="epoch",
    save_total_limit=1,
    learning_rate=3e-4,
    per_device_train_batch_size=16,  # was per_gpu_train_batch_size
    num_train_epochs=2,
    weight_decay=0.01,
    warmup_steps=0.1,  # was warmup_ratio
    train_sampling_strategy="group_by_length",  # was group_by_length=True
    include_for_metrics=["inputs"],  # was include_inputs_for_metrics=True
    load_best_model_at_end=True,
    metric_for_best_model="accuracy",
    report_to="none",
    use_cpu=not torch.cuda.is_available(),  # was no_cuda
    bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
)
(args,) = parser.parse_args_into_dataclasses()
trainer = WeightedLossTrainer(
    model=model,
    args=args,
    train_dataset=data["train"],
    eval_dataset=data["validation"],
    processing_class=tokenizer,  # was tokenizer=
    data_collator=DataCollatorWithPadding(tokenizer),
    compute_metrics=compute_metrics,
    callbacks=[EpochReport()],
)
trainer.add_callback(ShowPlan())
trainer.train()
print(f"best eval accuracy {trainer.state.best_metric:.3f}")
