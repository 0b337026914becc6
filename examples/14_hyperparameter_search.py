"""14 · Hyperparameter search: the pattern, as a script.

Generated from notebooks/14_hyperparameter_search.ipynb by `python -m tools.examples`; do not edit.
Run: python 14_hyperparameter_search.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 14_hyperparameter_search.ipynb cell 4
import optuna
import torch
from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

from helpers import run_dir
from helpers.data import load_reviews
from helpers.embedding_head import course_embedding_classifier
from helpers.models import load_tokenizer

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


def model_init(trial=None):  # a new, untrained head for every trial
    return course_embedding_classifier()  # your project: ...from_pretrained(...)


def hp_space(trial):
    return {
        "learning_rate": trial.suggest_float("learning_rate", 1e-4, 1e-1, log=True),
        "num_train_epochs": trial.suggest_int("num_train_epochs", 1, 4),
    }


# %% 14_hyperparameter_search.ipynb cell 5
from transformers.trainer_callback import PrinterCallback

parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("14_search")),
    per_device_train_batch_size=16,
    eval_strategy="epoch",  # an evaluation per epoch: the objective
    logging_strategy="epoch",
    save_strategy="no",
    report_to="none",
    seed=42,
    disable_tqdm=True,  # no table per trial
    use_cpu=not torch.cuda.is_available(),
    bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
)
(args,) = parser.parse_args_into_dataclasses()
trainer = Trainer(
    model_init=model_init,
    args=args,
    train_dataset=data["train"],
    eval_dataset=data["validation"],
    data_collator=DataCollatorWithPadding(tokenizer),
)
trainer.add_callback(ShowPlan())
trainer.remove_callback(PrinterCallback)  # disable_tqdm would print every log


# %% 14_hyperparameter_search.ipynb cell 8
optuna.logging.set_verbosity(optuna.logging.WARNING)  # the lesson prints the trials
storage = optuna.storages.InMemoryStorage()
best = trainer.hyperparameter_search(
    hp_space=hp_space,
    compute_objective=lambda metrics: metrics["eval_loss"],
    direction="minimize",
    n_trials=10,
    backend="optuna",
    sampler=optuna.samplers.TPESampler(seed=7),
    pruner=optuna.pruners.NopPruner(),
    storage=storage,
    study_name="pattern",
)
print(best)


# %% 14_hyperparameter_search.ipynb cell 10
import dataclasses

final = Trainer(
    model_init=model_init,
    args=dataclasses.replace(
        args,
        output_dir=str(run_dir("14_final")),
        disable_tqdm=False,  # the progress table again
        **best.hyperparameters,
    ),
    train_dataset=data["train"],
    eval_dataset=data["validation"],
    data_collator=DataCollatorWithPadding(tokenizer),
)
final.add_callback(ShowPlan())
final.train()
final_loss = [log["eval_loss"] for log in final.state.log_history if "eval_loss" in log]
print(f"final run: eval_loss {final_loss[-1]:.4f}; best trial {best.objective:.4f}")
