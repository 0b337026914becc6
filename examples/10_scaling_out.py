"""10 · Scaling out: the same Trainer on several processes: the pattern, as a script.

Generated from notebooks/10_scaling_out.ipynb by `python -m tools.examples`; do not edit.
Run: python 10_scaling_out.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
"""

# %% 10_scaling_out.ipynb cell 5
"""Fine-tune a review classifier: the same file on 1 process or many.

python train.py [--model DIR --data DIR] [any TrainingArguments flag]
torchrun --nproc_per_node=2 train.py ...  (or: accelerate launch train.py ...)
"""

import json
from dataclasses import dataclass
from pathlib import Path

import torch
from datasets import DatasetDict, load_from_disk
from transformers import AutoModelForSequenceClassification, AutoTokenizer
from transformers import HfArgumentParser, Trainer, TrainerCallback, TrainingArguments
from transformers import set_seed


@dataclass
class ScriptArguments:
    model: str = ""  # a model folder, or a name on the Hub; empty: the course's model
    data: str = ""  # a DatasetDict saved with save_to_disk; empty: 64 course reviews
    layers: int = 6  # keep the first N layers: smaller, faster


# %% 10_scaling_out.ipynb cell 6
class EachProcess(TrainerCallback):
    """Process zero prints the global batch; every process prints its weights."""

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            size, world = args.per_device_train_batch_size, args.world_size
            steps = args.gradient_accumulation_steps
            print(
                f"world size {world}, global batch {size * world * steps} "
                f"({size} x {world} x {steps}), {state.max_steps} optimizer steps"
            )

    def on_train_end(self, args, state, control, model=None, **kwargs):
        weights = sum(float(p.detach().double().sum()) for p in model.parameters())
        zero = state.is_world_process_zero
        print(f"rank {args.process_index}: world zero {zero}, weights {weights:.6f}")
        if zero:
            summary = {"world_size": args.world_size, "history": state.log_history}
            Path(args.output_dir, "summary.json").write_text(json.dumps(summary))


# %% 10_scaling_out.ipynb cell 7
def load_data(path):
    if path:
        return load_from_disk(path)
    from helpers.data import load_reviews

    reviews = load_reviews()  # your project: load_dataset("rotten_tomatoes")
    return DatasetDict(
        train=reviews["train"].shuffle(seed=0).select(range(64)),
        validation=reviews["validation"].shuffle(seed=0).select(range(32)),
    )


# %% 10_scaling_out.ipynb cell 8
def main(argv=None):
    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
    script, args = parser.parse_args_into_dataclasses(argv)
    set_seed(args.seed)  # the new classification head: the same on every process
    if not script.model:
        from helpers.models import local_model_dir

        script.model = str(local_model_dir())  # your project: a Hub name
    tokenizer = AutoTokenizer.from_pretrained(script.model)
    model = AutoModelForSequenceClassification.from_pretrained(
        script.model, num_labels=2, num_hidden_layers=script.layers
    )
    data = load_data(script.data).map(
        lambda rows: tokenizer(rows["text"], truncation=True, max_length=64),
        batched=True,
    )
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=data["train"],
        eval_dataset=data["validation"],
        processing_class=tokenizer,
        callbacks=[EachProcess()],
    )
    # The stock classifier's loss is a mean of its batch: say so, or the Trainer scales
    # it by processes x accumulation steps (section 3).
    trainer.model_accepts_loss_kwargs = False
    trainer.train()
    if torch.distributed.is_initialized():  # several processes: end them cleanly
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
