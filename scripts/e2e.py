#!/usr/bin/python3
"""The schedlab page's end-to-end test: Selenium drives headless Chromium through the
page as a person would and checks what they should see. Run by scripts/e2e, which
builds dist/ and serves it.

usage: e2e.py URL SCREENSHOT.png SCREENSHOT_EPYC.png SCHEDLAB_CLI

Each journey is one function taking a Page; a journey's checks print PASS or FAIL,
an exception in a journey fails it (with the reason) and the next journey goes on.
The last line is `N passed, N failed`; the exit status is non-zero if any failed.

Selenium uses Debian's /usr/bin/chromium and /usr/bin/chromedriver (python3-selenium,
chromium, chromium-driver; scripts/setup --all) and downloads nothing: the paths are
explicit and SE_OFFLINE keeps Selenium Manager off the network.
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

os.environ["SE_OFFLINE"] = "true"  # before selenium is imported: never fetch drivers

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import (  # noqa: E402
    NoSuchElementException,
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1400,1100",
]
VIEWPORT = (1400, 1100)


# ---------------------------------------------------------------- results


class Results:
    """Counts the checks; prints each as PASS or FAIL."""

    def __init__(self):
        self.passed = 0
        self.failed = []
        self.journey = ""

    def check(self, ok, what):
        ok = bool(ok)
        print(f"  {'PASS' if ok else 'FAIL'} {what}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed.append(f"{self.journey}: {what}")
        return ok


results = Results()
check = results.check


def note(what):
    """An informational line (timings, paths), not a check."""
    print(f"       ({what})", flush=True)


# ---------------------------------------------------------------- the page


class Page:
    """The page in one browser session, with waits that tolerate Yew's re-renders
    (an element found a moment ago may be gone: that is "not yet", not an error)."""

    RETRY = (StaleElementReferenceException, NoSuchElementException, IndexError)

    def __init__(self, driver, url):
        self.driver = driver
        self.url = url.split("#")[0]

    def open(self, fragment=None):
        """Loads the page afresh, from a shared link's fragment if given."""
        self.driver.get("about:blank")
        self.driver.get(self.url + ("#" + fragment if fragment else ""))

    def all(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def count(self, css):
        return len(self.all(css))

    def texts(self, css):
        """The rendered text of every element matching css (as a user reads it)."""
        return [e.text for e in self.all(css)]

    def text(self, css):
        """The first match's text, or None."""
        found = self.texts(css)
        return found[0] if found else None

    def attrs(self, css, name):
        return [e.get_attribute(name) for e in self.all(css)]

    def until(self, fn, timeout=30.0, poll=0.05):
        """Calls fn() until it is truthy and returns that; on timeout returns its last value."""
        last = [None]

        def attempt(_):
            last[0] = fn()
            return last[0]

        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=poll,
                                 ignored_exceptions=self.RETRY).until(attempt)
        except TimeoutException:
            return last[0]

    def wait_for(self, css, timeout=30.0, pred=None):
        """Waits until elements match css (and pred(texts) holds); returns their texts,
        or on timeout whatever matched last, for the check to show."""
        last = [[]]

        def attempt():
            t = self.texts(css)
            last[0] = t
            return t if t and (pred is None or pred(t)) else None

        return self.until(attempt, timeout, poll=0.1) or last[0]

    def wait_count(self, css, n, timeout=30.0):
        """Waits until n elements match css; returns how many matched last."""
        last = [0]

        def attempt():
            last[0] = self.count(css)
            return last[0] == n

        self.until(attempt, timeout)
        return last[0]

    def click(self, css):
        found = self.all(css)
        if not found:
            raise NoSuchElementException(f"nothing matches {css}")
        found[0].click()

    def select(self, css, value):
        """Picks the option with this value in a <select>, as a person would."""
        Select(self.driver.find_element(By.CSS_SELECTOR, css)).select_by_value(value)

    def set_input(self, css, value):
        """Types a value into an input as a person would end an edit: value, then change."""
        self.js("const e = document.querySelector(arguments[0]); e.value = arguments[1];"
                "e.dispatchEvent(new Event('change', {bubbles: true}));", css, value)

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    @property
    def hash(self):
        return self.js("return location.hash")

    @property
    def html(self):
        """The live DOM, serialised."""
        return self.js("return document.documentElement.outerHTML")

    def screenshot(self, path):
        if not self.driver.save_screenshot(path):
            raise WebDriverException(f"could not write the screenshot {path}")


