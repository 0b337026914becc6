"""21 · An optimizer of your own: the pattern, as a script.

Generated from notebooks/21_optimizers.ipynb by `python -m tools.examples`; do not edit.
Run: python 21_optimizers.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 21_optimizers.ipynb cell 3
import torch


class MuonWithAdamW(torch.optim.Optimizer):
    """torch's Muon for the parameter groups marked `"muon": True`, AdamW for the
    others, as one optimizer: the groups are shared, so one scheduler sets both."""

    def __init__(self, param_groups, muon_kwargs=None, adamw_kwargs=None):
        muon = [group for group in param_groups if group["muon"]]
        rest = [group for group in param_groups if not group["muon"]]
        super().__init__(muon + rest, defaults={})  # Muon's groups come first
        self.muon = torch.optim.Muon(muon, **(muon_kwargs or {}))
        self.adamw = torch.optim.AdamW(rest, **(adamw_kwargs or {}))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None if closure is None else torch.enable_grad()(closure)()
        self.muon.step()
        self.adamw.step()
        return loss

    def state_dict(self):  # what a checkpoint saves: both states
        return {"muon": self.muon.state_dict(), "adamw": self.adamw.state_dict()}

    def load_state_dict(self, state_dict):
        self.muon.load_state_dict(state_dict["muon"])
        self.adamw.load_state_dict(state_dict["adamw"])
        self.param_groups = self.muon.param_groups + self.adamw.param_groups


# %% 21_optimizers.ipynb cell 4
from transformers import Trainer


class MuonTrainer(Trainer):
    """A Trainer that trains with MuonWithAdamW: Muon, at its own peak rate
    `muon_lr`, for the hidden Linear weights; AdamW at `learning_rate` for the rest."""

    muon_lr = 0.02  # Muon's peak rate; set it on the class or on an instance

    def create_optimizer(self, model=None):
        model = self.model if model is None else model
        hidden = {
            id(module.weight)
            for module in model.base_model.modules()
            if isinstance(module, torch.nn.Linear)
        }
        decay_names = self.get_decay_parameter_names(model)
        muon, decay, no_decay = [], [], []
        for name, parameter in model.named_parameters():
            if not parameter.requires_grad:
                continue
            if id(parameter) in hidden:
                muon.append(parameter)
            else:
                (decay if name in decay_names else no_decay).append(parameter)
        rate, weight_decay = self.args.learning_rate, self.args.weight_decay
        self.optimizer = MuonWithAdamW(
            [
                {"params": muon, "muon": True, "weight_decay": weight_decay},
                {"params": decay, "muon": False, "weight_decay": weight_decay},
                {"params": no_decay, "muon": False, "weight_decay": 0.0},
            ],
            muon_kwargs={"lr": self.muon_lr},
            adamw_kwargs={"lr": rate},
        )
        return self.optimizer


# %% 21_optimizers.ipynb cell 6
from transformers import DataCollatorWithPadding, TrainingArguments, set_seed

from helpers import run_dir
from helpers.data import load_reviews
from helpers.models import load_model, load_tokenizer

num_layers, n_train = (6, 512) if torch.cuda.is_available() else (2, 64)
set_seed(1)  # the new head is drawn from torch's generator
model = load_model(  # your project: AutoModelForSequenceClassification.from_pretrained
    num_layers=num_layers
)
tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained()
raw = load_reviews()  # your project: load_dataset("rotten_tomatoes")
reviews = {  # a seeded slice of each split, tokenized; the collator pads each batch
    split: raw[split]
    .shuffle(seed=0)
    .select(range(size))
    .map(
        lambda batch: tokenizer(batch["text"], truncation=True, max_length=64),
        batched=True,
        remove_columns=["text", "movie"],
    )
    for split, size in [("train", n_train), ("validation", 128)]
}


# %% 21_optimizers.ipynb cell 7

parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("21_pattern")),
    learning_rate=1e-3,  # both optimizers' peak rate
    weight_decay=0.01,
    lr_scheduler_type="linear",
    warmup_steps=0.1,
    per_device_train_batch_size=16,
    num_train_epochs=2,
    logging_steps=4,
    save_strategy="no",
    report_to="none",
    seed=1,
    use_cpu=not torch.cuda.is_available(),
    bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
)
(args,) = parser.parse_args_into_dataclasses()
trainer = MuonTrainer(
    model=model,
    args=args,
    train_dataset=reviews["train"],
    data_collator=DataCollatorWithPadding(tokenizer),
)
trainer.add_callback(ShowPlan())
train_result = trainer.train()
print(
    f"Muon + AdamW: mean training loss {train_result.training_loss:.3f}",
    f"over {train_result.global_step} updates",
)
