"""`zerocopy` command line: detect (cli/detect.py), process (cli/process.py), serve (cli/serve.py), bench
(cli/bench.py), doctor, models; the grammar is cli/options.py."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import traceback
from collections.abc import Sequence

from zerocopy.catalog import CATALOG, DEFAULT_MODEL
from zerocopy.cli.options import (
    EXIT_BROKEN_PIPE,
    EXIT_FAIL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
    build_parser,
)
from zerocopy.errors import ConfigError, PathUnavailable, ZeroCopyError
from zerocopy.infer.telemetry import keep_openvino_quiet
from zerocopy.redaction import redact_text


def say(msg: str) -> None:
    """One line on stderr; any URL in it redacted (an error can quote the source it failed on)."""
    print(f"zerocopy: {redact_text(msg)}", file=sys.stderr, flush=True)


def cmd_doctor(args) -> int:
    from zerocopy.doctor import collect, render

    info = collect(va_device=args.va_device)
    print(json.dumps(info, indent=2) if args.json else render(info))
    return EXIT_OK


def cmd_models(args) -> int:
    from zerocopy.catalog.fetch import cache_dir, cached_path, check_known, pull

    if args.models_command == "pull":
        names = args.names or list(CATALOG)
        check_known(names)  # every name, before any download
        for name in names:
            path = pull(name, log=say)
            print(f"{name}\t{path}")
        return EXIT_OK
    cache = cache_dir()  # an unusable $ZEROCOPY_CACHE: one line before the table
    w = max(len(name) for name in CATALOG)
    use = {"detect": "--model", "classify": "--classify", "process": "process"}
    print(f"{'name':<{w}} {'use with':<10} {'input':<8} {'threshold':<9} {'cached':<7} suits")
    for e in CATALOG.values():
        mark = " (default)" if e.name == DEFAULT_MODEL else ""
        threshold = e.threshold if e.task == "detect" else "-"
        print(f"{e.name:<{w}} {use.get(e.task, e.task):<10} {e.size_text:<8} {threshold:<9} "
              f"{'yes' if cached_path(e) else 'no':<7} {e.suits}{mark}")
        print(f"{'':<{w}} {e.description}; {e.source.licence}")
    print("which model for which footage, with the measured recall: docs/models.md")
    print(f"cache: {cache}")
    return EXIT_OK


class _SayHandler(logging.Handler):
    """What the library logs (`logging.getLogger("zerocopy")`: a zone placed outside its frame, ...) said as
    the CLI says everything: one `zerocopy: ` line on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        say(record.getMessage())


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    library = logging.getLogger("zerocopy")
    if not any(isinstance(h, _SayHandler) for h in library.handlers):
        library.addHandler(_SayHandler(logging.WARNING))
        library.propagate = False
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        if args.command == "detect":
            from zerocopy.cli.detect import cmd_detect

            return cmd_detect(args, say)
        if args.command == "process":
            from zerocopy.cli.process import cmd_process

            return cmd_process(args, say)
        if args.command == "serve":
            from zerocopy.cli.serve import cmd_serve

            return cmd_serve(args, say)
        if args.command == "models":
            return cmd_models(args)
        if args.command == "doctor":
            return cmd_doctor(args)
        if args.command == "bench":
            from zerocopy.cli.bench import cmd_bench

            return cmd_bench(args, say)
    except PathUnavailable as e:
        for path, reasons in e.reasons.items():
            for why in reasons:
                say(f"the {path} path cannot run here: {why}")
        return EXIT_FAIL
    except ConfigError as e:  # a setting checked against the model (a class it lacks): a usage error
        say(str(e))
        return EXIT_USAGE
    except ZeroCopyError as e:
        say(str(e))
        return EXIT_FAIL
    except KeyboardInterrupt:
        say("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (e.g. `| head`): end quietly, as Unix tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as e:  # a bug: still one line, the traceback on request
        if os.environ.get("ZEROCOPY_DEBUG"):
            traceback.print_exc()
        say(f"internal error: {type(e).__name__}: {e} (set ZEROCOPY_DEBUG=1 for the traceback)")
        return EXIT_FAIL
    parser.print_help()
    return EXIT_USAGE


def entry() -> None:
    """The `zerocopy` command.

    A Ctrl-C or SIGTERM before or during a run stops it (during one, the run finishes the frames in
    flight, see `cli.runtime.stop_on_signals`); SIGTERM's exit code is 143, Ctrl-C's 130. Once `main` is
    done every output is closed, so the process ends at once (`os._exit`) instead of going through the
    interpreter's shutdown, where OpenVINO's and FFmpeg's native threads are torn down under Python's
    feet: a second Ctrl-C arriving then printed "Exception ignored …", and could even abort the process.
    """
    keep_openvino_quiet()
    done = False
    terminated = False

    def on_signal(signum, frame):
        nonlocal terminated
        terminated = terminated or signum == signal.SIGTERM
        if done:
            os._exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)
        raise KeyboardInterrupt

    def on_unraisable(unraisable) -> None:
        # A Ctrl-C that lands where Python cannot raise it (a generator or object finalised by the garbage
        # collector) has still been seen: the run stops as for the first one, without "Exception ignored".
        if issubclass(unraisable.exc_type, KeyboardInterrupt):
            return
        sys.__unraisablehook__(unraisable)

    sys.unraisablehook = on_unraisable
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        code = main()
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    if terminated and code == EXIT_INTERRUPTED:
        code = EXIT_TERMINATED
    done = True
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError):  # a closed pipe (`| head`) included
            stream.flush()
    os._exit(code)
