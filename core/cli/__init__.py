"""The ``schedlab`` command line.

Built-in commands are loaded lazily (their modules are imported only when the
command runs or its help is shown), and plugin commands are looked up in the plugin
registry only when a name is not built in, so ``schedlab --help`` imports no format
or policy code.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
from collections.abc import Iterator
from typing import Any

import click

from ..errors import SchedlabError

#: Built-in command name -> "module:attribute" of its click command.
BUILTIN_COMMANDS: dict[str, tuple[str, str]] = {
    "plugins": ("schedlab.cli.plugins:command", "List installed plugins and what they provide."),
    "info": ("schedlab.cli.info:command", "Summarise a trace: jobs, users, span, load."),
    "validate": ("schedlab.cli.validate:command", "Check a trace against its format's rules."),
    "convert": ("schedlab.cli.convert:command", "Convert a trace from one format to another."),
    "simulate": ("schedlab.cli.simulate:command", "Replay a trace through a scheduling policy."),
    "metrics": ("schedlab.cli.metrics:command", "Compute metrics of a recorded or simulated run."),
    "compare": ("schedlab.cli.compare:command", "Simulate several policies side by side."),
    "experiment": ("schedlab.cli.experiment:command", "Run a packaged experiment (e.g. psp)."),
    "sweep": ("schedlab.cli.sweep:command", "Run workloads x policies x seeds in parallel."),
    "report": ("schedlab.cli.report:command", "Write an HTML report with plots for a schedule."),
    "new-plugin": ("schedlab.cli.new_plugin:command", "Create a new plugin package."),
    "platform": ("schedlab.cli.platform:command", "Check or infer a platform file (machine)."),
}


def _module_exists(target: str) -> bool:
    module = target.partition(":")[0]
    leaf = module.rsplit(".", 1)[-1]
    return os.path.exists(os.path.join(os.path.dirname(__file__), f"{leaf}.py"))


class LazyGroup(click.Group):
    """A click group whose commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name, (t, _) in BUILTIN_COMMANDS.items() if _module_exists(t))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = BUILTIN_COMMANDS.get(cmd_name)
        if entry is not None and _module_exists(entry[0]):
            module_name, _, attr = entry[0].partition(":")
            return getattr(importlib.import_module(module_name), attr)
        from ..registry import get_registry
        from .plugins import warning_lines

        # Built before the group's callback enters warning_lines() (a plugin
        # command, a mistyped one): the plugins' warnings as one line here too.
        with warning_lines():
            registry = get_registry()
        if registry.has("command", cmd_name):
            spec = registry.get("command", cmd_name)
            with registry.blame(spec):  # a plugin's load() that raises is named
                loaded = spec.load()
            if not isinstance(loaded, click.Command):  # asked for by name: an error naming it
                info = registry.plugin_of(spec)
                if info is None or info.builtin:
                    raise TypeError(
                        f"command {cmd_name!r}: load() returned {type(loaded).__name__}, "
                        "expected click.Command"
                    )
                from ..registry import _plugin_bug

                raise _plugin_bug(
                    info,
                    f"command {spec.name!r} of {info.describe()} returned "
                    f"{type(loaded).__name__}, expected click.Command",
                )
            return _blamed(loaded, registry, spec)
        return None

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a ``BrokenPipeError`` comes out as :class:`_BrokenPipe`,
        which click passes on (it would make any of them exit 1, silently), for
        :func:`main` to tell a closed standard output (``schedlab ... | head``)
        from another pipe."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            raise _BrokenPipe(exc) from exc
        except SystemExit as exc:
            if isinstance(exc.__context__, BrokenPipeError):
                # rich's Console.on_broken_pipe: its output (stdout or stderr) closed;
                # it has pointed stdout at os.devnull and exits 1
                raise _BrokenPipe(exc.__context__, closed=True) from exc
            raise

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        """click's context for the group; a closed pipe while writing its help
        (``schedlab --help | head -n 1``) comes out as in :meth:`invoke`."""
        try:
            return super().make_context(*args, **kwargs)
        except BrokenPipeError as exc:
            raise _BrokenPipe(exc) from exc

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, BUILTIN_COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)
        formatter.write_paragraph()
        formatter.write_text("Plugins may add commands: `schedlab plugins` lists them.")


