"""06 · Callback control: the pattern, as a script.

Generated from notebooks/06_callback_control.ipynb by `python -m tools.examples`; do not edit.
Run: python 06_callback_control.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 06_callback_control.ipynb cell 4
import torch
from transformers import set_seed

from helpers.data import load_reviews
from helpers.models import load_model, load_tokenizer

gpu = torch.cuda.is_available()
n_reviews, num_layers, max_length = (512, 6, 128) if gpu else (64, 2, 64)
set_seed(42)  # the new classification head is drawn at random: seed it first
model = load_model(num_layers=num_layers)  # your project: from_pretrained(name)
tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained(name)
reviews = load_reviews()  # your project: datasets.load_dataset("rotten_tomatoes")


def tokenize(batch):
    return tokenizer(batch["text"], truncation=True, max_length=max_length)


data = {}
for name in ("train", "validation"):
    data[name] = reviews[name].shuffle(seed=0).select(range(n_reviews))
    data[name] = data[name].map(tokenize, batched=True)


# %% 06_callback_control.ipynb cell 5
from transformers import Trainer, TrainingArguments

from helpers import run_dir


class CloseLookAtTheStart(TrainerCallback):
    """Log each of the first `steps` optimizer steps, then evaluate once."""

    def __init__(self, steps=3):
        self.steps = steps

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step <= self.steps:
            control.should_log = True
        if state.global_step == self.steps:
            control.should_evaluate = True


parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("06_pattern")),
    num_train_epochs=2,
    per_device_train_batch_size=8,
    learning_rate=1.5e-4 if gpu else 3e-4,
    logging_steps=8,
    eval_strategy="epoch",
    save_strategy="no",
    report_to="none",
    seed=42,
    bf16=gpu and torch.cuda.is_bf16_supported(),
)
(args,) = parser.parse_args_into_dataclasses()
trainer = Trainer(
    model=model,
    args=args,
    train_dataset=data["train"],
    eval_dataset=data["validation"],
    processing_class=tokenizer,
    callbacks=[CloseLookAtTheStart(steps=3)],
)
trainer.add_callback(ShowPlan())
trainer.train()


# %% 06_callback_control.ipynb cell 6
def logged(trainer, key):
    """(step, value) of each entry of the trainer's log history that has `key`."""
    return [(e["step"], e[key]) for e in trainer.state.log_history if key in e]


print("training loss logged at steps:", [step for step, _ in logged(trainer, "loss")])
evaluated = [step for step, _ in logged(trainer, "eval_loss")]
print(f"evaluated {len(evaluated)} times, first at step {evaluated[0]}")
