"""``python -m tools.ladder COMMAND``: the commands (see :mod:`tools.ladder` for the list)."""

from __future__ import annotations

import argparse
import sys
import time

import tools.ladder as package
from course_facts.pins import pinned
from tools.ladder.bisection import command_bisect
from tools.ladder.environments import install, installed, probe
from tools.ladder.era import ERA, SOURCE_CLAIMS, command_era
from tools.ladder.history import command_history
from tools.ladder.package_index import command_newest, latest_summary, pin_is_newest
from tools.ladder.page import write_page
from tools.ladder.results_file import change_problems, merge, problems, read_results, relabel, write_results
from tools.ladder.rungs import LADDER_DIR, MARKS, PAGE, RELEASES, RESULTS, ROOT, LadderError, Release, select

PINNED_IS_NEWEST = 3  # `newest --stop-if-pinned`: the newest release that installs is the pin


def command_run(items: list[Release], check: bool) -> int:
    results = read_results()
    differences = []
    start = time.perf_counter()
    for item in items:
        print(f"== transformers {item.version}", flush=True)
        seconds = install(item)
        print(f"  install: {'already installed' if seconds is None else f'{seconds} s'}", flush=True)
        seconds = seconds if seconds is not None else _pending_install_time(item.version)  # installed earlier
        report = probe(item)
        counts = {v: sum(r["verdict"] == v for r in report["probes"].values()) for v in MARKS}
        print(f"  probes: {counts} in {report['probe_seconds']} s", flush=True)
        if check:
            committed = results.get("results", {}).get(item.version, {}).get("probes", {})
            for key, value in report["probes"].items():
                before = committed.get(key, {}).get("verdict")
                if before != value["verdict"]:
                    differences.append(f"{item.version} {key}: committed {before!r}, now {value['verdict']!r}")
        else:
            results = merge(results, item.version, report, seconds)
            write_results(results)
    print(f"ladder: {len(items)} release(s) in {time.perf_counter() - start:.0f} s", flush=True)
    if check:
        if differences:
            print("The committed results disagree with this run:\n  " + "\n  ".join(differences))
            return 1
        print("The committed results agree with this run.")
        return 0
    if set(results["releases"]) == {item.version for item in RELEASES}:
        write_page(results)
        print(f"wrote {RESULTS.relative_to(ROOT)} and {PAGE.relative_to(ROOT)}")
    else:
        print(
            f"wrote {RESULTS.relative_to(ROOT)}; the page waits for every release ({len(results['releases'])} so far)"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.ladder",
        description=package.__doc__.split("\n\n")[0],
        formatter_class=argparse.RawTextHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="install what is missing, probe, write the results and the page")
    run.add_argument("--releases", default="all", help="all, ends, or versions separated by commas")
    run.add_argument("--check", action="store_true", help="compare with the committed results; write nothing")
    for name in ("install", "probe"):
        sub.add_parser(name, help=f"{name} the given releases").add_argument("versions", nargs="+")
    bisect = sub.add_parser("bisect", help="narrow every change between two rungs to two adjacent releases")
    bisect.add_argument("--fresh", action="store_true", help="run every release again (default: reuse results)")
    bisect.add_argument("--keep-venvs", action="store_true", help="keep the releases' environments")
    newest = sub.add_parser("newest", help="the newest transformers published and the newest that installs")
    newest.add_argument("--python", default=sys.executable, help="the Python whose pip decides (default: this one)")
    newest.add_argument("--pinned", default=pinned(), help="the course's pin, for the summary")
    newest.add_argument("--tested", help="the release that was installed (default: the newest that installs)")
    newest.add_argument("--record", action="store_true", help="write the answer into the results and the page")
    newest.add_argument(
        "--stop-if-pinned",
        action="store_true",
        help=f"exit with {PINNED_IS_NEWEST} when the newest release that installs is the pin (make test-latest)",
    )
    newest.add_argument("pip_args", nargs="*", help="requirements for the dry run, after --, e.g. -- -r FILE")
    sub.add_parser("era", help=f"quote {ERA}'s wheel for the lessons; bisect source claims before the ladder")
    sub.add_parser("history", help="read 4.0-4.22 from their wheels into docs/ladder/history.json (for the checker)")
    sub.add_parser("page", help="regenerate docs/ladder.md from the results file")
    sub.add_parser("relabel", help="take the lessons' references from probes.py into the results, then the page")
    sub.add_parser("list", help="the releases and why each is on the ladder")
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            return command_run(select(args.releases), args.check)
        if args.command == "install":
            for item in select(",".join(args.versions)):
                seconds = install(item)
                print(f"{item.version}: {'already installed' if seconds is None else f'installed in {seconds} s'}")
                if seconds is not None:
                    results = read_results()
                    if item.version in results.get("results", {}):
                        results["results"][item.version]["install_seconds"] = seconds
                        write_results(results)
                    else:
                        _pending_install_time(item.version, seconds)
            return 0
        if args.command == "probe":
            results = read_results()
            for item in select(",".join(args.versions)):
                report = probe(item)
                results = merge(results, item.version, report, _pending_install_time(item.version))
                write_results(results)
                counts = {v: sum(r["verdict"] == v for r in report["probes"].values()) for v in MARKS}
                print(f"{item.version}: {counts} in {report['probe_seconds']} s")
            if set(results["releases"]) == {item.version for item in RELEASES}:
                write_page(results)
            return 0
        if args.command == "era":
            return command_era()
        if args.command == "history":
            return command_history()
        if args.command == "bisect":
            return command_bisect(args.fresh, args.keep_venvs)
        if args.command == "newest":
            found = command_newest(args.python, args.pip_args)
            tested = args.tested or found["installable"] or "none"
            print(latest_summary(found["published"], tested, args.pinned, found["reason"], bool(args.tested)))
            if args.stop_if_pinned and not args.tested and pin_is_newest(found, args.pinned):
                return PINNED_IS_NEWEST
            if args.record:
                results = read_results()
                results["newest"] = found
                write_results(results)
                write_page(results)
            return 0
        if args.command == "relabel":
            try:
                results = relabel(read_results(), source_claims=SOURCE_CLAIMS)
            except ValueError as error:
                raise LadderError(str(error)) from error
            write_results(results)
            args.command = "page"
        if args.command == "page":
            results = read_results()
            found = problems(results) + change_problems(results)
            if found:
                raise LadderError("the results file is incomplete:\n  " + "\n  ".join(found))
            write_page(results)
            return 0
        for item in RELEASES:
            print(f"{item.version:>8}  {'installed' if installed(item) else 'not installed':>13}  {item.why}")
        return 0
    except LadderError as error:
        print(f"ladder: {error}", file=sys.stderr)
        return 1


def record_install_time(version: str, seconds: float) -> None:
    """Keep an install time measured outside `make ladder` (``python -m tools.bump`` installs the new rung) next to
    the release's environment, for the run that records the rung's results."""
    _pending_install_time(version, seconds)


def _pending_install_time(version: str, seconds: float | None = None) -> float | None:
    """An install time measured before the release had results: kept next to its environment until it is probed."""
    note = LADDER_DIR / version / ".install-seconds"
    if seconds is not None:
        note.write_text(f"{seconds}\n")
        return seconds
    return float(note.read_text()) if note.is_file() else None


if __name__ == "__main__":
    sys.exit(main())
