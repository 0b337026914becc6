"""One exercise of each lesson 01 to 11, checked the way a notebook calls it: in a real Jupyter kernel (python3),
a cell defines the answer and calls ``exercises.qN.check()``; the verdict is displayed once, and no Verdict repr."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

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
        "q1",
        "batching_settings = {'per_device_train_batch_size': 4, 'gradient_accumulation_steps': 4, 'max_steps': 3}",
    ),
    "03": ("q1", "cosine_multiplier_at_70 = 0.25"),
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
        "q1",
        "from transformers import TrainerCallback\n"
        "class EvaluateAtSteps(TrainerCallback):\n    def __init__(self, steps):\n        self.steps = steps\n"
        "    def on_step_end(self, args, state, control, **kwargs):\n"
        "        if state.global_step in self.steps:\n            control.should_evaluate = True",
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
    "10": ("q1", "def steps_per_epoch(n, b, p, a):\n    return -(-n // (b * p * a))"),
    "11": ("q1", "from transformers.trainer_utils import get_last_checkpoint as latest_checkpoint"),
}


def test_one_exercise_per_lesson_in_a_real_kernel() -> None:
    cells = []
    for lesson, (question, answer) in ANSWERS.items():
        cells.append(
            nbformat.v4.new_code_cell(
                f"from helpers.checks import lesson_{lesson} as exercises\n{answer}\nexercises.{question}.check()"
            )
        )
    cells.append(nbformat.v4.new_code_cell("exercises.q2.check()"))  # lesson 11's q2 left as the stub
    notebook = nbformat.v4.new_notebook(cells=cells)
    NotebookClient(notebook, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(ROOT)}}).execute()
    for cell, lesson in zip(notebook.cells, [*ANSWERS, "11.2"]):
        shown = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
        assert not [o for o in cell.outputs if o.output_type in ("execute_result", "error")], (lesson, cell.outputs)
        assert "Verdict(status=" not in shown
        expected = "✎ Not attempted yet" if lesson == "11.2" else "✔ Correct"
        assert shown.count(expected) == 1, (lesson, shown)


def _exercise_cells() -> list[tuple[str, str, str]]:
    """(notebook, answer name, cell source) for every ``exercises.qN.check()`` cell of every lesson."""
    import importlib
    import re

    from helpers.registry import lessons

    found = []
    for lesson in lessons():
        nb = nbformat.read(lesson.path, as_version=4)
        for cell in nb.cells:
            match = re.search(r"exercises\.(q\d)\.check\(\)", cell.source) if cell.cell_type == "code" else None
            if match:
                module = importlib.import_module(f"helpers.checks.lesson_{lesson.number}")
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


def test_an_answer_written_in_another_cell_survives_running_the_exercise_cell_twice() -> None:
    """In a real kernel: the committed exercise cell of lesson 03 (q1), run before, after and again after the
    answer is defined in a cell of its own."""
    notebook, name, source = next(cell for cell in _exercise_cells() if cell[0].startswith("03_"))
    cells = [
        nbformat.v4.new_code_cell("from helpers.checks import lesson_03 as exercises"),
        nbformat.v4.new_code_cell(source),
        nbformat.v4.new_code_cell(f"{name} = 0.25"),
        nbformat.v4.new_code_cell(source),
        nbformat.v4.new_code_cell(source),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(ROOT)}}).execute()
    shown = ["".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream") for cell in nb.cells]
    assert "Not attempted" in shown[1], shown[1]
    assert "✔ Correct" in shown[3] and "✔ Correct" in shown[4], (notebook, shown[3:])
