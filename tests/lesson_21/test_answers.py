"""Lesson 21's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

from exercise_cases import answer_tests


def groups_by_name_lists(model, decay_names, learning_rate, weight_decay):
    """Four groups built from two name lists: the head is whatever base_model does not hold."""
    body = {name for name, _ in model.base_model.named_parameters()}
    prefix = model.base_model_prefix + "."
    groups = []
    for in_body in (True, False):
        for decayed in (True, False):
            params = [
                p
                for n, p in model.named_parameters()
                if (n.removeprefix(prefix) in body and n.startswith(prefix)) == in_body
                and (n in decay_names) == decayed
            ]
            if params:
                rate = learning_rate if in_body else learning_rate * 10
                groups.append({"params": params, "lr": rate, "weight_decay": weight_decay if decayed else 0.0})
    return groups


def groups_with_default_rate(model, decay_names, learning_rate, weight_decay):
    """The body's groups carry no 'lr': AdamW's lr= fills it in; a tuple of groups, a generator of params."""
    head = [p for p in model.parameters() if all(p is not q for q in model.base_model.parameters())]
    head_ids = {id(p) for p in head}
    decayed = {id(p) for n, p in model.named_parameters() if n in decay_names}
    body = [p for p in model.parameters() if id(p) not in head_ids]
    return (
        {"params": (p for p in body if id(p) in decayed), "weight_decay": weight_decay},
        {"params": [p for p in body if id(p) not in decayed], "weight_decay": 0.0},
        {"params": [p for p in head if id(p) in decayed], "lr": 10 * learning_rate, "weight_decay": weight_decay},
        {"params": [p for p in head if id(p) not in decayed], "lr": 10 * learning_rate, "weight_decay": 0},
    )


def head_by_classifier_name(model, decay_names, learning_rate, weight_decay):
    """The head found by BERT's name for it: right on BERT, wrong on a Llama (`score`)."""
    groups = []
    for name, p in model.named_parameters():
        rate = 10 * learning_rate if name.startswith("classifier") else learning_rate
        groups.append({"params": [p], "lr": rate, "weight_decay": weight_decay if name in decay_names else 0.0})
    return groups


def no_weight_decay_split(model, decay_names, learning_rate, weight_decay):
    """Rates right, but every parameter decayed: biases and LayerNorm weights too."""
    body = {id(p) for p in model.base_model.parameters()}
    return [
        {"params": [p for p in model.parameters() if id(p) in body], "weight_decay": weight_decay},
        {
            "params": [p for p in model.parameters() if id(p) not in body],
            "lr": 10 * learning_rate,
            "weight_decay": weight_decay,
        },
    ]


def head_twice(model, decay_names, learning_rate, weight_decay):
    """All parameters at the base rate, then the head again at 10x: torch refuses the repeat."""
    head = [p for n, p in model.named_parameters() if not n.startswith(model.base_model_prefix)]
    return [
        {"params": list(model.parameters()), "weight_decay": weight_decay},
        {"params": head, "lr": 10 * learning_rate, "weight_decay": weight_decay},
    ]


def head_left_out(model, decay_names, learning_rate, weight_decay):
    """Only the body's parameters: the head is never trained."""
    return [
        {"params": [p for n, p in model.base_model.named_parameters() if n in decay_names], "weight_decay": 0.01},
        {"params": [p for n, p in model.base_model.named_parameters() if n not in decay_names], "weight_decay": 0.0},
    ]


def head_at_the_base_rate_body_slower(model, decay_names, learning_rate, weight_decay):
    """The ratio right, the wrong way round: the body at learning_rate / 10, the head at learning_rate."""
    body = {id(p) for p in model.base_model.parameters()}
    return [
        {
            "params": [p],
            "lr": learning_rate / 10 if id(p) in body else learning_rate,
            "weight_decay": weight_decay if n in decay_names else 0.0,
        }
        for n, p in model.named_parameters()
    ]


CORRECT = {
    "q1": [groups_by_name_lists, groups_with_default_rate],
    "q2": [
        {"optim": "schedule_free_adamw", "learning_rate": 0.002, "warmup_steps": 4, "lr_scheduler_type": "constant"},
        {
            "lr_scheduler_type": "constant",
            "warmup_steps": 4,
            "learning_rate": 2e-3,
            "optim": "schedule_free_adamw",
            "weight_decay": 0.01,
            "optim_args": "weight_lr_power=2.0",
        },
    ],
}

MISTAKES = {
    "q1": [
        (head_by_classifier_name, "not by its name"),
        (no_weight_decay_split, "split the body and the head by decay_names"),
        (head_twice, "appear in two groups"),
        (head_left_out, "leave out"),
        (head_at_the_base_rate_body_slower, "not learning_rate"),
    ],
    "q2": [
        (
            {
                "optim": "schedule_free_adamw",
                "learning_rate": 2e-3,
                "warmup_steps": 0.1,
                "lr_scheduler_type": "constant",
            },
            "a count of updates",
        ),
        ({"optim": "schedule_free_adamw", "learning_rate": 2e-3, "warmup_steps": 4}, "keep the scheduler constant"),
        (
            {
                "optim": "schedule_free_adamw",
                "learning_rate": 2e-3,
                "warmup_steps": 4,
                "lr_scheduler_type": "constant_with_warmup",
            },
            "warms up twice",
        ),
        ({"learning_rate": 2e-3, "warmup_steps": 4, "lr_scheduler_type": "constant"}, "optim='schedule_free_adamw'"),
        ({"optim": "schedule_free_adamw", "learning_rate": 2e-3, "lr_scheduler_type": "constant"}, "warm up over"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