def chart_series(page):
    """Every line in the Simulate tab's chart, as
    [{"side": "a" | "b", "published": bool, "points": [(x, y), ...], "markers": int}].

    The one place that knows how the chart is drawn. Today: plotters' SVG in
    .sim-chart; a series is a <polyline data-side>, a sweep's model series has a
    <circle data-side> marker per point, and the published numbers are
    polyline.published-line (with data-side).
    """
    raw = page.js("""
        return [...document.querySelectorAll('.sim-chart polyline')].map(p => {
          const side = p.dataset.side || null;
          const published = p.classList.contains('published-line');
          const chart = p.closest('.sim-chart');
          return {
            side: side,
            published: published,
            points: p.getAttribute('points') || '',
            markers: side && !published
              ? chart.querySelectorAll(`circle[data-side="${side}"]`).length : 0,
          };
        })""")
    for s in raw:
        s["points"] = [tuple(float(v) for v in xy.split(",")) for xy in s["points"].split()]
    return raw


# ---------------------------------------------------------------- scenarios and the CLI


def fragment(scenario):
    """core::scenario's v1 encoding: base64url (no padding) of the JSON."""
    raw = json.dumps(scenario, separators=(",", ":")).encode()
    return "v1:" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


# Seed 01's case on kunpeng920-6426: everything busy but CPU2 (in the waker CPU0's
# cluster 0-3) and CPU12 (the wakee's prev, cluster 12-15); 6.6 against 6.6+cluster.
TEACHING = {
    "machine": "kunpeng920-6426", "patches": "6.6", "view": "wakeup",
    "wake": {"busy": "0-1,3-11,13-127", "waker": 0, "prev": 12, "sync": True,
             "nr_idle_scan": 8, "compare": "6.6+cluster"},
}

# Seed 01's tbench case, short: 4 clients pinned to node 0, 6.6 against 6.6+cluster.
SIMULATE = {
    "machine": "kunpeng920-6426", "patches": "6.6", "view": "simulate",
    "wake": {"compare": "6.6+cluster"},
    "sim": {"workload": {"kind": "tbench", "clients": 4}, "cpus": "node0",
            "duration_ms": 60, "seed": 1},
}


