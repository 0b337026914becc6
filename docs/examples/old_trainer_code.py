"""A fine-tuning script as many 2021-2023 tutorials wrote it, for transformers 4.x. Do not run it: it is the input
of `python -m check_old_code docs/examples/old_trainer_code.py` (lesson 17) and of tests/test_check_old_code.py, which
expect every pattern below to be flagged, at these lines, on transformers 5.x.

Each line whose comment starts with 4.x is something a 4.x tutorial did that transformers 5.x refuses or
silently ignores.
"""

import numpy as np
import torch
from datasets import load_dataset
from sklearn.metrics import accuracy_score
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    Trainer,
    TrainerCallback,
    TrainingArguments,
)

MODEL_NAME = "bert-base-uncased"


class WeightedLossTrainer(Trainer):
    """Class-weighted cross-entropy, the way the 4.x guides overrode the loss."""

    def compute_loss(self, model, inputs, return_outputs=False):  # 4.x: no num_items_in_batch
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        weights = torch.tensor([1.0, 3.0], device=outputs.logits.device)
        loss = torch.nn.functional.cross_entropy(outputs.logits, labels, weight=weights)
        return (loss, outputs) if return_outputs else loss


class GradientPrintingTrainer(WeightedLossTrainer):
    """Prints the mean gradient of every attention layer after each backward pass."""

    def training_step(self, model, inputs):  # 4.x: two arguments
        model.train()
        inputs = self._prepare_inputs(inputs)
        loss = self.compute_loss(model, inputs)
        loss.backward()
        for name, param in model.named_parameters():
            if "attention" in name and param.grad is not None:
                print(f"{name}: {param.grad.mean().item():.3e}")
        return loss.detach()

    def evaluation_step(self, model, inputs):  # 4.x tutorials: no Trainer ever had this method
        with torch.no_grad():
            return model(**inputs).loss

    def log(self, logs):  # 4.x: one argument
        logs["custom"] = 1.0
        super().log(logs)

    def _maybe_log_save_evaluate(self, tr_loss, model, trial, epoch, ignore_keys_for_eval):  # 4.x: the 4.2x private signature
        super()._maybe_log_save_evaluate(tr_loss, model, trial, epoch, ignore_keys_for_eval)  # 4.x: 5 of 7


class EpochReport(TrainerCallback):
    """Prints the loss at the end of each epoch."""

    def on_epoch_ended(self, args, state, control, **kwargs):  # 4.x: misspelled, never called
        print(f"epoch {state.epoch} done")

    def on_evaluation(self, args, state, control, metrics=None, **kwargs):  # 4.x: not an event
        print(metrics)


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    return {"accuracy": accuracy_score(labels, np.argmax(logits, axis=-1))}


def main():
    raw = load_dataset("rotten_tomatoes")
    tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)
    encoded = raw.map(lambda batch: tokenizer(batch["text"], truncation=True), batched=True)
    model = AutoModelForSequenceClassification.from_pretrained(MODEL_NAME, num_labels=2)

    args = TrainingArguments(
        output_dir="./results",
        overwrite_output_dir=True,  # 4.x
        evaluation_strategy="epoch",  # 4.x
        save_strategy="epoch",
        learning_rate=2e-5,
        per_gpu_train_batch_size=16,  # 4.x
        per_device_eval_batch_size=64,
        num_train_epochs=3,
        weight_decay=0.01,
        warmup_ratio=0.1,  # 4.x
        logging_dir="./logs",  # 4.x
        group_by_length=True,  # 4.x
        fp16_opt_level="O1",  # 4.x (Apex)
        no_cuda=False,  # 4.x
        include_inputs_for_metrics=True,  # 4.x
        load_best_model_at_end=True,
        metric_for_best_model="accuracy",
    )
    trainer = GradientPrintingTrainer(
        model=model,
        args=args,
        train_dataset=encoded["train"],
        eval_dataset=encoded["validation"],
        tokenizer=tokenizer,  # 4.x
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=compute_metrics,
        callbacks=[EpochReport()],
    )
    trainer.train()
    print(trainer.evaluate())


if __name__ == "__main__":
    main()
