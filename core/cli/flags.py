"""The short flags of the ``schedlab`` commands: one meaning per letter, everywhere.

The scheme (documented in ``docs/cli.md``):

* a **lower-case** letter names a component or a file: ``-p`` the priority policy,
  ``-b`` the backfilling strategy, ``-e`` the run-time estimator, ``-m`` a metric,
  ``-w`` a workload, ``-o`` the output file;
* the **same letter in upper case** passes ``KEY=VALUE`` options to that component:
  ``-P`` policy options, ``-B`` backfilling options, ``-E`` estimator options,
  ``-M`` metric options, ``-G`` generator options; ``-R`` and ``-W`` pass options
  to the reader (``--from``) and the writer (``--to``).

:data:`SHORT_FLAGS` is the table every command follows (a test walks every
registered command against it). The spellings used before the scheme
(:data:`DEPRECATED_FLAGS`) keep working until schedlab 0.3 through
:class:`FlagCommand`, which rewrites them to the new flag and warns with
:class:`~schedlab.compat.SchedlabDeprecationWarning` naming the new spelling.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import click

from ..io import check_outputs as check_outputs  # public: plugins call it too
from ..io import refuse_file_parent as refuse_file_parent

#: Short flag -> (what it means, the long option names it may stand for).
SHORT_FLAGS: dict[str, tuple[str, frozenset[str]]] = {
    "-h": ("help", frozenset({"--help"})),
    "-o": ("output file", frozenset({"--output"})),
    "-p": ("priority policy (or policies)", frozenset({"--policy", "--policies"})),
    "-P": (
        "priority policy option KEY=VALUE",
        frozenset({"--policy-option", "--priority-option"}),
    ),
    "-b": ("backfilling strategy", frozenset({"--backfill"})),
    "-B": ("backfilling option KEY=VALUE", frozenset({"--backfill-option"})),
    "-e": ("run-time estimator", frozenset({"--estimator"})),
    "-E": ("estimator option KEY=VALUE", frozenset({"--estimator-option"})),
    "-m": ("metric", frozenset({"--metric"})),
    "-M": ("metric option KEY=VALUE", frozenset({"--metric-option"})),
    "-w": ("workload (trace or generator spec)", frozenset({"--workload"})),
    "-G": ("generator option KEY=VALUE", frozenset({"--generator-option"})),
    "-R": ("reader option KEY=VALUE", frozenset({"--read-option"})),
    "-W": ("writer option KEY=VALUE", frozenset({"--write-option"})),
}


#: The type of ``--procs`` in every command: a whole number from 1 to 2**53 - 1, the
#: bound of the simulator (``schedlab.sim.runner.MAX_PROCS``) and of header numbers.
class _ProcsRange(click.IntRange):
    """:class:`click.IntRange` from 1 to 2**53 - 1 whose error above the bound says
    it in the words of the simulator."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.INT.convert(value, param, ctx)
        if self.max is not None and number > self.max:
            self.fail(
                f"{value}: the machine size must be at most {self.max} (2**53 - 1) processors",
                param,
                ctx,
            )
        return super().convert(number, param, ctx)


PROCS_RANGE: click.IntRange = _ProcsRange(min=1, max=2**53 - 1)

#: Version in which the old spellings were deprecated, and the one removing them.
DEPRECATED_SINCE = "0.1"
REMOVED_IN = "0.3"

#: Command -> {old short flag: new short flag}: spellings from before the scheme.
DEPRECATED_FLAGS: dict[str, dict[str, str]] = {
    "convert": {"-o": "-R", "-w": "-W"},
    "info": {"-o": "-R"},
    "validate": {"-o": "-R"},
    "simulate": {"-O": "-P"},
    "metrics": {"-O": "-M"},
    "compare": {"-O": "-M"},
}

#: Command -> {old long option: new one}: options renamed so that one long name means
#: one thing in every command (``compare --window``, the --ci block length, was also
#: ``report --window``, the time range a page opens on; ``--seed``, the --ci bootstrap
#: seed of ``compare`` and ``sweep``, is the workloads' seed of the experiments).
DEPRECATED_OPTIONS: dict[str, dict[str, tuple[str, str]]] = {
    "compare": {
        "--window": ("--block", "the --ci block length"),
        "--seed": ("--ci-seed", "the --ci bootstrap seed"),
    },
    "sweep": {"--seed": ("--ci-seed", "the --ci bootstrap seed")},
}


