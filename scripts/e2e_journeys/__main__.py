"""The schedlab page's end-to-end test: Selenium drives headless Chromium through the
page as a person would and checks what they should see. Run by scripts/e2e, which
builds dist/ and serves it.

usage: python3 scripts/e2e_journeys URL SCREENSHOT.png SCREENSHOT_EPYC.png SCHEDLAB_CLI

This package holds the journeys, one module per family (harness.py holds what
they share); JOURNEYS below runs them in order. Each journey is one function
taking a Page and the config; a journey's checks print PASS or FAIL,
an exception in a journey fails it (with the reason) and the next journey goes on.
The last line is `N passed, N failed`; the exit status is non-zero if any failed.

Selenium uses Debian's /usr/bin/chromium and /usr/bin/chromedriver (python3-selenium,
chromium, chromium-driver; scripts/setup --all) and downloads nothing: the paths are
explicit and SE_OFFLINE keeps Selenium Manager off the network.
"""

import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ beside the journeys
os.environ["SE_OFFLINE"] = "true"  # before selenium is imported: never fetch drivers

from harness import Page, check, note, results, start_browser  # noqa: E402
from accessibility import (  # noqa: E402
    accessibility,
    controls_drawn,
    dark_mode,
    drawing_follows_width,
    drawing_uses_width,
    keyboard,
    layout_1280,
    mobile_layout,
)
from lessons import code_view, examples, glossary, lessons  # noqa: E402
from links import (  # noqa: E402
    content_security_policy,
    epyc_cpu_200_dmesg,
    history,
    hostile_links,
    opening_page,
    page_settings_link,
    serving,
    wakeup_bad_link,
    wakeup_inputs_refused,
    wakeup_shared_link,
)
from designer_firmware import designer_firmware  # noqa: E402
from phone import phone_views  # noqa: E402
from designer_numa import designer_numa  # noqa: E402
from live import live, live_glide, live_layout  # noqa: E402
from embed import embed, embed_bad_link  # noqa: E402
from sharing import (  # noqa: E402
    custom_big_paste,
    custom_import,
    designer,
    domain_diff,
    export,
    presentation,
    share,
)
from simulate import (  # noqa: E402
    chart_band,
    chart_identical,
    link_budget,
    simulate_inputs,
    simulate_kept,
    simulate_long_run,
    simulate_seed01_example,
    simulate_seeds,
    simulate_shared_link,
    simulate_status,
    simulate_sweep,
)
from timeline import explain_sim_wake, timeline, timeline_stream, trace_download  # noqa: E402


JOURNEYS = [
    opening_page,
    content_security_policy,
    serving,
    accessibility,
    keyboard,
    history,
    share,
    page_settings_link,
    presentation,
    code_view,
    embed,
    embed_bad_link,
    epyc_cpu_200_dmesg,
    wakeup_shared_link,
    wakeup_bad_link,
    wakeup_inputs_refused,
    hostile_links,
    simulate_shared_link,  # the simulate_* journeys go on from one another's page
    simulate_inputs,
    simulate_sweep,
    simulate_seed01_example,
    simulate_long_run,
    simulate_seeds,
    simulate_status,
    link_budget,
    simulate_kept,
    live,
    live_glide,
    live_layout,
    chart_band,
    chart_identical,
    dark_mode,
    mobile_layout,
    drawing_follows_width,
    drawing_uses_width,
    designer,
    designer_numa,
    designer_firmware,
    custom_import,
    custom_big_paste,
    lessons,
    glossary,
    examples,
    layout_1280,
    phone_views,
    controls_drawn,
    export,
    domain_diff,
    timeline,
    timeline_stream,
    explain_sim_wake,
    trace_download,
]


def run_journey(page, cfg, journey):
    results.journey = journey.__name__
    print(f"{journey.__name__}: {' '.join(journey.__doc__.split())}", flush=True)
    failed_before = len(results.failed)
    try:
        journey(page, cfg)
    except Exception as e:  # a driver failure fails the journey, with its reason
        reason = (str(e).strip().splitlines() or [""])[0]
        check(False, f"the journey stopped: {type(e).__name__}: {reason}")
    if len(results.failed) > failed_before:
        kept = cfg["shot_epyc"].replace(".png", f"-{journey.__name__}-dom.html")
        try:
            with open(kept, "w", encoding="utf-8") as f:
                f.write(page.html)
            note(f"the DOM at the failure is kept at {kept}")
        except Exception:
            pass


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    url, shot, shot_epyc, cli = sys.argv[1:]
    cfg = {"shot": shot, "shot_epyc": shot_epyc, "cli": cli}
    only = os.environ.get("E2E_ONLY")  # e.g. E2E_ONLY=opening_page,wakeup_bad_link
    journeys = [j for j in JOURNEYS if not only or j.__name__ in only.split(",")]
    workdir = tempfile.mkdtemp(prefix="schedlab-e2e-")
    driver = None
    try:
        driver = start_browser(workdir)
        page = Page(driver, url)
        for journey in journeys:
            run_journey(page, cfg, journey)
    except Exception as e:
        results.journey = "browser"
        check(False, f"starting the browser: {type(e).__name__}: {e}")
        log = os.path.join(workdir, "chromedriver.log")
        if os.path.exists(log):
            print(open(log, encoding="utf-8", errors="replace").read()[-2000:])
    finally:
        if driver is not None:
            driver.quit()
        shutil.rmtree(workdir, ignore_errors=True)
    for what in results.failed:
        print(f"FAIL {what}")
    print(f"{results.passed} passed, {len(results.failed)} failed", flush=True)
    sys.exit(1 if results.failed else 0)


if __name__ == "__main__":
    main()
