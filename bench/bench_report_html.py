"""Benchmark of ``report.html`` (issue 15): the page rendered for ``aci-demo``, for the 40 test3
reference notes, and for a 100-note page (the test3 notes and their verdicts repeated under new
ids: about 5,000 claims), each opened in headless Chromium (Debian's ``chromium`` through
Playwright). Prints per page: notes, claims, file size, the time from navigation to the
script's ready mark, the time a click on the first flagged claim takes to show its panel, and
the page errors; saves two screenshots per page (the claim panel, the filtered table) next to
it.

    .venv/bin/python bench/bench_report_html.py [--out runs/bench-report-html]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from clinjudge.datasets import load_aci_bench, load_items  # noqa: E402
from clinjudge.datasets.items import Item  # noqa: E402
from clinjudge.report.html_report import page_data, render_html  # noqa: E402

ACI = Path(__file__).resolve().parents[2] / "shared" / "data" / "aci-bench"
JUDGES = "lexical,inference-aware,omission"


def compare(dataset: str, out: Path) -> Path:
    subprocess.run(
        ["clinjudge", "compare", dataset, "--judges", JUDGES, "--out", str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return out / "report.html"


def repeated_page(run: Path, items: list[Item], copies: int, out: Path) -> Path:
    """A page of ``copies`` × the run's notes: the same verdicts under new ids."""
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    rows = {
        p.stem: [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
        for p in (run / "runs").glob("*.jsonl")
    }
    kinds = {name: summary["kind"] for name, summary in report["judges"].items()}
    many_items, many_rows = [], {name: [] for name in rows}
    for k in range(copies):
        for item in items:
            many_items.append(item.model_copy(update={"id": f"{item.id}-{k}"}))
        for name, judge_rows in rows.items():
            many_rows[name] += [{**r, "id": f"{r['id']}-{k}"} for r in judge_rows]
    many_items = many_items[:100]
    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.html"
    path.write_text(render_html(page_data(report, many_items, kinds, many_rows)), encoding="utf-8")
    return path


def measure(path: Path) -> None:
    from playwright.sync_api import sync_playwright

    html = path.read_text(encoding="utf-8")
    start = html.index('type="application/json">') + len('type="application/json">')
    data = json.loads(html[start : html.index("</script>", start)])
    claims = sum(len(n["claims"]) for n in data["notes"])
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        tab.on("pageerror", lambda e: errors.append(str(e)))
        started = time.perf_counter()
        tab.goto(path.as_uri())
        tab.wait_for_selector("body[data-ready='1']")
        ready = time.perf_counter() - started
        started = time.perf_counter()
        tab.locator("#flagged tbody tr").first.click()
        tab.wait_for_selector("#detail:not([hidden])")
        click = time.perf_counter() - started
        tab.screenshot(path=str(path.with_name("screenshot-claim.png")))
        tab.keyboard.press("Escape")
        tab.select_option("#f-judge", "inference-aware")
        tab.screenshot(path=str(path.with_name("screenshot-table.png")))
        browser.close()
    size = path.stat().st_size / 1e6
    print(
        f"{path.parent.name:>14}: {len(data['notes']):3d} notes, {claims:5d} claims, "
        f"{size:5.1f} MB; ready {ready * 1000:6.0f} ms, claim panel {click * 1000:5.0f} ms; "
        f"page errors {len(errors)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/bench-report-html"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    demo = compare("aci-demo", args.out / "aci-demo")
    test3_items = load_aci_bench(ACI / "challenge_data" / "clef_taskC_test3.csv").items
    data = args.out / "test3.jsonl"
    with data.open("w", encoding="utf-8") as f:
        for item in test3_items:
            f.write(json.dumps({"id": item.id, "transcript": item.transcript, "note": item.note}))
            f.write("\n")
    test3 = compare(str(data), args.out / "test3")
    big = repeated_page(args.out / "test3", load_items(data).items, 3, args.out / "test3-x100")
    for page in (demo, test3, big):
        measure(page)


if __name__ == "__main__":
    main()