#: (command, deprecated flag) -> the one-line error when the flag's value is not
#: ``KEY=VALUE``: then it was not meant as the option it is the old spelling of
#: but, as ``-o`` everywhere else, as an output file the command does not take so.
_NOT_AN_OPTION_HINTS: dict[tuple[str, str], str] = {
    ("convert", "-o"): (
        "convert takes the output file as its second argument: schedlab convert IN OUT "
        "(-o {value}: here -o is the old spelling of -R KEY=VALUE, reader options)"
    ),
    ("info", "-o"): (
        "info writes no file (-o {value}: here -o is the old spelling of -R KEY=VALUE, "
        "reader options); to keep its output, redirect it: schedlab info FILE > OUT"
    ),
    ("validate", "-o"): (
        "validate writes no file (-o {value}: here -o is the old spelling of -R "
        "KEY=VALUE, reader options); to keep its output, redirect it: schedlab "
        "validate FILE > OUT"
    ),
}


def _value_options(command: click.Command) -> set[str]:
    """Option strings of ``command`` that take a value as the next argument."""
    out: set[str] = set()
    for param in command.params:
        if isinstance(param, click.Option) and not param.is_flag and not param.count:
            out.update(param.opts)
            out.update(param.secondary_opts)
    return out


def rewrite_deprecated(
    command: click.Command, args: list[str], renames: dict[str, str]
) -> list[str]:
    """``args`` with each deprecated short flag of ``renames`` replaced by its new
    spelling (also in the attached form ``-Okey=value``), and each deprecated long
    option of :data:`DEPRECATED_OPTIONS` (also ``--old=value``); warns once per flag
    used. Values of options and everything after ``--`` are left alone."""
    long_renames = DEPRECATED_OPTIONS.get(command.name or "", {})
    from ..errors import UsageError

    takes_value = _value_options(command)
    out: list[str] = []
    warned: set[str] = set()
    skip_next = False
    for index, arg in enumerate(args):
        if skip_next:
            skip_next = False
            out.append(arg)
            continue
        if arg == "--":
            out.extend(args[index:])
            break
        name = arg.split("=", 1)[0]
        if name in long_renames:
            new, meaning = long_renames[name]
            if name not in warned:
                warned.add(name)
                _warn_spelling(command, name, f"{new} ({meaning})")
            arg = new + arg[len(name) :]
        old = arg[:2]
        if old in renames and arg.startswith("-") and not arg.startswith("--"):
            new = renames[old]
            value = arg[2:] if len(arg) > 2 else (args[index + 1] if index + 1 < len(args) else "")
            misread = _NOT_AN_OPTION_HINTS.get((command.name or "", old))
            if misread is not None and "=" not in value:
                # "-o FILE": meant as an output file, which -o is not here
                raise UsageError(misread.format(value=value or "FILE"))
            if old not in warned:
                warned.add(old)
                _warn_spelling(command, old, f"{new} ({describe(new, command)})")
            arg = new + arg[2:]
        if arg in takes_value:
            skip_next = True
        out.append(arg)
    return out


def _warn_spelling(command: click.Command, old: str, use_instead: str) -> None:
    """The deprecation warning of ``command``'s old spelling ``old`` (a
    :class:`~schedlab.errors.UsageError` when warnings are made errors)."""
    from ..compat import SchedlabDeprecationWarning, warn_deprecated
    from ..errors import UsageError

    try:
        warn_deprecated(
            f"`schedlab {command.name} {old}`",
            use_instead,
            since=DEPRECATED_SINCE,
            removal=REMOVED_IN,
            stacklevel=4,
        )
    except SchedlabDeprecationWarning as exc:  # warnings made errors (-W error)
        raise UsageError(str(exc)) from None


def describe(flag: str, command: click.Command | None = None) -> str:
    """The long name and meaning of a short flag of :data:`SHORT_FLAGS`; with
    ``command``, only the long names that command has."""
    meaning, longs = SHORT_FLAGS[flag]
    if command is not None:
        longs = (longs & option_strings(command)) or longs
    return f"{'/'.join(sorted(longs))}, {meaning}"


