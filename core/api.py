"""The public functions behind ``schedlab.read``, ``schedlab.write`` and friends."""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from .errors import FormatError, UsageError
from .io import drop_held, is_held, read_head, source_name, staged_output, strip_compression_suffix
from .losses import _refuse_unreported, _strict_reports
from .model import Workload
from .registry import PluginInfo, Registry, get_registry
from .returned import check_values

PathLike = "str | os.PathLike[str]"


def parse_spec(text: str) -> tuple[str, dict[str, str]]:
    """Split ``NAME:key=value,key=value`` into the name and its options."""
    name, _, rest = text.partition(":")
    options: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            hint = (
                f" (a list value is written with '/': {next(reversed(options))}=a/b)"
                if options and not sep
                else ""
            )
            raise UsageError(f"{text!r}: expected key=value, got {item!r}{hint}")
        if options.get(key.strip(), value.strip()) != value.strip():  # the same twice passes
            raise UsageError(f"{text!r}: option {key.strip()!r} given twice")
        options[key.strip()] = value.strip()
    return name.strip(), options


def generator_source(source: object, registry: Registry) -> tuple[Any, dict[str, str]] | None:
    """If ``source`` is ``NAME:opts`` naming a generator (and no such file exists),
    return the generator and its options."""
    if not isinstance(source, str) or os.path.exists(source):
        return None
    name, options = parse_spec(source)
    if registry.has("generator", name):
        return registry.generator(name), options
    return None


def _candidates_by_suffix(registry: Registry, name: str) -> list[Any]:
    base = strip_compression_suffix(os.path.basename(name)).lower()
    return [r for r in registry.all("reader") if any(base.endswith(s.lower()) for s in r.suffixes)]


def detect_reader(source: Any, registry: Registry | None = None) -> Any:
    """Pick a reader for ``source``: by file suffix, then by content sniffing.

    Raises :class:`FormatError` when nothing matches or when several readers claim
    the content, naming them so the user can choose with ``--from``.
    """
    registry = registry or get_registry()
    name = source_name(source)
    is_dir = isinstance(source, (str, os.PathLike)) and os.path.isdir(source)
    if is_dir:
        head = b""
    else:
        head = read_head(source)
    by_suffix = [] if is_dir else _candidates_by_suffix(registry, name)
    if len(by_suffix) == 1:
        return by_suffix[0]
    pool = by_suffix or [r for r in registry.all("reader") if r.reads_directories or not is_dir]
    sniffed = []
    for reader in pool:
        if reader.sniff is None:
            continue
        if is_dir and not reader.reads_directories:
            continue
        try:
            if reader.sniff(head, name):
                sniffed.append(reader)
        except Exception as exc:  # its plugin's bug: said, and the others still sniff
            _sniff_failed(registry, reader, exc)
            continue
    if len(sniffed) == 1:
        return sniffed[0]
    if not sniffed:
        raise FormatError(
            "cannot tell the format from the name or the content; "
            f"name it with --from (readers: {', '.join(registry.names('reader'))})",
            source=name,
        )
    raise FormatError(
        "the content matches several formats: "
        f"{', '.join(r.name for r in sniffed)}; choose one with --from",
        source=name,
    )


def _sniff_failed(registry: Registry, reader: Any, exc: Exception) -> None:
    """Warn (:class:`~schedlab.errors.PluginRuntimeWarning`) that a third-party
    reader's ``sniff`` raised ``exc``: format detection goes on without it. A
    built-in reader's ``sniff`` is only ever asked "is this mine?", and an exception
    from it means no."""
    import warnings

    from .errors import PluginRuntimeWarning
    from .registry import _one_line

    info = registry.plugin_of(reader)
    if info is None or info.builtin:
        return
    warnings.warn(
        PluginRuntimeWarning(
            f"{info.describe()} failed in reader {reader.name!r}: sniff raised "
            f"{_one_line(exc)}; the reader is left out of format detection (a bug in that "
            f"plugin: report it to its authors; SCHEDLAB_BLOCK_PLUGINS={info.name} disables it)",
            plugin=info.name,
            component=f"reader {reader.name}",
        ),
        stacklevel=3,
    )


