"""One exercise of each lesson 01 to 11, checked the way a notebook calls it: in a real Jupyter kernel (python3),
a cell defines the answer and calls ``exercises.qN.check()``; the verdict is displayed once, and no Verdict repr.
Where a lesson has a check that trains and one that does not, the cheaper one runs here: the display is the same
code for every check, and tests/test_exercises.py runs every check in full."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from exercises.checks import lesson_11

ROOT = Path(__file__).resolve().parent.parent

ANSWERS = {
    "01": (
        "q1",
        "def collate_reviews(features, pad_token_id=0):\n"
        "    import torch\n"
        "    n = max(len(f['input_ids']) for f in features)\n"
        "    gap = [n - len(f['input_ids']) for f in features]\n"
        "    ids = [f['input_ids'] + [pad_token_id] * g for f, g in zip(features, gap)]\n"
        "    mask = [[1] * (n - g) + [0] * g for g in gap]\n"
        "    labels = torch.tensor([f['label'] for f in features])\n"
        "    return {'input_ids': torch.tensor(ids), 'attention_mask': torch.tensor(mask), 'labels': labels}",
    ),
    "02": (
        "q2",
        "def names_without_decay(model):\n    import torch\n    found = []\n"
        "    for owner, module in model.named_modules():\n"
        "        for name, _ in module.named_parameters(recurse=False):\n"
        "            if name == 'bias' or isinstance(module, torch.nn.LayerNorm):\n"
        "                found.append(f'{owner}.{name}' if owner else name)\n    return found",
    ),
    "03": (  # q2: the next test starts from q1's answer undefined, in the same kernel
        "q2",
        "schedule_settings = dict(learning_rate=3e-4, lr_scheduler_type='cosine_with_min_lr', warmup_steps=0.25,\n"
        "                         lr_scheduler_kwargs={'min_lr': 3e-5})",
    ),
    "04": (
        "q2",
        "class MyStreamingAccuracy:\n"
        "    def __init__(self):\n        self.right = self.seen = 0\n"
        "    def __call__(self, p, compute_result):\n"
        "        self.right += int((p.predictions.argmax(-1) == p.label_ids).sum()); self.seen += len(p.label_ids)\n"
        "        if not compute_result:\n            return {}\n"
        "        out = {'accuracy': self.right / self.seen}; self.right = self.seen = 0\n        return out",
    ),
    "05": (
        "q2",
        "import math\n"
        "def expected_counts(n, b, a, e):\n    batches = math.ceil(n / b); steps = math.ceil(batches / a)\n"
        "    return {'on_step_end': steps * e, 'on_substep_end': (batches - steps) * e, 'on_epoch_end': e}",
    ),
    "06": (
        "q2",
        "from transformers import TrainerCallback\n"
        "class NoEarlyCheckpoints(TrainerCallback):\n    def __init__(self, first):\n        self.first = first\n"
        "    def on_step_end(self, args, state, control, **kwargs):\n"
        "        control.should_save = control.should_save and state.global_step >= self.first\n"
        "        return control",
    ),
    "07": (
        "q2",
        "import torch.nn.functional as F\n"
        "def my_focal_loss_func(outputs, labels, num_items_in_batch=None):\n"
        "    ce = F.cross_entropy(outputs.logits, labels, reduction='none')\n"
        "    count = len(labels) if num_items_in_batch is None else num_items_in_batch\n"
        "    return ((1 - (-ce).exp()) ** 2 * ce).sum() / count",
    ),
    "08": (
        "q1",
        "import torch\nfrom transformers import TrainerCallback\n"
        "class MyHeadGradientMonitor(TrainerCallback):\n    def __init__(self):\n        self.norms = []\n"
        "    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):\n"
        "        g = [p.grad.flatten() for n, p in model.named_parameters() if n.startswith('classifier')]\n"
        "        self.norms.append(torch.cat(g).norm().item())",
    ),
    "09": (
        "q2",
        "def accumulation_plan(t, m):\n    micro = max(s for s in range(1, min(t, m) + 1) if t % s == 0)\n"
        "    return {'per_device_train_batch_size': micro, 'gradient_accumulation_steps': t // micro}",
    ),
    "18": (
        "q3",
        "def digit_reward(completions, answer, **kwargs):\n"
        "    return [1.0 if c.strip() == a.strip() else 0.2 if len(c.strip()) == 1 and c.strip().isdigit() else 0.0\n"
        "            for c, a in zip(completions, answer)]",
    ),
    "19": (
        "q1",
        "def chat_labels(tokenizer, messages):\n    ids = tokenizer.apply_chat_template(messages)['input_ids']\n"
        "    labels = [-100] * len(ids)\n    for k, m in enumerate(messages):\n        if m['role'] == 'assistant':\n"
        "            a = len(tokenizer.apply_chat_template(messages[:k], add_generation_prompt=True)['input_ids'])\n"
        "            b = len(tokenizer.apply_chat_template(messages[: k + 1])['input_ids'])\n"
        "            labels[a:b] = ids[a:b]\n    return ids, labels",
    ),
    "20": (
        "q2",
        "def training_log_steps(m, every, first):\n    k = every if every >= 1 else -(-m * every // 1)\n"
        "    return [s for s in range(1, m + 1) if s % k == 0 or (first and s == 1)]",
    ),
    "21": (
        "q2",
        "schedule_free_settings = {'optim': 'schedule_free_adamw', 'learning_rate': 2e-3,\n"
        "                          'warmup_steps': 4, 'lr_scheduler_type': 'constant'}",
    ),
    "10": ("q1", "def steps_per_epoch(n, b, p, a):\n    return -(-n // (b * p * a))"),
    "11": ("q1", "from transformers.trainer_utils import get_last_checkpoint as latest_checkpoint"),
}


@pytest.fixture(scope="module")
def run_cells() -> Iterator[Callable[[list[str]], list[Any]]]:
    """One real kernel for the module (starting one and importing the course takes about 10 s): each call runs its
    cells in it, in order, as a learner's notebook would, and returns them with their outputs."""
    notebook = nbformat.v4.new_notebook()
    client = NotebookClient(notebook, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(ROOT)}})

    def run(sources: list[str]) -> list[Any]:
        cells = [nbformat.v4.new_code_cell(source) for source in sources]
        for cell in cells:
            notebook.cells.append(cell)
            client.execute_cell(cell, len(notebook.cells) - 1)
        return cells

    with client.setup_kernel():
        yield run


