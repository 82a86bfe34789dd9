"""`zerocopy` command line: detect (cli/detect.py), process (cli/process.py), bench, doctor, models; the grammar
is cli/options.py."""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

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
from zerocopy.redaction import redact_text


def say(msg: str) -> None:
    """One line on stderr; any URL in it redacted (an error can quote the source it failed on)."""
    print(f"zerocopy: {redact_text(msg)}", file=sys.stderr, flush=True)


def cmd_bench(args) -> int:
    import json

    from zerocopy.bench.runner import BenchOptions, run_bench
    from zerocopy.bench.tables import markdown, plot, table
    from zerocopy.cli.options import BENCH_SETTINGS, config_from
    from zerocopy.sinks.files import check_writable, write_text

    if args.plot and Path(args.plot).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ZeroCopyError(f"cannot write --plot {args.plot}: name a .png, .svg or .pdf file")
    for option, target in (("--json", args.json), ("--markdown", args.markdown), ("--plot", args.plot)):
        check_writable(option, target)
    opts = BenchOptions(input=args.input, config=config_from(args, BENCH_SETTINGS), paths=args.paths,
                        frames=args.frames, warmup=args.warmup, repeat=args.repeat)
    if args.streams:
        from zerocopy.bench.density import stream_density
        from zerocopy.bench.tables import density_table, plot_density

        result = stream_density(opts, args.max_streams, log=say)
        print(density_table(result))
        if args.plot:
            plot_density(result, args.plot)
            args.plot = None
        if args.markdown:
            write_text(args.markdown, density_table(result) + "\n", "--markdown")
            args.markdown = None
    else:
        result = run_bench(opts, log=say)
        print(table(result))
    if args.json == "-":
        print(json.dumps(result, indent=2))
    elif args.json:  # each written whole through a temporary: an old result is replaced, never truncated
        write_text(args.json, json.dumps(result, indent=2), "--json")
    if args.markdown:
        write_text(args.markdown, markdown(result), "--markdown")
    if args.plot:
        plot(result, args.plot)
    return EXIT_OK if result.get("paths") or result.get("density") else EXIT_FAIL


def cmd_doctor(args) -> int:
    import json

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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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
            return cmd_bench(args)
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
    import signal

    from zerocopy.infer.telemetry import keep_openvino_quiet

    keep_openvino_quiet()
    done = False
    terminated = False

    def on_signal(signum, frame):
        nonlocal terminated
        terminated = terminated or signum == signal.SIGTERM
        if done:
            os._exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)
        raise KeyboardInterrupt

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
