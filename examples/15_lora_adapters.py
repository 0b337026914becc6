"""15 · LoRA adapters with PEFT: the pattern, as a script.

Generated from notebooks/15_lora_adapters.ipynb by `python -m tools.examples`; do not edit.
Run: python 15_lora_adapters.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 15_lora_adapters.ipynb cell 4
from peft import LoraConfig, get_peft_model
from transformers import set_seed

from helpers.models import load_model


def course_lora_config(**overrides):
    """LoRA of rank 8 on every linear layer of the encoder, the head trained in full."""
    settings = dict(
        task_type="SEQ_CLS",  # keeps the classification head trainable and saved
        r=8,
        lora_alpha=16,
        lora_dropout=0.0,
        target_modules=["query", "key", "value", "dense"],
    )
    return LoraConfig(**{**settings, **overrides})


def base_classifier(seed=0, layers=None):
    """The course classifier (its 6 layers, or `layers`), its new head from `seed`."""
    set_seed(seed)
    return load_model(num_layers=layers)  # your project: AutoModelFor...from_pretrained


def lora_classifier(config=None, seed=0, layers=None):
    """The course classifier with a LoRA adapter (course_lora_config by default)."""
    return get_peft_model(base_classifier(seed, layers), config or course_lora_config())


# %% 15_lora_adapters.ipynb cell 6
import torch

from helpers import run_dir
from helpers.data import load_reviews
from helpers.models import load_tokenizer

on_gpu = torch.cuda.is_available()
n_train, n_validation, max_length = (3072, 1536, 128) if on_gpu else (384, 192, 64)
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


def accuracy(prediction):
    predicted = prediction.predictions.argmax(-1)
    return {"accuracy": float((predicted == prediction.label_ids).mean())}


# %% 15_lora_adapters.ipynb cell 8
import warnings

from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

# PEFT 0.21 reads the model's old name `is_gradient_checkpointing`; transformers 5.24
# answers with a FutureWarning at every call. Nothing to act on.
warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated")

model = lora_classifier()
model.print_trainable_parameters()
parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("15_lora")),
    num_train_epochs=2,
    per_device_train_batch_size=16,
    learning_rate=3e-3,
    train_sampling_strategy="group_by_length",  # less padding: lesson 09
    logging_steps=8,
    save_strategy="epoch",
    report_to="none",
    seed=42,
    use_cpu=not torch.cuda.is_available(),
    bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
)
(args,) = parser.parse_args_into_dataclasses()
trainer = Trainer(
    model=model,
    args=args,
    train_dataset=data["train"],
    eval_dataset=data["validation"],
    data_collator=DataCollatorWithPadding(tokenizer),
    compute_metrics=accuracy,
)
trainer.add_callback(ShowPlan())
lora_trained = trainer.train()
lora_metrics = trainer.evaluate()
labels = data["validation"]["label"]
majority = max(labels.count(0), labels.count(1)) / len(labels)
print(
    f"LoRA: accuracy {lora_metrics['eval_accuracy']:.3f}; majority class {majority:.3f}"
)
