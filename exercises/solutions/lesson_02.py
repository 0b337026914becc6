"""Reference solutions for lesson 02's exercises."""

from __future__ import annotations

# Exercise 1: effective batch 16, at most 4 reviews per forward pass, exactly 3 optimizer updates.
batching_settings = {"per_device_train_batch_size": 4, "gradient_accumulation_steps": 4, "max_steps": 3}


# Exercise 2: the parameters Trainer leaves out of weight decay.
def names_without_decay(model):
    """Every bias and every LayerNorm parameter: what Trainer puts in the weight_decay=0.0 group."""
    import torch

    layer_norms = {name for name, module in model.named_modules() if isinstance(module, torch.nn.LayerNorm)}
    return [
        name for name, _ in model.named_parameters() if name.endswith("bias") or name.rsplit(".", 1)[0] in layer_norms
    ]


# Exercise 3: keep the checkpoint with the best eval accuracy, at most 2 on disk, evaluate every 2 updates.
best_model_settings = {
    "eval_strategy": "steps",
    "eval_steps": 2,
    "save_strategy": "steps",
    "save_steps": 2,
    "save_total_limit": 2,
    "load_best_model_at_end": True,
    "metric_for_best_model": "accuracy",
}