def detect_writer(path: str | os.PathLike[str], registry: Registry | None = None) -> Any:
    """Pick a writer from the output file's suffix (compression suffixes ignored)."""
    registry = registry or get_registry()
    base = strip_compression_suffix(os.path.basename(os.fspath(path))).lower()
    matches = [
        w for w in registry.all("writer") if any(base.endswith(s.lower()) for s in w.suffixes)
    ]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(
            f"{os.fspath(path)}: cannot tell the output format from the name; choose one "
            f"with --to (writers: {', '.join(registry.names('writer'))})"
        )
    raise UsageError(
        f"{os.fspath(path)}: several writers claim this suffix "
        f"({', '.join(w.name for w in matches)}); choose one with --to"
    )


def _check_source(source: object) -> None:
    """A :class:`UsageError` for what :func:`read` cannot take as a file: bytes, a
    file opened in text mode, or no file at all (``None``, a number ...), instead
    of an ``AttributeError`` or ``TypeError`` from deep inside a reader."""
    if isinstance(source, (str, os.PathLike)):
        return
    if isinstance(source, (bytes, bytearray, memoryview)):
        raise UsageError(
            "read() takes a path, an open binary file or a generator spec, not bytes: "
            "wrap them in io.BytesIO(...)"
        )
    if isinstance(source, io.TextIOBase):
        raise UsageError(
            f"{source_name(source)}: read() needs a file opened in binary mode "
            "(open(path, 'rb')), or a path"
        )
    if not callable(getattr(source, "read", None)):
        raise UsageError(
            "read() takes a path, an open binary file or a generator spec, "
            f"got {type(source).__name__}"
        )


def read(
    source: str | os.PathLike[str] | BinaryIO,
    format: str | None = None,
    *,
    registry: Registry | None = None,
    **options: Any,
) -> Workload:
    """Read a trace into a :class:`~schedlab.model.Workload`.

    ``source`` is a path, an open binary file, or a generator spec such as
    ``"psp-fing:scenario=CF,seed=3"``. ``format`` names the reader (see
    ``schedlab plugins``); without it the reader is picked by file suffix, then by
    content. Reader options are passed as keywords, e.g. ``lenient=True``.

    >>> import schedlab
    >>> w = schedlab.read("trace.swf")                      # doctest: +SKIP
    >>> cols = w.to_arrays(); cols["run_time"].mean()       # doctest: +SKIP
    """
    registry = registry or get_registry()
    generated = generator_source(source, registry) if format is None else None
    if generated is not None:
        generator, gen_options = generated
        for key in gen_options.keys() & options.keys():
            if str(options[key]).strip() != gen_options[key]:
                raise UsageError(
                    f"{source!r}: option {key!r} given twice: {key}={gen_options[key]} in the "
                    f"spec and {key}={options[key]} as an option"
                )
        merged = {**gen_options, **options}
        parsed_gen = generator.parse_options(merged, "generator")
        with registry.blame(generator):
            generated_workload = generator.generate(**parsed_gen)
        registry.check_returned(generator, generated_workload, Workload)
        check_values(registry, generator, generated_workload)
        return generated_workload
    if isinstance(source, (str, os.PathLike)) and not os.path.exists(source):
        raise FormatError("no such file or directory", source=os.fspath(source))
    _check_source(source)
    reader = registry.reader(format) if format is not None else detect_reader(source, registry)
    parsed = reader.parse_options(options, "reader")  # none declared: none taken
    with registry.blame(reader):
        workload = reader.read(source, **parsed)
    registry.check_returned(reader, workload, Workload)
    check_values(registry, reader, workload)
    if isinstance(source, (str, os.PathLike)) and is_held(source) and not workload.is_streaming:
        # The sniffing opened a pipe and kept what it read; a reader that does not
        # read through schedlab.io.open_binary opened it again and missed that.
        drop_held(source)
        raise FormatError(
            f"reader {reader.name!r} opened this pipe again instead of reading it with "
            "schedlab.io.open_binary, so it missed the bytes read to detect the format; "
            "name the format with --from (the pipe is then opened once, by the reader)",
            source=source_name(source),
        )
    workload.meta.setdefault("reader", reader.name)
    workload.meta.setdefault("source", source_name(source))
    return workload


