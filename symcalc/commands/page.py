"""`symcalc page [MODEL ...] -o calc.html`: the calculator page, one self-contained HTML file
that works offline (symcalc.page)."""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("page", help="write the interactive calculator page (one offline HTML file)")
    p.add_argument("model", nargs="*", metavar="MODEL",
                   help="one or two models shown first: preset names or config.json files "
                        "(default: mistral-7b); every preset is in the page")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the HTML file to write")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..inputs import presets
    from ..inputs.resolver import check_path
    from ..page import build, models_of
    from .derive import check_output, write

    check_output(args.output, example="calc")  # a folder, a FIFO, ...: before the build
    for name in args.model:  # a path whose status cannot be read: one line, as in report
        if not presets.exists(name):
            check_path(name)
    html = build(models_of(args.model))
    write(html, args.output)
    print(f"wrote {args.output} ({len(html.encode('utf-8')):,} bytes)")
    return 0
