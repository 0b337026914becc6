"""tools/examples.py on made-up notebooks: the rewrite of the arguments call, the added callback, the errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import examples

NOTEBOOK = Path("notebooks/99_toy.ipynb")


def _nb(*sources: str, tags: str = "pattern") -> dict:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# 99 · Toy lesson\n", "text"]}]
    for source in sources:
        cells.append({"cell_type": "code", "metadata": {"tags": [tags]}, "source": [source], "outputs": []})
    return {"cells": cells}


def _script(nb: dict) -> str:
    return examples.generate_one(NOTEBOOK, nb)


ARGS = 'args = TrainingArguments(\n    output_dir="out",  # keep me\n    max_steps=5,\n)\n'
TRAINER = "trainer = Trainer(model=model, args=args)\ntrainer.train()\nprint('loss 0.5')\n"


def test_the_arguments_become_parser_defaults_and_the_trainer_gets_the_plan() -> None:
    text = _script(_nb("x = 1\n", ARGS + TRAINER))
    assert "parser = HfArgumentParser(TrainingArguments)" in text
    assert 'parser.set_defaults(\n    output_dir="out",  # keep me\n    max_steps=5,\n)\n' in text
    assert "(args,) = parser.parse_args_into_dataclasses()" in text
    assert "trainer = Trainer(model=model, args=args)\ntrainer.add_callback(ShowPlan())\n" in text
    assert text.startswith('"""99 · Toy lesson: the pattern, as a script.')
    assert "Generated from notebooks/99_toy.ipynb" in text
    compile(text, "toy.py", "exec")


def test_the_defaults_parse_and_the_command_line_wins() -> None:
    from transformers import HfArgumentParser, TrainingArguments

    parser = HfArgumentParser(TrainingArguments)
    parser.set_defaults(output_dir="out", max_steps=5, learning_rate=3e-4)
    (args,) = parser.parse_args_into_dataclasses(args=["--max_steps", "2"])
    assert (args.output_dir, args.max_steps, args.learning_rate) == ("out", 2, 3e-4)


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        (("args = TrainingArguments('out')\n" + TRAINER,), "keyword arguments only"),
        (("args = TrainingArguments(**kw)\n" + TRAINER,), "keyword arguments only"),
        ((TRAINER,), "exactly one"),
        ((ARGS + ARGS + TRAINER,), "exactly one"),
        ((ARGS + "def f():\n    return make()\n",), "no `trainer = "),
        (("def f():\n    config = LlamaConfig(hidden_size=8)\n" + TRAINER,), "exactly one"),
        ((ARGS + "class Trials:\n    trainer = Trainer()\n",), "no `trainer = "),
        (("%time x = 1\n", ARGS + TRAINER), "plain Python"),
    ],
)
def test_a_pattern_the_script_cannot_take_is_refused(sources: tuple[str, ...], message: str) -> None:
    with pytest.raises(examples.PatternError, match=message):
        _script(_nb(*sources))


FACTORY = (
    "def make_trainer(config, **changes):\n"
    "    if changes:\n"
    "        trainer = Trainer(\n            model=model,\n            args=args,\n        )\n"
    "    return trainer\n"
)


def test_a_trainer_built_in_a_function_gets_the_plan_inside_it() -> None:
    text = _script(_nb(ARGS, FACTORY, "print(make_trainer(1, a=2).train())\n"))
    assert "            args=args,\n        )\n        trainer.add_callback(ShowPlan())\n    return trainer" in text
    assert "(args,) = parser.parse_args_into_dataclasses()" in text
    compile(text, "toy.py", "exec")


def test_top_level_and_function_trainers_get_one_callback_each_in_order() -> None:
    text = _script(_nb(ARGS + FACTORY + "trainer = Trainer(model=model, args=args)\n"))
    assert text.count("trainer.add_callback(ShowPlan())") == 2
    assert text.index("    return trainer") < text.index("trainer = Trainer(model=model, args=args)\ntrainer.add_")


def test_a_factory_gets_the_parser_and_the_plan_inside_it() -> None:
    factory = (
        "def make_trainer():\n"
        '    args = TrainingArguments(\n        output_dir="out",\n        max_steps=5,\n    )\n'
        "    return Trainer(\n        model=model,\n        args=args,\n    )\n"
    )
    text = _script(_nb(factory, "trainer = make_trainer()\ntrainer.train()\n"))
    assert "    parser = HfArgumentParser(TrainingArguments)" in text
    assert "    (args,) = parser.parse_args_into_dataclasses()" in text
    assert "    trainer = Trainer(\n        model=model,\n        args=args,\n    )\n" in text
    assert "    trainer.add_callback(ShowPlan())\n    return trainer\n" in text
    assert text.count("add_callback(ShowPlan())") == 1
    compile(text, "toy.py", "exec")


SCRIPT_HEAD = '%%writefile $script_path\n"""My train.py."""\n\nimport sys\n'
SCRIPT_MAIN = (
    "%%writefile -a $script_path\n\n\ndef main():\n"
    "    parser = HfArgumentParser(TrainingArguments)\n    (args,) = parser.parse_args_into_dataclasses()\n"
    "    trainer = Trainer(model=None, args=args)\n    trainer.train()\n\n\nif __name__ == '__main__':\n    main()\n"
)


