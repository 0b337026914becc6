"""08 · `training_step`, gradient monitoring, and other methods to override: the pattern, as a script.

Generated from notebooks/08_training_step_and_gradients.ipynb by `python -m tools.examples`; do not edit.
Run: python 08_training_step_and_gradients.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 08_training_step_and_gradients.ipynb cell 3
import copy
import re

import torch
from transformers import Trainer, TrainingArguments, set_seed

from helpers import run_dir
from helpers.data import load_reviews
from helpers.models import load_model, load_tokenizer

gpu = torch.cuda.is_available()
n_train, num_layers, max_length = (2048, 6, 64) if gpu else (256, 2, 32)
tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained(name)
reviews = load_reviews()  # your project: datasets.load_dataset("rotten_tomatoes")


def tokenize(batch):  # short reviews: this lesson is about mechanics
    return tokenizer(batch["text"], truncation=True, max_length=max_length)


demo_train = reviews["train"].shuffle(seed=0).select(range(n_train))
demo_train = demo_train.map(tokenize, batched=True, remove_columns=["text", "movie"])
set_seed(0)  # the model's new classification head is drawn at random
base_model = load_model(num_layers=num_layers)  # your project: from_pretrained(name)


# %% 08_training_step_and_gradients.ipynb cell 4
def layer_group(name):  # "bert.encoder.layer.0.x.weight" -> "bert.encoder.layer.0"
    numbered = re.match(r"(.*?\.\d+)\.", name)
    return numbered.group(1) if numbered else ".".join(name.split(".")[:-1][:2])


def gradient_norms_by_layer(model):
    """{layer: the L2 norm of its parameters' gradients}"""
    squares = {}
    for name, param in model.named_parameters():
        if param.grad is not None:
            layer = layer_group(name)
            squares[layer] = squares.get(layer, 0) + param.grad.pow(2).sum()
    return {k: float(v.sqrt()) for k, v in squares.items()}


# %% 08_training_step_and_gradients.ipynb cell 5
class LayerNormTrainer(Trainer):
    """The default step, then each layer's gradient norm, once per optimizer step."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.layer_norms = []  # one {layer: norm} per optimizer step

    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)  # + backward
        if self.accelerator.sync_gradients:  # the last micro-batch of the step
            self.layer_norms.append(gradient_norms_by_layer(model))
        return loss


parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("08_pattern")),
    per_device_train_batch_size=16,
    num_train_epochs=1,
    learning_rate=5e-5 if gpu else 1e-4,
    logging_steps=4,
    save_strategy="no",
    report_to="none",
    seed=0,
    bf16=gpu and torch.cuda.is_bf16_supported(),
)
(args,) = parser.parse_args_into_dataclasses()
trainer = LayerNormTrainer(
    copy.deepcopy(base_model),
    args,
    train_dataset=demo_train,
    processing_class=tokenizer,
)
trainer.add_callback(ShowPlan())
trainer.train()
last = trainer.layer_norms[-1]  # the last optimizer step's norms
bottom, top = last["bert.embeddings"], last["classifier"]
print(f"last step's gradient norms: embeddings {bottom:.4f}, classifier {top:.4f}")