def test_one_exercise_per_lesson_in_a_real_kernel(run_cells) -> None:
    sources = [
        f"from exercises.checks import lesson_{lesson} as exercises\n{answer}\nexercises.{question}.check()"
        for lesson, (question, answer) in ANSWERS.items()
    ]
    cells = run_cells([*sources, "exercises.q2.check()"])  # lesson 11's q2 left as the stub
    stub = lesson_11.q2.name
    for cell, lesson in zip(cells, [*ANSWERS, stub]):
        shown = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
        assert not [o for o in cell.outputs if o.output_type in ("execute_result", "error")], (lesson, cell.outputs)
        assert "Verdict(status=" not in shown
        expected = "✎ Not attempted yet" if lesson == stub else "✔ Correct"
        assert shown.count(expected) == 1, (lesson, shown)


def _exercise_cells() -> list[tuple[str, str, str]]:
    """(notebook, answer name, cell source) for every ``exercises.qN.check()`` cell of every lesson."""
    import importlib
    import re

    from course_facts.registry import lessons

    found = []
    for lesson in lessons():
        nb = nbformat.read(lesson.path, as_version=4)
        for cell in nb.cells:
            match = re.search(r"exercises\.(q\d)\.check\(\)", cell.source) if cell.cell_type == "code" else None
            if match:
                module = importlib.import_module(f"exercises.checks.lesson_{lesson.number}")
                found.append((lesson.file, getattr(module, match.group(1)).answer_name, cell.source))
    return found


def test_no_exercise_cell_resets_the_answer_when_run_again() -> None:
    """An exercise cell never assigns the answer's name, so a learner who wrote the answer in another cell can
    run the exercise cell again and again without losing it."""
    import ast

    cells = _exercise_cells()
    assert len(cells) >= 20
    for notebook, name, source in cells:
        assigned = {
            target.id
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Assign | ast.AnnAssign)
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name)
        }
        assert name not in assigned, f"{notebook}: the exercise cell sets `{name}` and would reset the answer"


def test_an_answer_written_in_another_cell_survives_running_the_exercise_cell_twice(run_cells) -> None:
    """In a real kernel: the committed exercise cell of lesson 03 (q1), run before, after and again after the
    answer is defined in a cell of its own."""
    notebook, name, source = next(cell for cell in _exercise_cells() if cell[0].startswith("03_"))
    assert name == "cosine_multiplier_at_70"  # which the other test in this kernel leaves undefined
    cells = run_cells(["from exercises.checks import lesson_03 as exercises", source, f"{name} = 0.25", source, source])
    shown = ["".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream") for cell in cells]
    assert "Not attempted" in shown[1], shown[1]
    assert "✔ Correct" in shown[3] and "✔ Correct" in shown[4], (notebook, shown[3:])