def write(
    workload: Workload,
    path: str | os.PathLike[str],
    format: str | None = None,
    *,
    registry: Registry | None = None,
    **options: Any,
) -> Path:
    """Write ``workload`` to ``path`` in ``format`` (default: from the suffix).

    The writer writes a temporary file (or folder) beside the target that is renamed
    into place only when it succeeded, so a failure never leaves a partial output.
    Returns the path written.

    A format may not carry every field: the writers report what they could not
    (what ``schedlab convert`` prints), but ``write`` itself neither warns nor
    returns it. Collect it with :func:`schedlab.collect_losses`, or make any loss
    an error (nothing written) with ``collect_losses(strict=True)``:

    >>> with schedlab.collect_losses() as losses:           # doctest: +SKIP
    ...     schedlab.write(w, "out.acc", format="sge")
    >>> print(*losses, sep="\\n")                           # doctest: +SKIP

    A writer that writes a folder (``google``, ``sss`` with ``layout="jobs"``) writes
    into an existing folder only when it is empty or holds a previous output of the
    same writer: other files are never removed (a :class:`~schedlab.errors.UsageError`
    names one).
    """
    if not isinstance(workload, Workload):
        hint = ""
        if hasattr(workload, "workload"):
            hint = " (a simulation Result: write result.workload)"
        raise UsageError(f"write() needs a Workload, got {type(workload).__name__}{hint}")
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise UsageError(f"write() needs a file name (a str or path), got {path!r}")
    registry = registry or get_registry()
    writer = registry.writer(format) if format is not None else detect_writer(path, registry)
    parsed = writer.parse_options(options, "writer")  # none declared: none taken
    target = Path(path)
    # Staged in a hidden part beside the target, renamed on success; stale parts of
    # killed runs are cleaned; errors name the target (see schedlab.io).
    reports = _strict_reports()
    with staged_output(target) as staged:
        # A lazily read workload runs its reader inside write: both may be blamed.
        with registry.blame(writer, registry.find("reader", workload.meta.get("reader"))):
            writer.write(workload, staged, **parsed)
        if not staged.exists():
            raise FormatError(f"writer {writer.name!r} wrote nothing", source=str(target))
        _refuse_unreported(reports, str(writer.name))
    return target


def plugins(registry: Registry | None = None) -> list[dict[str, Any]]:
    """Every plugin with its distribution, version, status and components.

    >>> [p["name"] for p in schedlab.plugins()][:3]        # doctest: +SKIP
    ['backfilling', 'estimators', 'fairness']
    """
    registry = registry or get_registry()
    out = []
    for info in registry.plugin_infos():
        out.append(_plugin_dict(info, registry))
    return out


def _plugin_dict(info: PluginInfo, registry: Registry) -> dict[str, Any]:
    loaded = info.status == "loaded"  # a disabled duplicate shares the winner's name
    components = [
        {
            "kind": kind,
            "name": comp.name,
            "aliases": list(comp.aliases),
            "description": comp.description,
        }
        for kind, comp in (registry.components_of(info.name) if loaded else ())
    ]
    return {
        "name": info.name,
        "distribution": info.distribution,
        "version": info.version,
        "module": info.module,
        "status": info.status,
        "error": info.error,
        "hooks": list(info.hooks),
        "components": components,
    }


def merge_options(*parts: Mapping[str, Any] | None) -> dict[str, Any]:
    """Merge option mappings left to right, ignoring ``None`` parts."""
    out: dict[str, Any] = {}
    for part in parts:
        if part:
            out.update(part)
    return out
