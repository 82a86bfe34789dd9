"""`zerocopy bench`: every path (or, with --streams, how many live streams one path keeps up with) measured in
worker processes, as a table, JSON, Markdown or a plot."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from zerocopy.bench.density import stream_density
from zerocopy.bench.runner import BenchOptions, run_bench
from zerocopy.bench.tables import density_table, markdown, plot, plot_density, table
from zerocopy.cli.options import BENCH_SETTINGS, EXIT_FAIL, EXIT_OK, config_from
from zerocopy.errors import ZeroCopyError
from zerocopy.sinks.files import check_writable, write_text


def cmd_bench(args, say: Callable[[str], None]) -> int:
    if args.plot and Path(args.plot).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ZeroCopyError(f"cannot write --plot {args.plot}: name a .png, .svg or .pdf file")
    for option, target in (("--json", args.json), ("--markdown", args.markdown), ("--plot", args.plot)):
        check_writable(option, target)
    opts = BenchOptions(input=args.input, config=config_from(args, BENCH_SETTINGS), paths=args.paths,
                        frames=args.frames, warmup=args.warmup, repeat=args.repeat)
    if args.streams:
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
