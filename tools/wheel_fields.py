"""Print the ``TrainingArguments`` fields of a transformers wheel, one a line, without installing it:
``python -m tools.wheel_fields transformers-X.Y.Z-py3-none-any.whl`` (how ``tests/data/training_arguments_4_8_2.txt``
was made; :func:`check_old_code.old_arguments.wheel_fields` reads them)."""

from __future__ import annotations

import sys

from check_old_code.old_arguments import wheel_fields


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tools.wheel_fields transformers-X.Y.Z-py3-none-any.whl  (prints its fields)")
        return 2
    print("\n".join(wheel_fields(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
