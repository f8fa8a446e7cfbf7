#!/usr/bin/python3
"""Measures the page as a visitor meets it, for the figures issues #17 and #18 ask
for. A measurement, not a test: it prints numbers and checks nothing.

usage: page-figures.py URL [--runs N]

Serve dist/ first (scripts/page-figures does it). For each of N runs, in a fresh
browser profile:

1. **First paint on a slow link**: Chromium's own network and CPU emulation through
   the DevTools protocol (10 Mbit/s down, 40 ms round trip, the CPU 4x slower, as
   issue #17 measured it). Reports first contentful paint (the loading notice in
   index.html), the moment the app replaced it (`#loading` gone), and the bytes the
   page fetched (transfer sizes from the Resource Timing API).
2. **Seed 01's tbench table, first and second visit** at full speed: picks the
   Simulate tab's seed-01 example and times it until the status says done (42
   simulations: 7 scales x 2 sides x 3 seeds). Then loads the page again in the same
   profile (the wasm now comes from the HTTP cache: `immutable`) and times the same.

Medians over the runs are printed as a Markdown table.
"""
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "e2e_journeys"))
import harness as e2e  # noqa: E402  (the e2e's browser setup and page helpers)

SLOW = {"offline": False, "latency": 40, "downloadThroughput": 10e6 / 8,
        "uploadThroughput": 5e6 / 8}


def first_paint(url):
    """One fresh profile on the slow link: (fcp ms, app ms, bytes)."""
    work = tempfile.mkdtemp(prefix="figures-")
    driver = e2e.start_browser(work)
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", SLOW)
        driver.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": 4})
        page = e2e.Page(driver, url)
        page.open()
        page.until(lambda: page.count("#loading") == 0 and page.count(".tabs, [role=tablist]") > 0,
                   timeout=120)
        fcp = page.js("const p = performance.getEntriesByName('first-contentful-paint');"
                      "return p.length ? p[0].startTime : null")
        # static/boot.js marks the moment the module has started and the app drew itself.
        app = page.js("const m = performance.getEntriesByName('schedlab-started');"
                      "return m.length ? m[0].startTime : null")
        sent = page.js("return performance.getEntriesByType('resource')"
                       ".reduce((n, r) => n + (r.transferSize || 0), 0)"
                       " + (performance.getEntriesByType('navigation')[0] || {}).transferSize")
        return fcp, app, sent
    finally:
        driver.quit()


def seed01_table(url):
    """First and second visit to seed 01's table in one profile: (s, s)."""
    work = tempfile.mkdtemp(prefix="figures-")
    driver = e2e.Page(e2e.start_browser(work), url)
    times = []
    try:
        for _ in range(2):
            driver.open()
            driver.wait_for("#sim-example", timeout=60)
            t0 = time.monotonic()
            tabs = driver.all("[role=tab]")
            for t in tabs:
                if "Simulate" in t.text:
                    t.click()
            driver.select("#sim-example", "seed01-tbench")
            driver.wait_for(".sim-status.done", timeout=600,
                            pred=lambda t: "42 simulations" in t[0])
            times.append(time.monotonic() - t0)
        return times
    finally:
        driver.driver.quit()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    url = sys.argv[1]
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    paints = [first_paint(url) for _ in range(runs)]
    tables = [seed01_table(url) for _ in range(max(1, runs // 2))]
    med = statistics.median
    print("| figure | median | runs |")
    print("|---|---|---|")
    print(f"| first contentful paint, 10 Mbit/s 40 ms RTT, CPU 4x slower | "
          f"{med(p[0] for p in paints):.0f} ms | {', '.join(f'{p[0]:.0f}' for p in paints)} |")
    print(f"| app running (loading notice replaced), same conditions | "
          f"{med(p[1] for p in paints):.0f} ms | {', '.join(f'{p[1]:.0f}' for p in paints)} |")
    print(f"| bytes fetched on a first visit | {med(p[2] for p in paints) / 1024:.0f} KiB | "
          f"{', '.join(str(p[2]) for p in paints)} |")
    print(f"| seed 01 tbench table, first visit | {med(t[0] for t in tables):.1f} s | "
          f"{', '.join(f'{t[0]:.1f}' for t in tables)} |")
    print(f"| seed 01 tbench table, second visit (wasm cached) | {med(t[1] for t in tables):.1f} s | "
          f"{', '.join(f'{t[1]:.1f}' for t in tables)} |")


if __name__ == "__main__":
    main()
