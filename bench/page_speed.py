"""Speed of the calculator page in a real browser (headless Chromium through selenium).

    python bench/page_speed.py [--runs 5] [--model mistral-7b]

Writes the page for the model, opens it from disk (file://) with the network off, and reports:
* load: navigation start to the end of the load event (the page's scripts, its data parsed
  and the first report drawn), median of --runs fresh loads;
* script: navigation start to the end of the first report (SYMCALC_UI.start returns);
* recompute: one full report from the spec and options (core.report: every quantity, every
  breakdown), median of 200 in the page;
* update: an edit's whole cost, the report and the figures redrawn (SYMCALC_UI.updateAll),
  median of 50.
Targets (issue 15): load < 300 ms, recompute < 5 ms.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--model", default="mistral-7b")
    ap.add_argument("--screenshot", metavar="PNG", help="also save a screenshot of the page "
                    "(the model beside llama-2-7b, a derivation open), e.g. docs/calc-page.png")
    args = ap.parse_args()
    from page_browser import browser  # tests/page_browser.py

    out = Path(tempfile.mkdtemp()) / "calc.html"
    subprocess.run([sys.executable, "-m", "symcalc.cli", "page", args.model, "-o", str(out)],
                   check=True, cwd=ROOT, capture_output=True)
    loads, scripts = [], []
    with browser() as d:
        for _ in range(args.runs):
            d.get(out.as_uri())
            nav = d.execute_script("const n = performance.getEntriesByType('navigation')[0];"
                                   "return [n.loadEventEnd, window.SYMCALC_READY_MS];")
            loads.append(nav[0])
            scripts.append(nav[1])
        timing = d.execute_script("""
            const C = SYMCALC_CORE, ui = SYMCALC_UI, p = ui.state.panes[0];
            const med = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
            const rec = [], upd = [];
            for (let k = 0; k < 200; k++) { const t = performance.now(); C.report(p.spec, ui.state.opts); rec.push(performance.now() - t); }
            for (let k = 0; k < 50; k++) { const t = performance.now(); ui.updateAll(); upd.push(performance.now() - t); }
            return [med(rec), med(upd)];""")
        version = d.capabilities.get("browserVersion", "?")
        if args.screenshot:
            d.set_window_size(1400, 1100)
            d.get(out.as_uri())
            d.execute_script("document.getElementById('compare').click();"
                             "document.querySelector('#results-0 button[data-derive=\"params.total\"]').click();"
                             "document.getElementById('fields-0').open = false;"
                             "document.getElementById('fields-1').open = false;")
            d.save_screenshot(args.screenshot)
    size = out.stat().st_size
    print(f"page: {args.model}, {size:,} bytes; Chromium {version} headless, 2-core machine")
    print(f"load (navigation start to load event end): median {statistics.median(loads):.0f} ms "
          f"over {len(loads)} loads (min {min(loads):.0f}, max {max(loads):.0f})")
    print(f"scripts done, first report drawn: median {statistics.median(scripts):.0f} ms")
    print(f"recompute (core.report, full report): median {timing[0]:.2f} ms over 200")
    print(f"update after an edit (report + figures redrawn): median {timing[1]:.2f} ms over 50")
    return 0


if __name__ == "__main__":
    sys.exit(main())