class FlagCommand(click.Command):
    """A click command that still accepts the short flags of :data:`DEPRECATED_FLAGS`
    for its name, rewriting them to the new ones with a deprecation warning."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        renames = DEPRECATED_FLAGS.get(self.name or "", {})
        if renames or self.name in DEPRECATED_OPTIONS:
            args = rewrite_deprecated(self, list(args), renames)
        refuse_repeated_options(self, args)
        refuse_empty_values(self, args)
        refuse_unplain_numbers(self, args)
        refuse_unknown_writer(self, args)
        return super().parse_args(ctx, args)


def option_values(
    command: click.Command, args: list[str]
) -> Iterator[tuple[click.Option, str, str]]:
    """The single-valued options in ``args`` as click reads them (``--name=value``,
    ``-xVALUE``, the value in the next argument, nothing after ``--``): ``(option,
    name as spelled, value)`` in order. Flags and options of several values are
    passed over."""
    by_name: dict[str, click.Option] = {}
    for param in command.params:
        if isinstance(param, click.Option):
            for name in (*param.opts, *param.secondary_opts):
                by_name[name] = param
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":
            return
        if not token.startswith("-") or token == "-":
            continue
        value: str | None = None
        if token.startswith("--"):
            name, eq, rest = token.partition("=")
            option = by_name.get(name)
            if eq:
                value = rest
        else:
            name = token
            option = by_name.get(token)
            if option is None and len(token) > 2:
                name = token[:2]
                option = by_name.get(name)
                value = token[2:]
        if option is None or option.is_flag or option.count:
            continue
        if value is None:
            if option.nargs != 1:
                i += max(option.nargs, 1)
                continue
            if i >= len(args):
                return  # click reports the missing value
            value = args[i]
            i += 1
        if option.nargs == 1:
            yield option, name, value


def dash_inputs(command: click.Command, args: list[str]) -> list[str]:
    """The parameters of ``command`` given ``-`` in ``args`` (what follows the
    command's name): options as :func:`option_label` spells them
    (``-w/--workload``), arguments by their metavar (``FILE``), in that order."""
    labels = [
        option_label(option) for option, _, value in option_values(command, args) if value == "-"
    ]
    by_name = {
        name: param
        for param in command.params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
    }
    positionals: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":
            positionals += args[i:]
            break
        if token == "-" or not token.startswith("-"):
            positionals.append(token)
            continue
        option = by_name.get(token)  # --name=value and -xVALUE carry their value
        if option is not None and not (option.is_flag or option.count):
            i += max(option.nargs, 1)
    index = 0
    for argument in (p for p in command.params if isinstance(p, click.Argument)):
        count = len(positionals) - index if argument.nargs < 0 else argument.nargs
        if "-" in positionals[index : index + count]:
            labels.append(argument.human_readable_name)
        index += count
    return labels


def refuse_repeated_options(command: click.Command, args: list[str]) -> None:
    """Raise :class:`~schedlab.errors.UsageError` when an option that takes one
    value and is not repeatable is given twice with different values (``--procs 8
    --procs 16``): click keeps the last one silently, and which one was meant is
    anyone's guess. The same value twice, flags and repeatable options pass."""
    from ..errors import UsageError

    first: dict[str, tuple[str, str]] = {}
    for option, name, value in option_values(command, args):
        if option.multiple or option.name is None:
            continue
        if option.name in first and first[option.name][1] != value:
            spelled, earlier = first[option.name]
            raise UsageError(
                f"{name} given twice ({spelled} {earlier!r}, then {name} {value!r}): give it once"
            )
        first.setdefault(option.name, (name, value))


def option_label(option: click.Option) -> str:
    """``-o/--output``: the spellings of ``option``, short ones first."""
    names = [*option.opts, *option.secondary_opts]
    return "/".join(sorted(names, key=lambda n: (n.startswith("--"), names.index(n))))


def refuse_empty_values(command: click.Command, args: list[str]) -> None:
    """Raise :class:`~schedlab.errors.UsageError` when an option that takes one
    value is given an empty (or blank) one (``-o ''``, ``--simulate ''``): the
    commands read an empty value as the option not given, or as the current folder,
    never what was meant. Repeatable options check their values themselves."""
    from ..errors import UsageError

    for option, name, value in option_values(command, args):
        if option.multiple or value.strip():
            continue
        what = "a file name" if isinstance(option.type, click.Path) else "a value"
        if isinstance(option.type, click.Path) and not option.type.file_okay:
            what = "a folder name"
        raise UsageError(f"{option_label(option)} {value!r}: give {what} (or leave {name} out)")


def refuse_unplain_numbers(command: click.Command, args: list[str]) -> None:
    """Raise :class:`~schedlab.errors.UsageError` when a numeric option's value
    holds other than ASCII characters or an underscore (``--procs 1_024``, ``--procs
    ５``): Python's ``int()`` and ``float()``, which click uses, read both, while the
    trace formats and the plugins' options refuse them."""
    from ..errors import UsageError

    numeric = (click.types.IntParamType, click.types.FloatParamType)
    for option, name, value in option_values(command, args):
        if isinstance(option.type, numeric) and not (value.isascii() and "_" not in value):
            raise UsageError(f"{name} {value!r}: expected a number in ASCII digits, no underscores")


def refuse_unknown_writer(command: click.Command, args: list[str]) -> None:
    """Raise :class:`~schedlab.errors.UsageError` naming ``--to`` when its value
    names no installed writer (``--to 'SWF': unknown writer (available: ...)``),
    as ``--from`` does for readers, before anything is read."""
    from ..errors import UsageError

    for option, name, value in option_values(command, args):
        if "--to" not in option.opts or not value.strip():
            continue
        from ..registry import get_registry

        registry = get_registry()
        if not registry.has("writer", value):
            names = ", ".join(sorted(w.name for w in registry.all("writer")))
            raise UsageError(f"{name} {value!r}: unknown writer (available: {names})")


def key_values(values: Iterable[str], flag: str) -> dict[str, Any]:
    """``["a=1", "b=2"]`` -> ``{"a": "1", "b": "2"}`` with one-line errors naming
    ``flag``."""
    from ..errors import UsageError

    out: dict[str, Any] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{flag} {item!r}: expected key=value")
        if out.get(key.strip(), value.strip()) != value.strip():  # the same twice passes
            raise UsageError(f"{flag} {item!r}: option {key.strip()!r} given twice")
        out[key.strip()] = value.strip()
    return out


def merge_flag(options: dict[str, Any], key: str, value: Any, flag: str, option_flag: str) -> None:
    """Set ``options[key]`` to ``value``, given by ``flag`` (``--warmup 10%``),
    where ``options`` came from ``option_flag`` (``-M/--metric-option``): two
    spellings of one setting. When ``options`` already holds ``key`` with another
    value (``-M warmup=20% --warmup 10%``), raise
    :class:`~schedlab.errors.UsageError` naming both: which one was meant is
    anyone's guess. A boolean ``value`` matches a word meaning the same (``-R
    lenient=yes`` with ``--lenient``)."""
    from ..errors import UsageError
    from ..plugin_types import _TRUE_WORDS

    if key in options:
        given = options[key]
        if isinstance(value, bool):
            same = (str(given).strip().lower() in _TRUE_WORDS) == value
        else:
            same = str(given).strip() == str(value).strip()
        if not same:
            raise UsageError(
                f"{flag} and {option_flag} {key}={given} disagree: give the setting once"
            )
    options[key] = value


def read_option(*extra_names: str) -> Callable[[Any], Any]:
    """The ``-R/--read-option KEY=VALUE`` option (repeatable) of a command that reads
    a trace; ``extra_names`` are older long names kept as aliases."""
    return click.option(
        "--read-option",
        "-R",
        *extra_names,
        "read_options",
        multiple=True,
        metavar="KEY=VALUE",
        help="Reader option (repeatable), e.g. -R lenient=true (`schedlab plugins "
        "READER` lists a reader's options).",
    )


def component_options(
    *, policy: str, backfill: str, estimator: str | None = None, policy_aliases: tuple = ()
) -> Callable[[Any], Any]:
    """The component options of a command that runs simulations, each repeatable
    ``KEY=VALUE``: ``-P/--policy-option`` (and ``policy_aliases``, older long names),
    ``-B/--backfill-option`` and, with its help text, ``-E/--estimator-option``;
    stored as ``policy_options``, ``backfill_options`` and ``estimator_options``.
    The help texts say what the options apply to in that command."""
    flags = [
        ("--policy-option", "-P", *policy_aliases, "policy_options", policy),
        ("--backfill-option", "-B", "backfill_options", backfill),
    ]
    if estimator is not None:
        flags.append(("--estimator-option", "-E", "estimator_options", estimator))

    def decorate(function: Any) -> Any:
        for *names, text in reversed(flags):  # listed in --help in this order
            option = click.option(*names, multiple=True, metavar="KEY=VALUE", help=text)
            function = option(function)
        return function

    return decorate


def run_flags(*, dependencies: bool = True) -> Callable[[Any], Any]:
    """``--no-kill`` (and, with ``dependencies``, ``--dependencies``): how a command
    that runs simulations treats requested times and SWF's dependency fields, the
    same words in every such command."""

    def decorate(function: Any) -> Any:
        if dependencies:
            function = click.option(
                "--dependencies",
                is_flag=True,
                help="Honour SWF preceding-job and think-time fields.",
            )(function)
        return click.option(
            "--no-kill",
            is_flag=True,
            help="Let jobs run past their requested time (default: kill them at it).",
        )(function)

    return decorate


def ci_resampling_options(seed_dest: str = "seed", seed_note: str = "") -> Callable[[Any], Any]:
    """``--level``, ``--resamples`` and ``--ci-seed`` (stored as ``seed_dest``; its help
    ends with ``seed_note``) of a command's ``--ci`` statistics, with the same
    defaults in every command."""

    def decorate(function: Any) -> Any:
        function = click.option(
            "--ci-seed",
            seed_dest,
            type=click.IntRange(min=0),
            default=0,
            show_default=True,
            help=f"With --ci: random seed of the bootstrap (>= 0){seed_note}.",
        )(function)
        function = click.option(
            "--resamples",
            type=click.IntRange(min=100, max=1_000_000),  # significance.MAX_RESAMPLES
            default=1000,
            show_default=True,
            help="With --ci: bootstrap resamples (100 to 1,000,000).",
        )(function)
        return click.option(
            "--level",
            type=click.FloatRange(0, 1, min_open=True, max_open=True),
            default=0.95,
            show_default=True,
            help="With --ci: confidence level.",
        )(function)

    return decorate


def parse_read_options(values: Iterable[str]) -> dict[str, Any]:
    """The ``-R`` values as keyword arguments for :func:`schedlab.read`."""
    return key_values(values, "-R/--read-option")


#: ``reader option KEY=VALUE`` in an error message: the way readers (and any library
#: code) phrase a hint about reader options; :func:`adapt_hints` turns it into the
#: spelling of the command that failed.
_READER_OPTION_HINT = re.compile(r"reader option ([A-Za-z_][\w-]*)=([^\s,;)]+)")
#: Long options that library messages may suggest -> the reader option that does
#: the same, for commands without that option.
_LONG_AS_READER_OPTION = {"--lenient": ("lenient", "true")}


def option_strings(command: click.Command) -> set[str]:
    """Every option string (``-R``, ``--read-option`` ...) ``command`` accepts."""
    out: set[str] = set()
    for param in command.params:
        if isinstance(param, click.Option):
            out.update(param.opts)
            out.update(param.secondary_opts)
    return out


def adapt_hints(message: str, command: click.Command | None) -> str:
    """``message`` with its hints spelled as ``command`` accepts them: ``reader
    option lenient=true`` becomes ``--lenient`` where the command has that flag,
    else ``-R lenient=true`` where it has ``-R``; a ``--lenient`` the command lacks
    becomes ``-R lenient=true``. Without a command the message is unchanged."""
    if command is None:
        return message
    opts = option_strings(command)

    def reader_option(match: re.Match[str]) -> str:
        key, value = match.group(1), match.group(2)
        if f"--{key}" in opts and value.lower() in ("true", "1", "yes"):
            return f"--{key}"
        if "-R" in opts:
            return f"-R {key}={value}"
        return match.group(0)

    message = _READER_OPTION_HINT.sub(reader_option, message)
    for flag, (key, value) in _LONG_AS_READER_OPTION.items():
        if flag not in opts and "-R" in opts:
            message = re.sub(rf"{re.escape(flag)}(?![\w-])", f"-R {key}={value}", message)
    return message


def flag_problems(commands: dict[str, click.Command]) -> list[str]:
    """Every way ``commands`` (``{"simulate": command, "platform infer": ...}``) break
    the scheme: a short flag missing from :data:`SHORT_FLAGS`, one standing for a
    long option the table does not give it, a deprecated spelling defined as a real
    option, or a command with deprecated spellings that cannot rewrite them."""
    problems: list[str] = []
    for path, command in sorted(commands.items()):
        defined = option_strings(command)
        for param in command.params:
            if not isinstance(param, click.Option):
                continue
            names = [*param.opts, *param.secondary_opts]
            longs = {n for n in names if n.startswith("--")}
            for short in (n for n in names if len(n) == 2 and n[0] == "-" and n[1] != "-"):
                entry = SHORT_FLAGS.get(short)
                if entry is None:
                    problems.append(f"schedlab {path}: {short} is not in the table of flags")
                elif not longs & entry[1]:
                    problems.append(
                        f"schedlab {path}: {short} stands for {'/'.join(sorted(longs))}, "
                        f"but {short} means {entry[0]} ({'/'.join(sorted(entry[1]))})"
                    )
        for old, (new, _) in DEPRECATED_OPTIONS.get(path, {}).items():
            if old in defined:
                problems.append(f"schedlab {path}: deprecated {old} is defined as an option")
            if new not in defined:
                problems.append(f"schedlab {path}: {old} is rewritten to {new}, which is missing")
        renames = DEPRECATED_FLAGS.get(path, {})
        for old, new in renames.items():
            if old in defined:
                problems.append(f"schedlab {path}: deprecated {old} is defined as an option")
            if new not in defined:
                problems.append(f"schedlab {path}: {old} is rewritten to {new}, which is missing")
        if renames and not isinstance(command, FlagCommand):
            problems.append(f"schedlab {path}: has deprecated flags but is not a FlagCommand")
    return problems


def check_reader_flags(
    sources: Iterable[object],
    reader: str | None,
    read_options: dict[str, Any] | Iterable[str],
    *,
    options_flag: str = "-R/--read-option",
    from_flag: str = "--from",
) -> None:
    """The one meaning of ``--from`` and ``-R`` in every command: they choose and
    configure the reader of **trace files**, never a generator. Raise
    :class:`~schedlab.errors.UsageError` (one line) when ``reader`` names no
    reader (``unknown reader 'x' (--from; available: ...)``), or when ``--from``
    or a reader option is given and no source is a trace file: every one of
    ``sources`` is a generator spec (``lublin:jobs=50``), which carries its own
    options in the spec. With several sources (``sweep -w``, ``experiment
    estimates -w``) they apply to the trace files among them. ``options_flag`` and
    ``from_flag`` name where the options and the reader came from."""
    from ..api import generator_source
    from ..errors import UsageError
    from ..registry import get_registry

    registry = get_registry()
    if reader is not None and not registry.has("reader", reader):
        names = ", ".join(sorted(r.name for r in registry.all("reader")))
        raise UsageError(f"{from_flag} {reader!r}: unknown reader (available: {names})")
    names_given = list(read_options.keys() if isinstance(read_options, dict) else read_options)
    if reader is None and not names_given:
        return
    listed = [s for s in sources if s is not None]
    specs = [s for s in listed if generator_source(s, registry) is not None]
    if not listed or len(specs) < len(listed):
        return  # a trace file among the sources: the options are for it
    spec = specs[0]
    if reader is not None:
        raise UsageError(
            f"{from_flag} {reader}: a reader reads trace files, not the generator spec "
            f"{spec!r} (a generator takes its options in the spec: NAME:KEY=VALUE,...)"
        )
    raise UsageError(
        f"{options_flag} {names_given[0]}: reader options apply to trace files, not to the "
        f"generator spec {spec!r} (give the generator's options in the spec: "
        "NAME:KEY=VALUE,...)"
    )


def refuse_wrong_suffix(
    path: str | os.PathLike[str] | None, label: str, suffixes: Iterable[str], what: str
) -> None:
    """Raise :class:`~schedlab.errors.UsageError` when the output ``path`` (given by
    option ``label``) has a suffix other than ``suffixes`` (``.toml``), which would
    claim a format the command does not write (``platform infer -o p.json`` writing
    TOML): ``-o/--output p.json: writes TOML; name it .toml``. A name without a
    suffix (``/dev/stdout``, ``platform``) passes."""
    from ..errors import UsageError

    if path is None:
        return
    suffix = Path(os.fspath(path)).suffix.lower()
    allowed = tuple(suffixes)
    if suffix and suffix not in allowed:
        raise UsageError(
            f"{label} {os.fspath(path)}: this command writes {what}, not {suffix}; "
            f"name the file {' or '.join(allowed)}"
        )


def refuse_allocation_without_platform(
    platform: object, allocation: str | None, allocation_options: tuple[str, ...]
) -> None:
    """An allocation policy (``--allocation``, ``--allocation-option``) without
    ``--platform`` is refused before the input is read, in the simulator's words."""
    if platform is None and (allocation is not None or allocation_options):
        from ..errors import UsageError

        raise UsageError("an allocation policy needs a platform (--platform FILE)")