#: What a command raises to end normally or to report a usage error: click's own
#: flow, never a plugin's bug.
_CLICK_FLOW = (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort)


def _blamed(command: click.Command, registry: Any, spec: Any) -> click.Command:
    """``command`` (a plugin's) with its ``invoke`` run inside ``registry.blame``: an
    unexpected exception from its body is one line naming the plugin (exit 3), not
    schedlab's internal error. click's own exceptions, ``SystemExit`` (a command may
    end with ``sys.exit``) and schedlab's errors pass unchanged."""
    invoke = command.invoke
    if getattr(invoke, "_schedlab_blamed", False):  # load() returned the same object
        return command

    def blamed_invoke(ctx: click.Context) -> Any:
        passed: BaseException | None = None
        with registry.blame(spec):
            try:
                return invoke(ctx)
            except (*_CLICK_FLOW, SystemExit) as exc:
                passed = exc
        assert passed is not None
        raise passed

    blamed_invoke._schedlab_blamed = True  # type: ignore[attr-defined]
    command.invoke = blamed_invoke  # type: ignore[method-assign]
    return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="schedlab", prog_name="schedlab")
@click.option("--debug", is_flag=True, help="Show full tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """schedlab: read, convert, simulate and measure HPC workload traces."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    if ctx.invoked_subcommand not in PAUSED_GC_COMMANDS:
        _resume_gc()  # the command runs as before: collected throughout
    from .plugins import warning_lines  # schedlab's warnings as `schedlab: warning: ...`

    ctx.with_resource(warning_lines())


#: Commands that keep Python's cyclic garbage collector paused (see :func:`main`)
#: outside the blocks where they run components on the workload
#: (:func:`collecting`).
PAUSED_GC_COMMANDS = frozenset({"simulate"})
#: Whether :func:`main` paused the collector (it was enabled when main began).
_gc_paused = False


#: Whether :func:`collecting` froze what start-up created (:func:`gc.freeze`).
_gc_frozen = False


def _resume_gc() -> None:
    """Enable the collector again if :func:`main` paused it, and give it back what
    :func:`collecting` froze."""
    global _gc_paused, _gc_frozen
    if _gc_frozen:
        _gc_frozen = False
        gc.unfreeze()
    if _gc_paused:
        _gc_paused = False
        gc.enable()


@contextlib.contextmanager
def collecting() -> Iterator[None]:
    """Inside the block, Python's cyclic garbage collector runs as usual even when
    :func:`main` paused it: around the code that processes a workload (a reader, a
    simulation with its policies, a writer), plugins' included, whose garbage may
    hold cycles for as long as it runs. Outside, a command of
    :data:`PAUSED_GC_COMMANDS` imports and builds tables with it paused. A SIGTERM
    or SIGINT received before the block is raised on entering it."""
    global _gc_frozen
    _raise_if_signalled()  # a signal whose exception start-up swallowed: stop now
    if not _gc_paused:
        yield
        return
    if not _gc_frozen:
        # What start-up created is long-lived: out of the collector's sight, or
        # resuming it would walk all of it at once (gc.unfreeze() when main ends).
        gc.freeze()
        _gc_frozen = True
    gc.enable()
    try:
        yield
    finally:
        gc.disable()


def error_line(message: str) -> None:
    """Print one error line on stderr."""
    click.echo(f"schedlab: error: {message}", err=True)


class Terminated(BaseException):
    """Raised in the ``schedlab`` process when it receives SIGTERM, so that it stops
    as on Ctrl-C: every ``finally`` runs (a staged output is removed, the previous
    output left intact) and :func:`main` prints one line and exits 130.

    A ``BaseException``, like ``KeyboardInterrupt``, so that no ``except Exception``
    swallows it; not a ``KeyboardInterrupt``, which click would turn into "Aborted".
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class _BrokenPipe(BaseException):
    """A ``BrokenPipeError`` raised by a command, carried past click to
    :func:`main`. When standard output (or error) is a pipe whose reader has gone
    (``schedlab validate big.swf | head -n 1``), ``main`` ends quietly with
    :data:`_CLOSED_PIPE_EXIT`, as a process that a closed pipe stops does; any other
    broken pipe (a helper process's) is an error as other ``OSError`` are.

    A ``BaseException``, so that neither click nor an ``except Exception`` takes
    it; ``closed`` when the output is known to be the closed one."""

    def __init__(self, error: BrokenPipeError, *, closed: bool = False) -> None:
        super().__init__(error)
        self.error, self.closed = error, closed


#: The exit status when standard output's reader has gone: 128 + SIGPIPE, what the
#: shell reports for ``cat big | head`` (docs/cli.md).
_CLOSED_PIPE_EXIT = 141


def _closed_outputs() -> list[int]:
    """The file descriptors of standard output and error that are pipes (or
    sockets) whose reading end is closed; empty when neither is (a
    ``BrokenPipeError`` then came from another pipe, e.g. a helper process's)."""
    import select

    if not hasattr(select, "poll"):  # not on this platform: take it for stdout's
        return [1]
    closed = []
    for stream in (sys.stdout, sys.stderr):
        try:
            fd = stream.fileno()
        except (AttributeError, ValueError, OSError):  # captured, or no real file
            continue
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        if any(event & (select.POLLERR | select.POLLHUP) for _, event in poller.poll(0)):
            closed.append(fd)
    return closed


def _end_on_closed_output() -> None:
    """Exit with :data:`_CLOSED_PIPE_EXIT` and no message: what is still buffered for
    a closed pipe goes to ``os.devnull`` instead (Python's own flush at exit
    would otherwise print an ``Exception ignored`` report and exit 120)."""
    closed = _closed_outputs()
    if closed:
        null = os.open(os.devnull, os.O_WRONLY)
        for fd in closed:
            os.dup2(null, fd)
        os.close(null)
    sys.exit(_CLOSED_PIPE_EXIT)


#: The name of the codec error handler of :func:`_escaping_stdout`.
_ESCAPE_ERRORS = "schedlab-escape"


def _escape_unencodable(error: UnicodeError) -> tuple[str | bytes, int]:
    """A codec error handler: a character of a file name Python could not decode
    (a lone surrogate U+DC80-U+DCFF) as its original byte, as ``surrogateescape``
    writes it; any other character its encoding cannot hold as a backslash escape
    (``\\xe9``, ``\\u540d``), as ``backslashreplace`` and standard error do."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    char = error.object[error.start]
    if "\udc80" <= char <= "\udcff":
        return bytes([ord(char) - 0xDC00]), error.start + 1
    import codecs

    return codecs.backslashreplace_errors(
        UnicodeEncodeError(error.encoding, error.object, error.start, error.start + 1, error.reason)
    )


def _escaping_stdout() -> Any:
    """Make standard output write what its encoding cannot hold escaped
    (:func:`_escape_unencodable`: ``josé`` as ``jos\\xe9`` on an ASCII stdout,
    ``LC_ALL=C`` or ``PYTHONIOENCODING=latin-1``) instead of failing with
    ``UnicodeEncodeError``: rich's tables write to it with Python's ``strict`` (or,
    in the C locale, ``surrogateescape``) handler, which refuse such characters.
    Returns a function restoring the previous handler (an in-process caller gets
    its stream back as it was); a stream with another handler is left as it is."""
    import codecs

    stream = sys.stdout
    reconfigure = getattr(stream, "reconfigure", None)
    previous = getattr(stream, "errors", None)
    if reconfigure is None or previous not in ("strict", "surrogateescape"):
        return lambda: None
    try:
        codecs.lookup_error(_ESCAPE_ERRORS)
    except LookupError:
        codecs.register_error(_ESCAPE_ERRORS, _escape_unencodable)
    try:
        reconfigure(errors=_ESCAPE_ERRORS)
    except (ValueError, OSError):  # closed, or a stream that cannot change
        return lambda: None

    def restore() -> None:
        with contextlib.suppress(ValueError, OSError):
            reconfigure(errors=previous)

    return restore


#: The signal (SIGTERM or SIGINT) the running :func:`main` received, once its
#: handler has run (:func:`_on_signals`); None before. It stays set for the rest of
#: the command, so that the interruption is acted on even when the exception the
#: handler raised was swallowed on its way (:func:`_raise_if_signalled`).
_signalled: int | None = None


def _interruption(signum: int) -> BaseException:
    """What a signal raises in the command: :class:`Terminated` for SIGTERM,
    ``KeyboardInterrupt`` for SIGINT (Ctrl-C)."""
    import signal

    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


def _raise_if_signalled() -> None:
    """Raise the interruption of the signal :func:`main` received, if it received
    one (:data:`_signalled`). Called where no output may be written after a signal:
    before a staged output is renamed into place (:func:`schedlab.io.staged_output`),
    before a sweep's tables are written; where a workload's processing starts
    (:func:`collecting`), and when the command ends. The handler raised it already;
    this is for when that exception was lost on its way (at start-up, while the
    import machinery compiled a module, it once vanished without reaching any
    Python code: the command ran on and wrote its output)."""
    if _signalled is not None:
        raise _interruption(_signalled)


def _is_interruption(exc: BaseException) -> bool:
    """Whether ``exc`` is what a signal raised (carried through click's ``Abort``)."""
    if isinstance(exc, click.exceptions.Abort):
        exc = exc.__cause__ or exc.__context__ or exc
    return isinstance(exc, (Terminated, KeyboardInterrupt))


def _on_signals(previous: dict[int, Any]) -> None:
    """Install the handlers of SIGTERM (raising :class:`Terminated`) and SIGINT
    (raising ``KeyboardInterrupt``, as Python's own does, which it replaces): both
    first record the signal in :data:`_signalled`. ``previous`` gets the handlers
    they replaced, by signal, as each is installed (none when signals cannot be set
    here, e.g. off the main thread). A SIGINT that is ignored (a background job) or
    handled by the caller stays so. A process forked while they are installed (a
    parser's helper) dies of SIGTERM, and gets ``KeyboardInterrupt`` on SIGINT, as
    by default.
    """
    import signal

    owner = os.getpid()

    def handler(signum: int, frame: Any) -> None:
        global _signalled
        if os.getpid() != owner:
            if signum == signal.SIGINT:
                signal.default_int_handler(signum, frame)
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        _signalled = signum
        raise _interruption(signum)

    try:
        previous[signal.SIGTERM] = signal.getsignal(signal.SIGTERM)
        signal.signal(signal.SIGTERM, handler)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            previous[signal.SIGINT] = signal.default_int_handler
            signal.signal(signal.SIGINT, handler)
    except (ValueError, OSError):  # not the main thread
        previous.clear()


def _command_of(args: list[str]) -> str:
    words = [a for a in args if not a.startswith("-")]
    return f"schedlab {words[0]}" if words else "schedlab"


def _interrupted(args: list[str], how: str) -> None:
    """One line naming what was interrupted, then exit 130."""
    from ..io import interrupted_outputs

    text = f"{_command_of(args)} interrupted ({how})"
    outputs = interrupted_outputs()
    if outputs:
        text += f"; not written: {', '.join(outputs)} (any previous version is unchanged)"
    error_line(text)
    sys.exit(130)


def main(argv: list[str] | None = None) -> Any:
    """Entry point of the ``schedlab`` script: one line per error, no traceback.

    Exit codes: 0 success, 1 findings (``validate``), 2 bad input or usage,
    3 internal error, 130 interrupted (Ctrl-C / SIGINT, or SIGTERM: both stop the
    command cleanly, removing a partly written output), 141 standard output closed
    by its reader (``| head``; no message). ``--debug`` (anywhere on the command
    line) shows tracebacks.
    """
    try:
        return _main(sys.argv[1:] if argv is None else list(argv))
    except BrokenPipeError:  # writing the help or an error line to a closed pipe
        if _closed_outputs():
            _end_on_closed_output()
        raise


def _main(args: list[str]) -> Any:
    """:func:`main` for ``args``."""
    import signal

    global _gc_paused
    debug = "--debug" in args or os.environ.get("SCHEDLAB_DEBUG") == "1"
    # Start-up (imports of schedlab, numpy, click, rich ...; the plugin registry)
    # creates a few hundred thousand long-lived objects and no garbage to speak of,
    # yet the cyclic collector would walk them 60 to 80 times: 20-40 ms of a
    # `schedlab simulate`. It is paused from here; the group callback resumes it
    # for every command but those of PAUSED_GC_COMMANDS, which resume it where
    # they process a workload (`collecting()`); it is back on when main returns.
    if gc.isenabled() and not _gc_paused:
        gc.disable()
        _gc_paused = True
    _one_blas_thread()
    _quick_exit()
    global _signalled
    _signalled = None
    from ..io import _forget_interrupted

    _forget_interrupted()  # an earlier main() of the process reported its own
    restore_stdout = _escaping_stdout()
    previous: dict[int, Any] = {}
    try:
        try:
            _on_signals(previous)
            rv = cli.main(args=args, prog_name="schedlab", standalone_mode=False)
            sys.stdout.flush()  # a closed pipe is found here, not in Python's exit
        except BaseException as exc:
            # A signal received is what ends the command, whatever came of the
            # exception its handler raised (swallowed, or turned into another error).
            if _signalled is not None and not _is_interruption(exc):
                raise _interruption(_signalled) from exc
            raise
        _raise_if_signalled()
        return rv if isinstance(rv, int) else 0
    except _BrokenPipe as pipe:
        if pipe.closed or _closed_outputs():
            _end_on_closed_output()
        if debug:
            raise pipe.error from None
        _os_error(pipe.error)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:
        # A group run without a command (``schedlab``, ``schedlab platform``): its
        # help, as written, on standard output; exit 2 as click gives it.
        click.echo(exc.ctx.get_help())
        sys.exit(2)
    except click.ClickException as exc:
        if debug:
            raise
        # One line, as every other error: click's own form (usage, a hint line,
        # then the error) becomes the error and where to look.
        hint = ""
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            hint = f" (see {exc.ctx.command_path} --help)"
        error_line(" ".join(exc.format_message().split()) + hint)
        sys.exit(2)
    except click.exceptions.Abort as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, KeyboardInterrupt):
            _interrupted(args, "Ctrl-C")
        if cause is not None and not isinstance(cause, click.exceptions.Abort):
            # click turns EOFError into Abort: a bug, not an interruption.
            if debug:
                raise cause from None
            _internal_error(cause)
        error_line("aborted")
        sys.exit(130)
    except Terminated:
        _interrupted(args, "SIGTERM")
    except SchedlabError as exc:
        if debug:
            raise
        error_line(_dash_input(exc, args) or _command_hints(str(exc), args))
        sys.exit(exc.exit_code)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError) and _closed_outputs():
            _end_on_closed_output()
        if debug:
            raise
        _os_error(exc)
    except KeyboardInterrupt:
        _interrupted(args, "Ctrl-C")
    except Exception as exc:
        if debug:
            raise
        if isinstance(exc, ValueError) and str(exc) == "embedded null byte":
            # A path option holding NUL, found by the os module (click's path
            # checks, before schedlab's own): the user's input, not a bug.
            error_line("a path given holds a NUL character, which no file name can")
            sys.exit(2)
        _internal_error(exc)
    finally:
        _signalled = None  # the next main() of the process (an in-process caller's)
        restore_stdout()
        _resume_gc()
        for signum, handler in previous.items():
            if handler is not None:  # None: set outside Python, cannot be put back
                signal.signal(signum, handler)


#: Whether :func:`_quick_exit` registered its exit handler (once per process).
_exit_handler = False


def _quick_exit() -> None:
    """At the interpreter's exit, freeze every object (:func:`gc.freeze`) so that
    its final collections neither walk nor free them.

    Ending a ``schedlab simulate`` process took 80-140 ms after its last line:
    the interpreter's finalisation collects the cycles that every module's
    functions and classes form with their globals once the modules are cleared,
    some 10^5 objects the system reclaims with the process anyway. Frozen, they
    stay: the exit takes 15-40 ms (docs/simulation.md, "Whole process, third
    round"). Everything else still happens: the other
    :mod:`atexit` handlers run (``weakref.finalize``, ``logging``), the standard
    streams are flushed, objects outside cycles are freed (a file closes). The
    handler is registered once, in the first :func:`main` of the process (an
    in-process caller, e.g. a test suite, ends as quickly).
    """
    global _exit_handler
    if not _exit_handler:
        import atexit

        atexit.register(gc.freeze)
        _exit_handler = True


#: Environment variables that set OpenBLAS's thread count, in the order it reads them.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def _one_blas_thread() -> None:
    """One OpenBLAS thread for the command (``OPENBLAS_NUM_THREADS=1``), unless the
    user set a thread count or numpy is already loaded (its BLAS already started).

    numpy's OpenBLAS starts a worker thread per core when it loads, and each worker
    spins about 0.1 s of CPU waiting for work, after the load and again after every
    call it shares out. The commands make no BLAS call worth a thread (the metrics'
    one dot product: 66,083 numbers on KTH-SP2): with two cores, that spinning was
    0.11 s of CPU of a ``schedlab simulate`` (docs/simulation.md, "Whole process,
    third round"). Child processes (``sweep``'s workers) inherit the setting.
    """
    if "numpy" in sys.modules or any(os.environ.get(v) for v in BLAS_THREAD_VARIABLES):
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"


def command_for(args: list[str]) -> click.Command | None:
    """The (sub)command ``args`` run, e.g. ``platform infer``; None if unknown."""
    words = [a for a in args if not a.startswith("-")]
    command: click.Command = cli
    ctx = click.Context(cli, info_name="schedlab")
    try:
        for word in words[:2]:
            if not isinstance(command, click.Group):
                break
            found = command.get_command(ctx, word)
            if found is None:
                return None
            command = found
            ctx = click.Context(command, parent=ctx, info_name=word)
    except Exception:  # a plugin command that fails to load: no hints to adapt
        return None
    return None if command is cli else command


def _command_hints(message: str, args: list[str]) -> str:
    """``message`` with its hints in the spelling of the command that failed."""
    from .flags import adapt_hints

    return adapt_hints(message, command_for(args))


def _os_error(exc: OSError) -> None:
    """One line naming the file of ``exc`` (when it has one), then exit 2."""
    name = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
    error_line(f"{name}{exc.strerror or exc}")
    sys.exit(2)


def _dash_input(exc: SchedlabError, args: list[str]) -> str | None:
    """The error for ``-`` given as an input file that does not exist (``cat t.swf
    | schedlab info -``): ``-`` is no name for standard input in schedlab (it is
    standard output only for ``convert OUT``), so the message points to
    ``/dev/stdin`` instead of saying only "no such file". None for other errors."""
    from ..errors import FormatError

    if str(exc) != "-: no such file or directory" and not (
        isinstance(exc, FormatError)
        and exc.source == "-"
        and exc.message == "no such file or directory"
    ):
        return None
    from .flags import dash_inputs

    command = command_for(args)
    labels: list[str] = []
    if command is not None and command.name in args:  # what follows the command's name
        labels = dash_inputs(command, args[args.index(command.name) + 1 :])
    label = f"{labels[0]} " if len(labels) == 1 else ""
    return (
        f"{label}-: standard input is not read as '-' here; give /dev/stdin to read it "
        "(./- for a file named -)"
    )


def _internal_error(exc: BaseException) -> None:
    error_line(
        f"internal error: {type(exc).__name__}: {exc} (run with --debug for a traceback "
        "and report it)"
    )
    sys.exit(3)