def test_a_pattern_written_by_writefile_is_copied_as_it_stands() -> None:
    text = _script(_nb(SCRIPT_HEAD, SCRIPT_MAIN))
    assert "%%writefile" not in text and "ShowPlan" not in text and "set_defaults" not in text
    assert (
        '# %% 99_toy.ipynb cell 1\n"""My train.py."""\n\nimport sys\n\n\n# %% 99_toy.ipynb cell 2\ndef main():' in text
    )
    assert "    trainer = Trainer(model=None, args=args)\n    trainer.train()\n" in text
    assert text.startswith('"""99 · Toy lesson: the pattern, as a script.')
    compile(text, "toy.py", "exec")


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        ((SCRIPT_HEAD, "x = 1\n"), "either plain cells or one file"),
        ((SCRIPT_HEAD, SCRIPT_HEAD), "then `%%writefile -a PATH`"),
        ((SCRIPT_MAIN,), "then `%%writefile -a PATH`"),
        ((SCRIPT_HEAD, SCRIPT_MAIN.replace("$script_path", "other.py")), "to the same PATH"),
        ((SCRIPT_HEAD, "%%writefile -a $script_path\ndef main(:\n"), "not valid Python"),
    ],
)
def test_a_written_file_pattern_the_script_cannot_take_is_refused(sources: tuple[str, ...], message: str) -> None:
    with pytest.raises(examples.PatternError, match=message):
        _script(_nb(*sources))


def test_a_written_files_result_shapes_come_from_the_cells_that_run_it() -> None:
    nb = _nb(SCRIPT_HEAD, SCRIPT_MAIN)
    nb["cells"][2]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["Appending to x.py\n"]}]
    run = {"output_type": "stream", "name": "stdout", "text": ["world size 2, batch 16\n", "rank 0: loss 0.5\n"]}
    nb["cells"].append({"cell_type": "code", "metadata": {}, "source": ["launch()"], "outputs": [run]})
    cells = examples.tagged_cells(nb, NOTEBOOK)["99_toy.py"]
    assert examples.is_script_pattern(cells)
    assert examples.result_shapes(nb, cells) == {"world size #, batch #", "rank #: loss #"}
    plain = _nb(ARGS + TRAINER)
    plain["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["x\n", "loss 0.5\n"]}]
    plain_cells = examples.tagged_cells(plain, NOTEBOOK)["99_toy.py"]
    assert not examples.is_script_pattern(plain_cells)
    assert examples.result_shapes(plain, plain_cells) == {"loss #"}


def test_a_second_pattern_gets_its_own_script() -> None:
    assert examples.script_name(NOTEBOOK, "pattern") == "99_toy.py"
    assert examples.script_name(NOTEBOOK, "pattern:resume") == "99_resume.py"
    with pytest.raises(examples.PatternError, match="lower case"):
        examples.script_name(NOTEBOOK, "pattern:Bad Name")


def test_the_result_line_shape_ignores_numbers_only() -> None:
    assert examples.line_shape("accuracy 0.705 at epoch 2") == examples.line_shape("accuracy 0.5 at epoch 0.125")
    assert examples.line_shape("loss 1.2e-05") == "loss #"
    assert examples.line_shape("accuracy 0.7") != examples.line_shape("F1 0.7")


def test_the_pattern_heading_links_the_script_once() -> None:
    import nbformat

    from tools.notebook_format import SCRIPT_PREFIX, _write_script_links

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("## The pattern: toy\nProse."),
        nbformat.v4.new_code_cell(ARGS + TRAINER, metadata={"tags": ["pattern"]}),
    ]
    _write_script_links(nb, "99_toy.ipynb")
    once = nb.cells[0].source
    _write_script_links(nb, "99_toy.ipynb")
    assert (
        nb.cells[0].source
        == once
        == (f"## The pattern: toy\n{SCRIPT_PREFIX} [`examples/99_toy.py`](../examples/99_toy.py)\n\nProse.")
    )
    nb.cells[1].metadata["tags"] = []
    _write_script_links(nb, "99_toy.ipynb")
    assert nb.cells[0].source == "## The pattern: toy\nProse."


def test_a_lessons_own_loader_is_allowed_in_its_pattern_and_is_no_instrument(tmp_path: Path) -> None:
    import json

    from tools import pattern_check

    source = (
        "from helpers.language_model import tiny_llama\n"
        "model = tiny_llama(None, seed=0, hidden=64, layers=2)  # your project: from_pretrained(...)\n"
    )
    cells = [
        {"cell_type": "code", "metadata": {"tags": ["hide-input"]}, "source": ["import helpers"], "outputs": []},
        {"cell_type": "code", "metadata": {"tags": ["pattern"]}, "source": [source], "outputs": []},
    ]
    for lesson, allowed in (("18", True), ("99", False)):
        path = tmp_path / f"{lesson}_toy.ipynb"
        path.write_text(json.dumps({"cells": cells}))
        report = pattern_check.check_notebook(path)
        assert (not report.pattern and not report.helper_cells) is allowed, report


def test_a_semicolon_that_hides_a_notebook_display_is_dropped() -> None:
    trainer = "trainer = Trainer(model=model, args=args)\ntrainer.train();\nnote = 'a;b';  # kept: not an expression\n"
    text = _script(_nb(ARGS + trainer + "print('loss 0.5')  ;\nx = [1, 2];\n"))
    assert "\ntrainer.train()\n" in text and "trainer.train();" not in text
    assert "print('loss 0.5')\n" in text
    assert "note = 'a;b';  # kept: not an expression" in text and "x = [1, 2];" in text


def test_an_import_an_earlier_cell_made_is_not_repeated_and_directives_go() -> None:
    first = "#| export\nimport torch\nfrom transformers import Trainer, TrainingArguments\n"
    second = "#| export\nimport torch  # for the loss\nfrom transformers import Trainer, set_seed\nimport numpy as np\n"
    text = _script(_nb(first, second, ARGS + TRAINER))
    assert text.count("import torch\n") == 1 and "# for the loss" in text
    assert "from transformers import set_seed\n" in text and text.count("import Trainer") == 1
    assert "import numpy as np" in text and "#|" not in text
    compile(text, "toy.py", "exec")