def cli_json(cfg, *args):
    out = subprocess.run([cfg["cli"], *args, "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def native(cfg, sim, patches):
    """The digest `schedlab run` gives for a page's simulation."""
    w = sim["workload"]
    return cli_json(cfg, "run", "--machine", "kunpeng920-6426", "--cpus", sim["cpus"],
                    "--workload", w["kind"], "--threads", str(w["clients"]),
                    "--duration-ms", str(sim["duration_ms"]), "--seed", str(sim["seed"]),
                    "--patches", patches)["digest"]


# ---------------------------------------------------------------- journeys

# The default page is kunpeng920-6426 on v6.8 with CPU 0 chosen. Its domains, bottom-up
# after degeneration (NODE and PKG degenerate into MC and NUMA), start CLS 0-3, MC 0-31,
# then only NUMA levels from 0-63 up to the whole machine, 0-127. (With this SLIT,
# 10/16/32/33 from node 0, the distance-32 level 0-95 lies between; which NUMA levels
# survive is core's to test, this checks the page shows them.)
EXPECTED_BOTTOM = [("CLS", "0-3"), ("MC", "0-31"), ("NUMA", "0-63")]
EXPECTED_TOP = ("NUMA", "0-127")


def opening_page(page, cfg):
    """The page as it opens, untouched: the default machine, kernel, CPU and domains."""
    page.open()
    page.wait_for(".level-name")
    check("schedlab" in page.driver.title, f"page title mentions schedlab (got {page.driver.title!r})")
    errors = page.texts(".error")
    check(not errors, f"no error messages shown (got {errors})")
    preset = page.js("return document.querySelector('#preset').value")
    check(preset == "kunpeng920-6426" and "kunpeng920-6426" in page.html,
          f"the default preset kunpeng920-6426 is named and chosen (got {preset!r})")
    cpus = page.count(".cpu")
    check(cpus == 128, f"the machine drawing has 128 CPU buttons (got {cpus})")
    selected = page.attrs("button.selected", "data-cpu")
    check(selected == ["0"], f"CPU 0 is the selected CPU (got {selected})")
    levels = list(zip(page.texts(".level-name"), page.texts(".level-span")))
    check(levels[:3] == EXPECTED_BOTTOM, f"CPU 0's lowest domains on v6.8 are {EXPECTED_BOTTOM} (got {levels})")
    check(levels[-1:] == [EXPECTED_TOP], f"CPU 0's top domain is {EXPECTED_TOP} (got {levels})")
    names = [n for n, _ in levels]
    check(all(n == "NUMA" for n in names[2:]), f"above MC there are only NUMA levels (got {names})")
    kernel = page.js("const s = document.querySelector('#release');"
                     "return s.options[s.selectedIndex].text")
    check(kernel == "v6.8" and "v6.8" in page.html, f"kernel v6.8 is shown (got {kernel!r})")
    cls_flags = page.texts('.level[data-level="CLS"] .flag')
    check("SD_CLUSTER" in cls_flags, f"the CLS level's SD_CLUSTER flag is shown (got {cls_flags})")
    check("panicked" not in page.html, "no Rust panic text in the page")
    page.screenshot(cfg["shot"])


def content_security_policy(page, cfg):
    """The page runs under its strict Content-Security-Policy (index.html's meta tag):
    the module, the drawing, a chart and the simulation workers, with no violation."""
    # Record every violation from the first script on (CDP: before the page's own).
    page.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.__csp = [];
        document.addEventListener('securitypolicyviolation',
          e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"""})
    page.open(fragment(SIMULATE))
    policy = page.js("const m = document.querySelector('meta[http-equiv=Content-Security-Policy]');"
                     "return m && m.content")
    check(policy and "script-src 'self' 'wasm-unsafe-eval'" in policy
          and "unsafe-inline" not in policy.replace("style-src-attr 'unsafe-inline'", ""),
          f"the page declares a strict policy (got {policy!r})")
    done = page.wait_for(".sim-status.done", timeout=180)
    check(done and page.count(".sim-chart polyline") >= 2,
          f"the workers run and the chart draws under it (got {done[:1]})")
    violations = page.js("return window.__csp || null")
    check(violations == [], f"no policy violations (got {violations})")


def epyc_cpu_200_dmesg(page, cfg):
    """Pick the 384-CPU EPYC, click CPU 200 in the drawing, open the dmesg tab."""
    page.open()
    names = page.wait_for(".level-name")
    check(names[:2] == ["CLS", "MC"], f"kunpeng920-6426 CPU 0 starts CLS, MC (got {names})")

    t0 = time.monotonic()
    page.select("#preset", "epyc9654-2p")
    n = page.wait_count("button.cpu", 384)
    check(n == 384, f"epyc9654-2p draws 384 CPUs (got {n})")
    note(f"machine and domains rebuilt and drawn in {time.monotonic() - t0:.1f} s")

    # CPU 200 is the SMT sibling of CPU 8.
    page.click('button.cpu[data-cpu="200"]')
    spans = page.wait_for(".level-span", pred=lambda t: "200" in t[0])
    names = page.texts(".level-name")
    check(names[:2] == ["SMT", "MC"], f"CPU 200's lowest levels are SMT, MC (got {names})")
    check(spans[:2] == ["8,200", "8-15,200-207"],
          f"CPU 200's SMT and MC spans are 8,200 and 8-15,200-207 (got {spans})")
    check(spans[-1:] == ["0-383"], f"CPU 200's top domain spans 0-383 (got {spans})")
    selected = page.texts("button.cpu.selected")
    check(selected == ["200"], f"CPU 200 is shown selected (got {selected})")

    page.click(".tabs button:nth-child(2)")
    pre = page.wait_for("pre.dmesg", pred=lambda t: "CPU200" in t[0])
    check(bool(pre) and "CPU200 attaching sched-domain" in pre[0],
          "the dmesg tab shows 'CPU200 attaching sched-domain...'")
    page.click(".tabs button:nth-child(1)")
    page.wait_for(".level-name")
    page.screenshot(cfg["shot_epyc"])
    errors = page.texts(".error")
    check(not errors, f"no error messages (got {errors})")


def wakeup_shared_link(page, cfg):
    """The wake-up tab opened from a shared link: both decisions, their traces and
    probes, and a click in the drawing that the URL follows."""
    t0 = time.monotonic()
    page.open(fragment(TEACHING))
    a = page.wait_for('.decision[data-side="a"] .chosen-cpu')
    b = page.wait_for('.decision[data-side="b"] .chosen-cpu')
    note(f"link opened and both wake-ups decided in {time.monotonic() - t0:.1f} s")
    heads = page.texts(".decision-head code")
    check(heads == ["v6.6", "v6.6+cluster"], f"the two columns are v6.6 and v6.6+cluster (got {heads})")
    check(a == ["CPU 12"], f"6.6 sends the wakee to its idle prev, CPU 12 (got {a})")
    check(b == ["CPU 2"], f"6.6+cluster sends it to idle CPU 2 in the waker's cluster (got {b})")
    chosen = page.texts("button.cpu.chosen-a")
    check(chosen and chosen[0].startswith("12"), f"CPU 12 is marked chosen (A) in the drawing (got {chosen})")
    chosen = page.texts("button.cpu.chosen-b")
    check(chosen and chosen[0].startswith("2"), f"CPU 2 is marked chosen (B) in the drawing (got {chosen})")
    trace = page.wait_for(".side-b .trace")
    check(trace and "select_idle_cpu" in trace[0], "B's trace shows select_idle_cpu()")
    errors = page.texts(".error")
    check(not errors, f"no error messages on the wake-up tab (got {errors})")
    # B's probes numbered in the drawing: CPU1 busy (1), CPU2 taken (2).
    page.click(".side-b .decision .focus")
    probes = page.wait_for("button.cpu.probe-taken")
    check(probes and re.sub(r"\s+", "", probes[0]) == "22",
          f"CPU 2 is drawn as probe 2, taken (got {probes})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-wakeup.png"))

    # A click in the drawing (busy/idle mode) changes the state and the URL follows.
    before = page.hash
    page.click('button.cpu[data-cpu="1"]')
    count = page.wait_for(".wakeup .count", pred=lambda t: t[0].startswith("125"))
    check(count[:1] == ["125 of 128 busy"], f"clicking CPU 1 makes it idle (got {count})")
    after = page.hash
    check(after.startswith("#v1:") and after != before, "the URL fragment follows the state")


def wakeup_bad_link(page, cfg):
    """A damaged link shows a banner, and the page keeps working under it."""
    page.open(fragment(TEACHING))
    page.wait_for('.decision[data-side="a"] .chosen-cpu')
    page.js("location.hash = '#v1:this-is-not-a-scenario!'")
    banner = page.wait_for(".banner")
    check(banner and "could not be opened" in banner[0],
          f"a garbage fragment shows the error banner (got {banner})")
    a = page.wait_for('.decision[data-side="a"] .chosen-cpu')
    check(a, f"the wake-up decisions are still shown under the banner (got {a})")
    page.click("#all-idle")
    count = page.wait_for(".wakeup .count", pred=lambda t: t[0].startswith("0 of"))
    check(count[:1] == ["0 of 128 busy"], f"the page still reacts after a bad link (got {count})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-badlink.png"))


# Issue 16's hostile links: the largest machine a link may carry (4096 CPUs in one
# LLC), and a machine whose one CPU sits on NUMA node 65535 (refused by core's machine
# build before it sizes anything: node ids past MAX_NUMNODES, 1024).
BIG_MACHINE = {"machine": {"name": "m", "arch": "x86", "packages": 1, "cores_per_llc": 4096},
               "patches": "6.8"}
NODE_65535 = {"machine": {"name": "m", "arch": "x86", "cpus": [{"cpu": 0, "node": 65535}]},
              "patches": "6.8"}


def hostile_links(page, cfg):
    """Links that once froze the tab: each opens in a fresh page to a working page or a
    clear message, quickly (target 3 s, checked at 5 s), and the tab answers a click."""
    for name, scenario, want in [
        ("4096 CPUs", BIG_MACHINE, None),
        ("4096 CPUs, wake-up tab comparing 6.6", dict(BIG_MACHINE, view="wakeup",
                                                      wake={"compare": "6.6"}), None),
        ("node 65535", NODE_65535, "at most 1024 NUMA nodes"),
    ]:
        t0 = time.monotonic()
        page.open(fragment(scenario))
        page.until(lambda: page.count(".banner") or page.count("button.cpu"), timeout=60)
        opened = time.monotonic() - t0
        banner, cpus = page.texts(".banner"), page.count("button.cpu")
        if want:
            check(banner and want in banner[0] and "could not be opened" in banner[0],
                  f"{name}: the link is refused with a clear message (got {banner})")
        else:
            check(not banner and cpus == 4096,
                  f"{name}: the machine opens and is drawn (got {cpus} CPUs, banner {banner})")
        # The target is 3 s (issue 16; measured 1.2-2.0 s here); the check allows 5 s so
        # a busy CI machine does not fail it, and prints the time either way.
        check(opened < 5.0, f"{name}: the page is up within 5 s (took {opened:.2f} s)")
        t1 = time.monotonic()
        page.click(".tabs button:nth-child(2)")
        pre = page.wait_for("pre.dmesg", timeout=30)
        took = time.monotonic() - t1
        check(pre and took < 3.0, f"{name}: a click on the dmesg tab is answered within 3 s "
                                  f"(took {took:.2f} s)")


def simulate_shared_link(page, cfg):
    """The Simulate tab from a shared link: both runs finish with the native CLI's
    digests, the chart draws both, and the drawing shades the CPUs by utilisation."""
    t0 = time.monotonic()
    page.open(fragment(SIMULATE))
    done = page.wait_for(".sim-status.done", timeout=180)
    note(f"link opened and both simulations ran in {time.monotonic() - t0:.1f} s: {done[:1]}")
    check(done, "both simulations finish")
    digests = {side: page.wait_for(f'.digest[data-side="{side}"]') for side in "ab"}
    want = {"a": native(cfg, SIMULATE["sim"], "6.6"), "b": native(cfg, SIMULATE["sim"], "6.6+cluster")}
    check(digests["a"] == [want["a"]] and digests["b"] == [want["b"]],
          f"the browser's digests are the native CLI's (browser {digests}, native {want})")
    change = page.wait_for(".change-pct")
    check(change and change[0].startswith("+12."),
          f"6.6+cluster is about 12.8% better, as seed 01's table (got {change})")
    series = chart_series(page)
    shape = sorted((s["side"], len(s["points"])) for s in series)
    check([s for s, _ in shape] == ["a", "b"] and min(n for _, n in shape) >= 3,
          f"the chart draws A and B over the window (sides and points {shape})")
    heat = page.wait_count("button.cpu.heat", 32)
    check(heat == 32, f"the drawing shades node 0's 32 CPUs by utilisation (got {heat})")
    page.click('button[data-heat-side="B"]')
    titles = page.attrs("button.cpu.heat", "title")
    check(len(titles) == 32 and all("busy" in t for t in titles), "each shaded CPU says how busy it was")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-simulate.png"))


def simulate_inputs(page, cfg):
    """Continues on the Simulate tab: a new input starts a new run and the link follows;
    a bad CPU list is refused with the reason and the results stay."""
    a1 = page.wait_for('.digest[data-side="a"]')
    before = page.hash
    page.set_input("#sim-threads", "2")
    page.until(lambda: page.count(".sim-status.done")
               and page.texts('.digest[data-side="a"]') not in ([], a1), timeout=180)
    a2 = page.wait_for('.digest[data-side="a"]')
    two = dict(SIMULATE["sim"], workload={"kind": "tbench", "clients": 2})
    check(a2 == [native(cfg, two, "6.6")], f"2 clients rerun and match the CLI again (got {a2})")
    after = page.hash
    check(after.startswith("#v1:") and after != before, "the URL fragment follows the simulation")

    page.set_input("#sim-cpus", "node9")
    err = page.wait_for(".sim-error")
    check(err and "nodes 0-3" in err[0], f"a bad CPU list says which nodes exist (got {err})")
    kept = page.wait_for('.digest[data-side="a"]')
    check(kept == a2, f"the last results stay on screen (got {kept})")
    note(f"after the bad input the CPUs field shows {page.js('return document.querySelector(arguments[0]).value', '#sim-cpus')!r}")


def simulate_sweep(page, cfg):
    """Continues on the Simulate tab: a sweep, as seed 01's table, whose rows must be
    the native `schedlab sweep`'s."""
    page.set_input("#sim-cpus", "node0")
    page.set_input("#sim-duration", "30")
    page.set_input("#sim-sweep", "1,4,8")
    page.wait_for(".sim-status.done", timeout=180, pred=lambda t: "simulations" in t[0])
    rows = page.js("return [...document.querySelectorAll('.sweep-table tbody tr')]"
                   ".map(r => [r.dataset.threads, r.querySelector('.change-cell').textContent])")
    out = cli_json(cfg, "sweep", "--machine", "kunpeng920-6426", "--cpus", "node0",
                   "--workload", "tbench", "--threads", "1,4,8", "--baseline", "6.6",
                   "--patched", "6.6+cluster", "--duration-ms", "30", "--seed", "1",
                   "--seeds", "1")
    want = [[str(r["threads"]), f'{r["change_pct"]:+.2f}%'] for r in out["rows"]]
    check(rows == want, f"the sweep's rows are the native sweep's (page {rows}, native {want})")
    markers = sorted((s["side"], s["markers"]) for s in chart_series(page) if not s["published"])
    check(markers == [("a", 3), ("b", 3)],
          f"the sweep chart has a point per scale and side (got {markers})")
    cmd = page.wait_for(".sim-cli code")
    check(cmd and cmd[0].startswith("schedlab sweep") and "--threads 1,4,8" in cmd[0],
          f"the page prints the sweep's command line (got {cmd})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-sweep.png"))
    page.set_input("#sim-sweep", "")


def simulate_seed01_example(page, cfg):
    """Continues on the Simulate tab: one click opens seed 01's tbench table, with the
    published changes beside the model's."""
    page.select("#sim-example", "seed01-tbench")
    # 7 scales x 2 sides x the CI scale's 3 seeds.
    t0 = time.monotonic()
    page.wait_for(".sim-status.done", timeout=240, pred=lambda t: "42 simulations" in t[0])
    note(f"seed 01's tbench example ran in {time.monotonic() - t0:.1f} s")
    pub = page.js("return [...document.querySelectorAll('.sweep-table tbody tr')]"
                  ".map(r => [r.dataset.threads, r.querySelector('td.published').textContent])")
    check(pub[:1] == [["1", "+13.80%"]] and len(pub) == 7,
          f"seed 01's example shows the published change per row (got {pub})")
    model = page.texts(".sweep-table .change-cell")
    check(len(model) == 7 and all(re.match(INTERVAL, m) for m in model),
          f"the model's change over 3 seeds is shown with its interval on every row (got {model})")
    dashed = sorted(s["side"] for s in chart_series(page) if s["published"])
    check(dashed == ["a", "b"], f"the published tbench numbers are drawn dashed beside the model's (got {dashed})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-example.png"))
    page.set_input("#sim-sweep", "")


# A change over seeds as the page prints it: `+12.8 % [+12.7, +12.9]`.
INTERVAL = r"^[+-]\d+\.\d % \[[+-]\d+\.\d, [+-]\d+\.\d\]"


def simulate_seeds(page, cfg):
    """A link that asks for 3 seeds per side: each seed's digests are the native CLI's
    (`run --seeds 3`), and the change with its interval is the native sweep's."""
    sim = dict(SIMULATE["sim"], seeds=3)
    page.open(fragment(dict(SIMULATE, sim=sim)))
    done = page.wait_for(".sim-status.done", timeout=180)
    check(done, f"the 6 simulations finish (got {done[:1]})")
    w = sim["workload"]
    args = ["--machine", "kunpeng920-6426", "--cpus", sim["cpus"], "--workload", w["kind"],
            "--duration-ms", str(sim["duration_ms"]), "--seed", str(sim["seed"]), "--seeds", "3"]
    for side, patches in (("a", "6.6"), ("b", "6.6+cluster")):
        runs = cli_json(cfg, "run", *args, "--threads", str(w["clients"]),
                        "--patches", patches)["over_seeds"]["runs"]
        want = [r["digest"] for r in runs]
        got = page.wait_for(f'.digest[data-side="{side}"]')
        seeds = page.attrs(f'.digest[data-side="{side}"]', "data-seed")
        check(got == want and seeds == ["1", "2", "3"],
              f"side {side}: seeds 1-3's digests are the native CLI's (browser {got} {seeds}, native {want})")
    row = cli_json(cfg, "sweep", *args, "--threads", str(w["clients"]), "--baseline", "6.6",
                   "--patched", "6.6+cluster")["rows"][0]
    want = f'{row["change_pct"]:+.1f} % [{row["change_lo"]:+.1f}, {row["change_hi"]:+.1f}]'
    change = page.wait_for(".change-pct")
    check(change == [want] and re.match(INTERVAL, change[0]),
          f"the change and its 95% interval are the native sweep's (page {change}, native {want})")
    cmd = page.wait_for(".sim-cli code")
    check(len(cmd) == 2 and all("--seeds 3" in c for c in cmd),
          f"the command lines carry --seeds 3 (got {cmd})")


def simulate_long_run(page, cfg):
    """Continues on the Simulate tab: a long run goes on in the workers, the page
    answers clicks meanwhile, and Stop stops it."""
    page.set_input("#sim-duration", "30000")
    running = page.wait_for(".sim-status.running", timeout=30)
    check(running, f"a 30 s simulation is running (got {running})")
    t0 = time.monotonic()
    page.click('button.cpu[data-cpu="5"]')
    selected = page.wait_for("button.cpu.selected", timeout=5, pred=lambda t: t == ["5"])
    took = time.monotonic() - t0
    check(selected == ["5"] and took < 2.0,
          f"a click in the drawing is answered while it runs (got {selected} in {took:.2f} s)")
    page.click("#sim-stop")
    stopped = page.wait_for(".sim-status", pred=lambda t: any("Stopped" in x for x in t))
    check(any("Stopped at" in x for x in stopped), f"Stop stops the run (got {stopped})")
    note(f"simulate screenshots: {cfg['shot_epyc'].replace('.png', '-*.png')}")


# A link that asks for minutes of simulation: 32 tbench clients on node 0 for 60 s,
# two sides (about 4 minutes at the page's speed, the budget is 30 s).
COSTLY = dict(SIMULATE, sim={"workload": {"kind": "tbench", "clients": 32}, "cpus": "node0",
                             "duration_ms": 60000, "seed": 1})


def link_budget(page, cfg):
    """A link asking for minutes of simulation does not start on opening: the page says
    what it costs and runs it only when the Run button is pressed."""
    page.open(fragment(COSTLY))
    prompt = page.wait_for(".sim-held", timeout=30)
    check(prompt and re.search(r"This link asks for about \d+ minutes of simulation\. Run it\?",
                               prompt[0]), f"the link's cost is asked about (got {prompt})")
    time.sleep(2.0)
    status = page.texts(".sim-status")
    check(not page.count(".sim-status.running") and not page.count(".sim-chart"),
          f"nothing runs before the button is pressed (status {status})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-budget.png"))
    page.click("#sim-run-held")
    running = page.wait_for(".sim-status.running", timeout=30)
    check(running and not page.count(".sim-held"), f"Run starts it (got {running})")
    page.click("#sim-stop")
    stopped = page.wait_for(".sim-status", pred=lambda t: any("Stopped" in x for x in t))
    check(any("Stopped" in x for x in stopped), f"and Stop stops it (got {stopped})")


JOURNEYS = [
    opening_page,
    content_security_policy,
    epyc_cpu_200_dmesg,
    wakeup_shared_link,
    wakeup_bad_link,
    hostile_links,
    simulate_shared_link,  # the simulate_* journeys go on from one another's page
    simulate_inputs,
    simulate_sweep,
    simulate_seed01_example,
    simulate_long_run,
    simulate_seeds,
    link_budget,
]


# ---------------------------------------------------------------- the browser and main


def start_browser(workdir):
    """Headless Debian Chromium through Debian's chromedriver, with a fresh profile."""
    for path in (CHROMIUM, CHROMEDRIVER):
        # Checked here: a missing driver would send Selenium to look for one elsewhere.
        if not os.access(path, os.X_OK):
            raise FileNotFoundError(f"{path} is not installed (run scripts/setup --all)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tempfile.mkdtemp(prefix='profile-', dir=workdir)}")
    log = os.path.join(workdir, "chromedriver.log")
    service = Service(executable_path=CHROMEDRIVER, service_args=[f"--log-path={log}"])
    driver = webdriver.Chrome(service=service, options=options)
    # --window-size sizes the window, browser frame included; make the page's own
    # viewport 1400x1100, as `chromium --screenshot --window-size` shoots it.
    dw, dh = driver.execute_script(
        "return [outerWidth - innerWidth, outerHeight - innerHeight]")
    driver.set_window_size(VIEWPORT[0] + dw, VIEWPORT[1] + dh)
    return driver


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
