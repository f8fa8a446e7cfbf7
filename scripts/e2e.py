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
import zlib

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


def decoded_hash(page):
    """The page's link as JSON text: a v2 fragment is raw deflate, a v1 one plain."""
    h = page.hash.lstrip("#")
    version, _, body = h.partition(":")
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        return (zlib.decompress(raw, -15) if version == "v2" else raw).decode()
    except (ValueError, zlib.error) as e:
        return f"(not a link: {e})"


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


def native_run(cfg, sim, patches):
    """`schedlab run`'s JSON report for a page's simulation."""
    w = sim["workload"]
    return cli_json(cfg, "run", "--machine", "kunpeng920-6426", "--cpus", sim["cpus"],
                    "--workload", w["kind"], "--threads", str(w["clients"]),
                    "--duration-ms", str(sim["duration_ms"]), "--seed", str(sim["seed"]),
                    "--patches", patches)


def native(cfg, sim, patches):
    """The digest `schedlab run` gives for a page's simulation."""
    return native_run(cfg, sim, patches)["digest"]


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
    # The default wake-up (issue 17): a busy machine where the two sides differ. A is
    # v6.8 (the cluster patch merged) and keeps the wakee in the waker CPU 0's cluster
    # 0-3; B, v6.8 without it, takes the idle prev, CPU 12.
    page.click(".tabs button:nth-child(4)")
    a = page.wait_for('.decision[data-side="a"] .chosen-cpu')
    b = page.wait_for('.decision[data-side="b"] .chosen-cpu')
    busy = page.text(".wakeup .count") or ""
    n_busy = int(busy.split()[0]) if busy[:1].isdigit() else 0
    check(n_busy >= 77, f"the default wake-up is on a busy machine (got {busy!r})")
    check(a[:1] in (["CPU 1"], ["CPU 2"], ["CPU 3"]) and b[:1] == ["CPU 12"],
          f"the default wake-up's sides differ: A in the waker's cluster, B on prev 12 (got A {a}, B {b})")


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
    check(after.startswith("#v2:") and after != before, "the URL fragment follows the state")


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
    # The change is the native runs' (a model result, not a pinned number: it moves
    # whenever the model does; docs/fidelity.md compares it with seed 01's table).
    a_val = native_run(cfg, SIMULATE["sim"], "6.6")["value"]
    b_val = native_run(cfg, SIMULATE["sim"], "6.6+cluster")["value"]
    want_pct = (b_val - a_val) / a_val * 100
    change = page.wait_for(".change-pct")
    got_pct = float(re.match(r"^([+-]?\d+\.\d+)", change[0]).group(1)) if change else None
    check(got_pct is not None and abs(got_pct - want_pct) < 0.01 and want_pct > 0,
          f"6.6+cluster is better by the native runs' change, {want_pct:+.2f}% (page {change})")
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
    check(after.startswith("#v2:") and after != before, "the URL fragment follows the simulation")

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
    hover = page.js("return [...document.querySelectorAll('.sim-chart circle[data-side=\"b\"] title')]"
                    ".map(t => t.textContent)")
    check(len(hover) == 3 and all("6.6+cluster" in t and t.count(": ") == 2 for t in hover),
          f"each point says its values on hover (got {hover})")
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


def serving(page, cfg):
    """dist/ as scripts/httpd.py serves it: the wasm arrives compressed, the content-named
    module is cached for good (a reload transfers nothing), a loading notice shows until
    the module starts, and a revalidation of index.html answers 304."""
    import glob
    import urllib.request
    raw = glob.glob("dist/pkg-*/schedlab-web_bg.wasm")
    check(len(raw) == 1, f"dist/ holds one content-named page module (got {raw})")
    raw_size = os.path.getsize(raw[0])
    # Issue 18: the page's module, which every visitor loads, is at most 500 KB
    # brotli; the workers' module is fetched only when a simulation runs.
    sizes = {}
    for m in ("schedlab-web", "schedlab-worker"):
        f = glob.glob(f"dist/pkg-*/{m}_bg.wasm")
        sizes[m] = f and [os.path.getsize(f[0] + ext) for ext in ("", ".br", ".gz")]
        note(f"{m}: {sizes[m]} bytes (raw, brotli, gzip)")
    check(sizes["schedlab-worker"] and os.path.dirname(glob.glob("dist/pkg-*/schedlab-worker_bg.wasm")[0])
          == os.path.dirname(raw[0]), f"the workers' module is beside the page's ({sizes})")
    with open("web/page-wasm-budget") as f:
        budget = int(next(line for line in f if not line.startswith("#")))
    check(sizes["schedlab-web"] and sizes["schedlab-web"][1] <= budget,
          f"the page's module is within web/page-wasm-budget, {budget} bytes brotli (got {sizes['schedlab-web']})")
    worker_js = open("dist/static/worker.js").read()
    check(re.search(r'"\.\./pkg-[0-9a-f]+/schedlab-worker\.js"', worker_js) is not None,
          "static/worker.js loads the workers' module, not the page's")
    html = urllib.request.urlopen(page.url).read().decode()
    check('id="loading"' in html, "index.html carries a loading notice for before the wasm runs")
    og = re.search(r'<meta property="og:image" content="([^"]+)"', html)
    preview = og and urllib.request.urlopen(page.url + og.group(1))
    check(og and 'twitter:card' in html and preview.status == 200
          and preview.headers["Content-Type"] == "image/png",
          f"link previews: Open Graph and Twitter tags, and their image is served "
          f"({og and og.group(1)!r})")
    page.open(fragment(SIMULATE))
    page.wait_for(".level-name")
    check(page.count("#loading") == 0, "the loading notice is gone once the app has started")
    wasm = "return performance.getEntriesByType('resource').filter(e => e.name.endsWith('.wasm'))" \
           ".map(e => [e.encodedBodySize, e.decodedBodySize, e.transferSize])"
    first = page.js(wasm)
    check(first and all(d == raw_size and 0 < e < d // 2 for e, d, _ in first),
          f"the {raw_size}-byte wasm arrives compressed to under half (got {first})")
    names = page.js("return performance.getEntriesByType('resource').map(e => e.name)"
                    ".filter(n => n.includes('schedlab-worker'))")
    check(names == [], f"the page itself never fetches the workers' module (got {names})")
    page.driver.refresh()
    page.wait_for(".level-name")
    again = page.js(wasm)
    check(again and all(t == 0 for _, _, t in again),
          f"after a reload it comes from the cache with nothing transferred (got {again})")
    req = urllib.request.Request(page.url)
    etag = urllib.request.urlopen(req).headers["ETag"]
    req = urllib.request.Request(page.url, headers={"If-None-Match": etag})
    try:
        status = urllib.request.urlopen(req).status
    except urllib.error.HTTPError as e:
        status = e.code
    check(status == 304, f"index.html revalidates with its ETag: 304 (got {status})")


AXE = "tools/node_modules/axe-core/axe.min.js"


def axe_violations(page):
    """axe-core's violations on the page as it is: [(id, impact, nodes, first target)]."""
    if not page.js("return typeof axe !== 'undefined'"):
        with open(AXE, encoding="utf-8") as f:
            page.js(f.read())
    done = page.driver.execute_async_script(
        "const cb = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']})"
        ".then(r => cb(r.violations.map(v => [v.id, v.impact, v.nodes.length,"
        " v.nodes[0].target.join(' ')])), e => cb('axe failed: ' + e));")
    return done


def accessibility(page, cfg):
    """axe-core finds no violation on any view: each tab of the page as it opens, the
    Simulate tab after a run, and the custom-machine form."""
    page.driver.set_script_timeout(60)
    page.open()
    page.wait_for(".level-name")
    views = [("Domains", None), ("dmesg", 2), ("debugfs", 3), ("Wake-up", 4)]
    for name, nth in views:
        if nth:
            page.click(f".tabs button:nth-child({nth})")
            time.sleep(0.3)
        found = axe_violations(page)
        check(found == [], f"axe: no violations on the {name} tab (got {found})")
    page.open(fragment(SIMULATE))
    page.wait_for(".sim-status.done", timeout=180)
    found = axe_violations(page)
    check(found == [], f"axe: no violations on the Simulate tab with results (got {found})")
    page.select("#preset", "custom")
    page.wait_for("textarea")
    found = axe_violations(page)
    check(found == [], f"axe: no violations on the custom-machine form (got {found})")
    # The same views in the dark theme the system asks for (the switch on auto).
    with emulated_scheme(page, "dark"):
        page.open()
        page.wait_for(".level-name")
        check(page_background(page) == DARK_BG,
              f"with the system dark, the page is dark (got {page_background(page)})")
        for name, nth in [("Domains", 1)] + views[1:]:
            page.click(f".tabs button:nth-child({nth})")
            time.sleep(0.3)
            found = axe_violations(page)
            check(found == [], f"axe, dark: no violations on the {name} tab (got {found})")
        page.open(fragment(SIMULATE))
        page.wait_for(".sim-status.done", timeout=180)
        found = axe_violations(page)
        check(found == [], f"axe, dark: no violations on the Simulate tab with results (got {found})")
        page.select("#preset", "custom")
        page.wait_for("textarea")
        found = axe_violations(page)
        check(found == [], f"axe, dark: no violations on the custom-machine form (got {found})")



def keyboard(page, cfg):
    """The keyboard: a skip link first, the machine drawing is one tab stop whose arrow
    keys move between CPUs, and the tab bar is one tab stop whose arrows open tabs."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    page.open()
    page.wait_for(".level-name")
    active = "const a = document.activeElement; return [a.tagName, a.className," \
             " a.getAttribute('role'), a.textContent.trim().slice(0, 40)]"
    page.js("document.activeElement && document.activeElement.blur()")
    ActionChains(page.driver).send_keys(Keys.TAB).perform()
    first = page.js(active)
    check(first[1] == "skip-link", f"the first Tab stop is the skip link (got {first})")
    presses, seen = 1, []
    while presses < 60:
        ActionChains(page.driver).send_keys(Keys.TAB).perform()
        presses += 1
        now = page.js(active)
        seen.append(now[3][:12])
        if now[2] == "tab":
            break
    check(page.js(active)[2] == "tab" and presses <= 15,
          f"the tab bar is reached in at most 15 Tab presses (took {presses}: {seen})")
    ActionChains(page.driver).send_keys(Keys.ARROW_RIGHT).perform()
    time.sleep(0.3)
    now = page.js(active)
    shown = page.js("return document.querySelector('[role=tab][aria-selected=true]').textContent")
    check(now[3] == "dmesg" and shown == "dmesg",
          f"ArrowRight moves to the next tab and opens it (focus {now}, shown {shown!r})")
    page.click('button.cpu[data-cpu="0"]')
    ActionChains(page.driver).send_keys(Keys.ARROW_RIGHT).perform()
    now = page.js("return document.activeElement.dataset.cpu")
    check(now == "1", f"in the drawing, ArrowRight moves the focus from CPU 0 to CPU 1 (got {now})")
    stops = page.js("return document.querySelectorAll('button.cpu[tabindex=\"0\"]').length")
    check(stops == 1, f"the drawing is one tab stop (got {stops} CPUs with tabindex 0)")
    page.open()
    page.wait_for(".level-name")
    page.js("document.activeElement && document.activeElement.blur()")
    ActionChains(page.driver).send_keys(Keys.TAB).send_keys(Keys.ENTER).perform()
    now = page.js("return document.activeElement.getAttribute('role')")
    check(now == "tabpanel", f"the skip link moves the focus to the results (got {now})")


def history(page, cfg):
    """Back and Forward undo and redo: each change pushes a history entry (changes
    within a second make one), and Back restores the previous scenario."""
    page.open()
    page.wait_for(".level-name")
    start = page.hash
    page.click('button.cpu[data-cpu="5"]')
    page.until(lambda: page.attrs("button.selected", "data-cpu") == ["5"])
    after_cpu = page.hash
    time.sleep(1.2)  # past the coalescing window: the next change is its own entry
    page.select("#release", "6.1")
    page.until(lambda: page.hash != after_cpu)
    after_release = page.hash
    check(len({start, after_cpu, after_release}) == 3,
          f"each change writes its own link ({start!r}, {after_cpu!r}, {after_release!r})")
    page.driver.back()
    page.until(lambda: page.js("return document.querySelector('#release').value") != "6.1")
    release = page.js("return document.querySelector('#release').value")
    check(page.hash == after_cpu and release != "6.1",
          f"Back undoes the kernel change (release {release!r}, link {page.hash!r})")
    page.driver.back()
    page.until(lambda: page.attrs("button.selected", "data-cpu") == ["0"])
    check(page.attrs("button.selected", "data-cpu") == ["0"],
          "a second Back undoes the CPU change")
    page.driver.forward()
    page.until(lambda: page.attrs("button.selected", "data-cpu") == ["5"])
    check(page.attrs("button.selected", "data-cpu") == ["5"], "Forward redoes it")
    page.click('button.cpu[data-cpu="6"]')
    page.click('button.cpu[data-cpu="7"]')
    page.until(lambda: page.attrs("button.selected", "data-cpu") == ["7"])
    page.driver.back()
    page.until(lambda: page.attrs("button.selected", "data-cpu") != ["7"])
    got = page.attrs("button.selected", "data-cpu")
    check(got == ["5"], f"two quick clicks are one entry: Back returns to CPU 5 (got {got})")


def share(page, cfg):
    """The Share menu on a page without a clipboard API (as over plain HTTP): each copy
    says what happened and throws nothing, the link is the address bar's, and it opens
    the same scenario in a fresh browser profile."""
    page.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.__errors = [];
        addEventListener('error', e => window.__errors.push(String(e.message)));
        addEventListener('unhandledrejection', e => window.__errors.push(String(e.reason)));"""})
    page.open(fragment(TEACHING))
    page.wait_for(".decision")
    page.js("Object.defineProperty(Navigator.prototype, 'clipboard',"
            " {get: () => undefined, configurable: true})")
    page.click(".share > summary")
    link = page.js("return document.querySelector('#share-link').value")
    check(link == page.url + page.hash, f"the link is the address bar's ({link!r})")
    got = {}
    for button in ("Copy link", "Copy snippet", "Copy Markdown"):
        page.js("[...document.querySelectorAll('.share-body button')]"
                ".find(b => b.textContent === arguments[0]).click()", button)
        what = button.split()[1]
        got[button] = page.until(lambda: what in (page.text(".share-feedback") or "")
                                 and page.text(".share-feedback"), timeout=5)
    check(all(("Copied the" in t or "press Ctrl+C" in t) for t in got.values()),
          f"each copy says what happened without a clipboard API (got {got})")
    errors = page.js("return window.__errors")
    check(errors == [], f"and nothing throws (got {errors})")
    snippet = page.js("return document.querySelector('#share-embed').value")
    md = page.js("return document.querySelector('#share-md').value")
    check(snippet.startswith("<iframe src=\"") and "?embed#v2:" in snippet and 'width="800"' in snippet,
          f"the snippet embeds the embed view at 800x450 ({snippet[:90]!r}...)")
    check(md.endswith("(" + link + ")"), f"the Markdown links the same address ({md[:60]!r}...)")
    workdir = tempfile.mkdtemp(prefix="schedlab-share-")
    fresh = start_browser(workdir)
    try:
        other = Page(fresh, page.url)
        fresh.get(link)
        other.wait_for(".decision")
        chosen = other.texts(".decision .chosen-cpu")
        mine = page.texts(".decision .chosen-cpu")
        check(other.hash == page.hash and chosen == mine and chosen,
              f"the link opens the same decisions in a fresh profile (here {mine}, there {chosen})")
    finally:
        fresh.quit()
        shutil.rmtree(workdir, ignore_errors=True)
    page.click(".share > summary")  # closes the menu
    page.click(".tabs button:nth-child(2)")  # dmesg: the kernel's text has its own copy
    page.wait_for("#kernel-text")
    page.click(".copy-text")
    said = page.until(lambda: page.text(".dmesg-note .share-feedback"), timeout=5)
    check(said and ("Copied" in said or "press Ctrl+C" in said),
          f"the dmesg text's Copy says what happened (got {said!r})")
    errors = page.js("return window.__errors")
    check(errors == [], f"and nothing throws there either (got {errors})")


def page_settings_link(page, cfg):
    """Everything set on the page travels in its link: the click mode, the focused
    side, the Randomise inputs and the shaded domain level come back in a fresh page."""
    page.open(fragment(TEACHING))
    page.wait_for(".decision")
    page.js("[...document.querySelectorAll('.wake-setup .seg')]"
            ".find(b => b.textContent === 'prev').click()")
    page.set_input(".random input[type=number]", "30")
    page.js("document.querySelectorAll('.random input[type=number]')[1].value = '9';"
            "document.querySelectorAll('.random input[type=number]')[1]"
            ".dispatchEvent(new Event('change', {bubbles: true}))")
    page.click(".random button")
    busy = page.until(lambda: (page.text(".wake-setup .count") or "").startswith("38 of")
                      and page.text(".wake-setup .count"), timeout=10)
    page.click(".side-b .focus")
    page.until(lambda: page.count(".side-b .focus.active") == 1, timeout=10)
    link = page.hash
    page.open(link.lstrip("#"))
    page.wait_for(".decision")
    pressed = page.js("return [...document.querySelectorAll('.wake-setup .seg')]"
                      ".filter(b => b.getAttribute('aria-pressed') === 'true')"
                      ".map(b => b.textContent)")
    inputs = page.js("return [...document.querySelectorAll('.random input[type=number]')]"
                     ".map(i => i.value)")
    check(pressed == ["prev"], f"the click mode comes back from the link (pressed {pressed})")
    check(inputs == ["30", "9"], f"the Randomise inputs come back (got {inputs})")
    check(busy and page.text(".wake-setup .count") == busy,
          f"and so does the drawn busy set (before {busy!r}, after {page.text('.wake-setup .count')!r})")
    check(page.count(".side-b .focus.active") == 1,
          "the drawing numbers B's probes again (the focused side travels)")
    page.open(fragment({"machine": "kunpeng920-6426", "patches": "6.6", "cpu": 5}))
    page.wait_for(".level-name")
    page.click(".levels li:nth-child(2) .level-head")
    page.until(lambda: page.count("button.cpu.in-span") > 0)
    shaded = page.attrs("button.cpu.in-span", "data-cpu")
    page.open(page.hash.lstrip("#"))
    page.wait_for(".level-name")
    again = page.until(lambda: page.attrs("button.cpu.in-span", "data-cpu"), timeout=10)
    check(shaded and again == shaded,
          f"the shaded domain level comes back ({len(shaded)} CPUs, then {len(again or [])})")


def code_view(page, cfg):
    """Beside each decision, the wake-up path as kernel-style code: the lines the
    decision ran are highlighted and say what happened, the cluster patch's lines are
    marked on B (6.6+cluster) and absent on A (6.6), and B's path shows the cluster
    scan that picked CPU 2."""
    page.open(fragment(TEACHING))
    page.wait_for(".decision")
    page.js("document.querySelectorAll('.code-view').forEach(d => d.open = true)")
    sides = page.js("""return [...document.querySelectorAll('.decision-col')].map(c => ({
        hit: c.querySelectorAll('.code-line.hit').length,
        patched: c.querySelectorAll('.code-lines .code-line.patched[title^="cluster:"]').length,
        notes: [...c.querySelectorAll('.code-line.hit')].map(l => l.textContent).join('\\n')}))""")
    check(len(sides) == 2 and all(s["hit"] >= 5 for s in sides),
          f"each side's code view highlights the lines it ran ({[s['hit'] for s in sides]})")
    check(sides[0]["patched"] == 0 and sides[1]["patched"] >= 10,
          f"the cluster patch's lines are marked on B only ({[s['patched'] for s in sides]})")
    b = sides[1]["notes"]
    check("cpus_share_resources(prev, target))// CPU 12: false" in b
          and "if (sg->flags & SD_CLUSTER) {// entered" in b
          and "#2 CPU 2 idle ✓" in b and "return i;// → CPU 2" in b,
          "B's path goes through the cluster test on prev and the cluster scan to CPU 2")
    a = sides[0]["notes"]
    check("return prev;// → CPU 12" in a and "SD_CLUSTER" not in a,
          "A's path returns prev, CPU 12, from the fast path")
    page.driver.set_script_timeout(60)
    found = axe_violations(page)
    check(found == [], f"axe: no violations with both code views open (got {found})")
    page.js("document.querySelectorAll('.code-view')[1]"
            ".querySelector('.code-line.hit.patched').scrollIntoView({block: 'center'})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-code.png"))


def presentation(page, cfg):
    """Presentation mode: ?present opens it (larger type, the header's extras hidden);
    the arrow keys step through the chosen CPU's levels, then the wake-up, then the
    simulation, and back; Esc leaves it."""
    from selenium.webdriver.common.keys import Keys
    page.driver.get("about:blank")
    page.driver.get(page.url + "?present#" + fragment(
        {"machine": "kunpeng920-6426", "patches": "6.6", "cpu": 5}))
    page.wait_for(".level-name")
    on = page.until(lambda: page.js("return document.documentElement.classList.contains('present')"))
    size = page.js("return parseFloat(getComputedStyle(document.body).fontSize)")
    check(on and size >= 18, f"?present opens presentation mode with larger type ({size}px)")
    hidden = page.js("return getComputedStyle(document.querySelector('.tagline')).display")
    check(hidden == "none", f"the tagline is out of the way ({hidden})")
    levels = page.count(".levels > li")
    body = page.driver.find_element(By.TAG_NAME, "body")
    spans = []
    for _ in range(levels):
        body.send_keys(Keys.ARROW_RIGHT)
        page.until(lambda: len(page.attrs("button.cpu.in-span", "data-cpu")) > (len(spans[-1]) if spans else 0))
        spans.append(page.attrs("button.cpu.in-span", "data-cpu"))
    sizes = [len(x) for x in spans]
    check(levels >= 3 and sizes == sorted(sizes) and len(set(sizes)) == levels,
          f"→ shades each level in turn, innermost first ({sizes} CPUs over {levels} levels)")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-present.png"))
    body.send_keys(Keys.ARROW_RIGHT)
    tab = page.until(lambda: page.text(".tabs button.active") == "Wake-up"
                     and page.text(".tabs button.active"))
    check(tab == "Wake-up", f"the next step is the wake-up (tab {page.text('.tabs button.active')!r})")
    body.send_keys(Keys.ARROW_RIGHT)
    tab = page.until(lambda: page.text(".tabs button.active") == "Simulate"
                     and page.text(".tabs button.active"))
    check(tab == "Simulate", f"then the simulation (tab {page.text('.tabs button.active')!r})")
    body.send_keys(Keys.ARROW_LEFT)
    body.send_keys(Keys.ARROW_LEFT)
    page.until(lambda: page.text(".tabs button.active") == "Domains")
    back = page.attrs("button.cpu.in-span", "data-cpu")
    check(page.text(".tabs button.active") == "Domains" and back == spans[-1],
          f"← steps back to the outermost level ({len(back)} CPUs shaded)")
    body.send_keys(Keys.ESCAPE)
    off = page.until(lambda: not page.js(
        "return document.documentElement.classList.contains('present')"), timeout=5)
    check(off, "Esc leaves presentation mode")
    page.click("#present-toggle")
    on = page.until(lambda: page.js("return document.documentElement.classList.contains('present')"))
    check(on and page.count(".present-bar button") >= 3,
          "the header's Present button turns it on, with step buttons")
    page.click("#present-toggle")


def embed(page, cfg):
    """The embed view in an iframe of each size the Share menu offers: the chosen view
    under a one-line header with an "open in schedlab" link, no pickers or tab bar, and
    the frame's page itself never scrolls."""
    # The host page comes from a second server on another port: another origin, as a
    # slide or a doc would be, but local (Chromium refuses a public page, data: or
    # about:blank, a frame on 127.0.0.1).
    hostdir = tempfile.mkdtemp(prefix="schedlab-host-")
    server = subprocess.Popen([sys.executable, "scripts/httpd.py", hostdir, "0",
                               os.path.join(hostdir, "port")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port = page.until(lambda: os.path.exists(os.path.join(hostdir, "port"))
                          and open(os.path.join(hostdir, "port")).read().strip(), timeout=10)
        embed_in(page, cfg, hostdir, f"http://127.0.0.1:{port}/")
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(hostdir, ignore_errors=True)


def embed_in(page, cfg, hostdir, host_url):
    for scenario, view, sizes in ((TEACHING, "wake-up", ((800, 450), (1280, 720))),
                                  ({"machine": "kunpeng920-6426", "patches": "6.8"}, "domains",
                                   ((800, 450),))):
        for w, h in sizes:
            src = page.url + "?embed#" + fragment(scenario)
            host = (f'<!doctype html><title>host</title><body style="margin:8px"><iframe src="{src}"'
                    f' width="{w}" height="{h}" style="border:1px solid #999"></iframe></body>')
            with open(os.path.join(hostdir, f"{view}-{w}.html"), "w") as f:
                f.write(host)
            page.driver.get(f"{host_url}{view}-{w}.html")
            page.driver.switch_to.frame(page.driver.find_element(By.TAG_NAME, "iframe"))
            try:
                page.wait_for(".decision" if view == "wake-up" else ".level-name")
                found = page.js(
                    "const d = document.documentElement;"
                    "return {open: !!document.querySelector('.embed-header a[target=_blank]'),"
                    " tabs: document.querySelectorAll('[role=tab]').length,"
                    " pickers: document.querySelectorAll('#preset, #release').length,"
                    " sw: d.scrollWidth, sh: d.scrollHeight, iw: innerWidth, ih: innerHeight}")
            finally:
                page.driver.switch_to.default_content()
            check(found["open"] and found["tabs"] == 0 and found["pickers"] == 0,
                  f"{view} at {w}x{h}: the embed header and view only ({found})")
            check(found["sw"] <= found["iw"] and found["sh"] <= found["ih"],
                  f"{view} at {w}x{h}: the frame's page does not scroll ({found})")
            if view == "wake-up" and w == 800:
                page.screenshot(cfg["shot_epyc"].replace(".png", "-embed.png"))


# ---------------------------------------------------------------- themes and small screens

LIGHT_BG = "rgb(246, 247, 249)"  # --bg in static/style.css, light and dark
DARK_BG = "rgb(14, 17, 22)"


class emulated_scheme:
    """`with emulated_scheme(page, "dark"):` the system's prefers-color-scheme (CDP)."""

    def __init__(self, page, scheme):
        self.page, self.scheme = page, scheme

    def __enter__(self):
        self.page.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": self.scheme}]})

    def __exit__(self, *exc):
        self.page.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def page_background(page):
    return page.js("return getComputedStyle(document.body).backgroundColor")


def theme_properties(page):
    """Every custom property static/style.css sets on :root, as the page resolves it."""
    return page.js("""
        const names = new Set();
        for (const sheet of document.styleSheets) for (const r of sheet.cssRules)
          if (r.selectorText === ':root') for (const n of r.style) if (n.startsWith('--')) names.add(n);
        const cs = getComputedStyle(document.documentElement);
        return Object.fromEntries([...names].sort().map(n => [n, cs.getPropertyValue(n).trim()]));""")


def set_viewport(page, width, height):
    """Sizes the window so that the page's own viewport is width x height."""
    dw, dh = page.js("return [outerWidth - innerWidth, outerHeight - innerHeight]")
    page.driver.set_window_size(width + dw, height + dh)
    page.until(lambda: page.js("return innerWidth") == width, timeout=5)


def dark_mode(page, cfg):
    """The header's theme switch: auto follows the system, light and dark override it,
    the choice survives a reload (applied before the app starts), both dark rule sets
    agree, and axe finds no violation in dark on any tab."""
    page.driver.set_script_timeout(60)
    page.open()
    page.js("localStorage.removeItem('schedlab-theme')")
    page.open()
    page.wait_for(".level-name")
    theme = page.js("return document.documentElement.dataset.theme")
    pressed = page.attrs('.theme-switch [aria-checked="true"]', "data-theme-choice")
    check(theme == "auto" and pressed == ["auto"],
          f"a first visit follows the system: data-theme auto, Auto checked (got {theme}, {pressed})")
    check(page_background(page) == LIGHT_BG, f"the system is light, so the page is (got {page_background(page)})")
    light = theme_properties(page)
    page.click('.theme-switch [data-theme-choice="dark"]')
    theme = page.js("return document.documentElement.dataset.theme")
    check(theme == "dark" and page_background(page) == DARK_BG,
          f"Dark turns the page dark (got data-theme {theme}, background {page_background(page)})")
    dark = theme_properties(page)
    same = sorted(k for k in dark if dark[k] == light.get(k) and k not in ("--mono", "--sans", "--span-line"))
    check(len(dark) > 40 and not same, f"the dark set changes every colour (unchanged: {same})")
    page.driver.refresh()
    early = page.js("return document.documentElement.dataset.theme")
    page.wait_for(".level-name")
    pressed = page.attrs('.theme-switch [aria-checked="true"]', "data-theme-choice")
    check(early == "dark" and pressed == ["dark"] and page_background(page) == DARK_BG,
          f"the choice survives a reload (got {early}, {pressed}, {page_background(page)})")
    with emulated_scheme(page, "dark"):
        page.click('.theme-switch [data-theme-choice="auto"]')
        auto_dark = theme_properties(page)
        diff = sorted(k for k in dark if dark[k] != auto_dark.get(k))
        check(not diff, f"auto in a dark system gives exactly the dark set (differ: {diff})")
        page.click('.theme-switch [data-theme-choice="light"]')
        check(page_background(page) == LIGHT_BG and theme_properties(page) == light,
              f"Light overrides a dark system (got {page_background(page)})")
    page.click('.theme-switch [data-theme-choice="dark"]')
    for name, nth in [("Domains", 1), ("dmesg", 2), ("debugfs", 3), ("Wake-up", 4)]:
        page.click(f".tabs button:nth-child({nth})")
        time.sleep(0.3)
        found = axe_violations(page)
        check(found == [], f"axe, dark: no violations on the {name} tab (got {found})")
    page.open(fragment(TEACHING))
    page.wait_for('.decision[data-side="b"] .chosen-cpu')
    page.click('.decision[data-side="b"] .focus')
    time.sleep(0.3)
    found = axe_violations(page)
    check(found == [], f"axe, dark: no violations on the wake-up teaching case, probes shown (got {found})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-dark-wakeup.png"))
    page.open(fragment(SIMULATE))
    page.wait_for(".sim-status.done", timeout=180)
    found = axe_violations(page)
    check(found == [], f"axe, dark: no violations on the Simulate tab with results (got {found})")
    styled = page.js("""
        const svg = document.querySelector('.sim-chart svg');
        const fill = e => e && getComputedStyle(e).fill;
        return [getComputedStyle(svg.parentElement).backgroundColor,
                fill(svg.querySelector('text')), fill(svg.querySelector('.legend-bg')),
                getComputedStyle(svg.querySelector('line.grid')).stroke]""")
    check(styled == ["rgb(22, 27, 34)", "rgb(183, 192, 202)", "rgb(22, 27, 34)", "rgb(44, 51, 61)"],
          f"the chart's background, text, legend and grid take the dark colours (got {styled})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-dark-simulate.png"))
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    page.js("document.querySelector('.theme-switch [aria-checked=true]').focus()")
    ActionChains(page.driver).send_keys(Keys.ARROW_LEFT).send_keys(Keys.ARROW_LEFT).perform()
    theme = page.js("return [document.documentElement.dataset.theme, document.activeElement.dataset.themeChoice]")
    check(theme == ["auto", "auto"], f"the switch is one tab stop whose arrow keys choose: dark, Left, Left is auto (got {theme})")
    page.js("localStorage.removeItem('schedlab-theme')")


MOBILE = (390, 844)

# Every button and select drawn, smaller than 40 px in width or height, as
# [[width, height, description]]; the skip link (off screen until focused) is not drawn.
SMALL_TARGETS = """
    return [...document.querySelectorAll('button, select, summary')].filter(e => {
      const r = e.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && r.bottom + scrollY > 0 && e.checkVisibility()
        && Math.min(r.width, r.height) < 40;
    }).map(e => { const r = e.getBoundingClientRect();
      return [Math.round(r.width), Math.round(r.height),
              e.tagName + '.' + e.className + ' ' + e.textContent.trim().slice(0, 20)]; });"""


def mobile_layout(page, cfg):
    """At 390x844 (a phone): the tabs are on the first screen (the machine drawing is
    folded, and opens), no tab scrolls sideways, and every button and select is at
    least 40 px a side; the wake-up columns and the chart fit."""
    try:
        set_viewport(page, *MOBILE)
        page.open()
        page.wait_for(".level-name")
        folded = page.js("return !document.querySelector('details.machine-fold').open")
        top = page.js("return document.querySelector('[role=tablist]').getBoundingClientRect().top")
        check(folded and top < MOBILE[1] - 40,
              f"the drawing starts folded and the tab bar is on the first screen (folded {folded}, top {top:.0f} px)")
        page.click("details.machine-fold > summary")
        cpus = page.until(lambda: page.js(
            "return [...document.querySelectorAll('button.cpu')].filter(b => b.checkVisibility()).length"), timeout=5)
        check(cpus == 128, f"its summary opens the drawing: 128 CPUs (got {cpus})")
        page.js("document.querySelector('button.cpu[data-cpu=\"5\"]').scrollIntoView({block: 'center'})")
        page.click('button.cpu[data-cpu="5"]')
        head = page.wait_for(".domains h2", pred=lambda t: "CPU 5" in t[0])
        check(head and "CPU 5" in head[0], f"a tap on CPU 5 shows its domains (got {head[:1]})")
        for name, nth in [("Domains", 1), ("dmesg", 2), ("debugfs", 3), ("Wake-up", 4), ("Simulate", 5)]:
            page.click(f".tabs button:nth-child({nth})")
            time.sleep(0.3)
            width = page.js("return document.documentElement.scrollWidth")
            check(width <= MOBILE[0], f"{name}: the page is no wider than the screen ({width} <= {MOBILE[0]} px)")
            small = page.js(SMALL_TARGETS)
            check(small == [], f"{name}: every button and select is at least 40 px a side (smaller: {small[:4]})")
        page.open(fragment(TEACHING))
        page.wait_for('.decision[data-side="b"] .chosen-cpu')
        fit = page.js("""
            const w = innerWidth, out = [];
            for (const e of document.querySelectorAll('.decision, .patch-picker'))
              if (e.getBoundingClientRect().right > w) out.push(e.className + ' right ' + e.getBoundingClientRect().right);
            for (const dl of document.querySelectorAll('.costs')) {
              const dts = dl.querySelectorAll('dt'), dds = dl.querySelectorAll('dd');
              dts.forEach((dt, i) => { const a = dt.getBoundingClientRect(), b = dds[i].getBoundingClientRect();
                if (a.right > b.left && a.bottom > b.top && b.bottom > a.top) out.push(dt.textContent + ' overlaps ' + dds[i].textContent); });
            }
            return [document.documentElement.scrollWidth, out];""")
        check(fit[0] <= MOBILE[0] and fit[1] == [],
              f"wake-up, A against B: both pickers and decisions fit, no figure overlaps its label (got {fit})")
        small = page.js(SMALL_TARGETS)
        check(small == [], f"wake-up, A against B: no button or select under 40 px (smaller: {small[:4]})")
        page.js("document.querySelector('.decisions').scrollIntoView()")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-mobile-wakeup.png"))
        page.open(fragment(SIMULATE))
        page.wait_for(".sim-status.done", timeout=180)
        fit = page.js("return [document.documentElement.scrollWidth,"
                      " document.querySelector('.sim-chart svg').getBoundingClientRect().right]")
        check(fit[0] <= MOBILE[0] and fit[1] <= MOBILE[0],
              f"Simulate with results: the page and the chart fit the screen (got {fit})")
        small = page.js(SMALL_TARGETS)
        check(small == [], f"Simulate with results: no button or select under 40 px (smaller: {small[:4]})")
        page.js("document.querySelector('.sim-chart').scrollIntoView()")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-mobile-simulate.png"))
        page.open()
        page.wait_for(".level-name")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-mobile.png"))
    finally:
        set_viewport(page, *VIEWPORT)
    page.open()
    page.wait_for(".level-name")
    opened = page.js("return document.querySelector('details.machine-fold').open")
    check(opened, f"back at {VIEWPORT[0]} px the drawing is open (got {opened})")


def simulate_kept(page, cfg):
    """Results survive tab switches: back on Simulate with the same inputs, the finished
    run is shown as it was (same status line, same digests), nothing runs again, and
    the pool's workers are not started again."""
    page.open(fragment(SIMULATE))
    page.wait_for(".sim-status.done", timeout=180)
    status = page.text(".sim-status")
    digests = page.texts(".digest")
    workers = "return performance.getEntriesByType('resource')" \
              ".filter(e => e.name.endsWith('worker.js')).length"
    started = page.js(workers)
    page.click(".tabs button:nth-child(1)")
    page.wait_for(".level-name")
    page.click(".tabs button:nth-child(5)")
    back = page.wait_for(".sim-status.done", timeout=5)
    check(back and page.text(".sim-status") == status and page.texts(".digest") == digests,
          f"the finished run is shown again, not rerun (before {status!r}, after {page.text('.sim-status')!r})")
    check(page.js(workers) == started and started > 0,
          f"the workers started once ({started} worker loads, then {page.js(workers)})")
    page.set_input("#sim-threads", "2")
    page.until(lambda: page.text(".sim-status") != status, timeout=10)
    check(page.text(".sim-status") != status, "new inputs start a new run")


def svg_points(page, css):
    """The (x, y) points of the first element matching css (a polyline or polygon)."""
    raw = page.js("const e = document.querySelector(arguments[0]);"
                  " return e ? e.getAttribute('points') : ''", css) or ""
    return [tuple(float(v) for v in xy.split(",")) for xy in raw.split()]


def chart_band(page, cfg):
    """A 2-seed simulation: each side's mean line sits inside its 95% band (a polygon
    under the line, with a legend entry), the axes have titles with units, every point
    says its values on hover, the numbers are a keyboard-reachable table, "no
    significant change" shows exactly when the change's interval includes 0, and axe
    stays at 0 (light and dark)."""
    page.driver.set_script_timeout(60)
    sim = dict(SIMULATE["sim"], seeds=2)
    page.open(fragment(dict(SIMULATE, sim=sim)))
    page.wait_for(".sim-status.done", timeout=180)
    bands = page.js("return document.querySelector('.sim-chart').dataset.bandCount")
    check(bands == "2", f"two seeds: a band per side (data-band-count {bands!r})")
    for side in ("a", "b"):
        line = svg_points(page, f".sim-chart polyline.line-{side}")
        band = svg_points(page, f".sim-chart polygon.band-{side}")
        n = len(line)
        around = n > 3 and len(band) == 2 * n and all(
            band[k][1] <= line[k][1] <= band[2 * n - 1 - k][1]
            and band[k][0] == line[k][0] for k in range(n))
        wide = sum(band[2 * n - 1 - k][1] - band[k][1] for k in range(n)) if around else 0
        check(around and wide > 0,
              f"side {side}: the band's outline runs along the mean line, above and below it "
              f"({n} points, {len(band)} band points, {wide:.0f} px of width in all)")
        hover = page.js("return [...document.querySelectorAll(arguments[0])].map(t => t.textContent)",
                        f".sim-chart circle.hit-{side} title")
        check(len(hover) == n and all(" ms: " in t and "MB/s" in t for t in hover)
              and sum("95% interval" in t for t in hover) >= n - 1,
              f"side {side}: every point of the line says its values and interval on hover "
              f"({len(hover)} of {n}: {hover[:1]})")
    texts = page.texts(".sim-chart svg text")
    for title in ("simulated time in the measured window (ms)", "throughput (MB/s)"):
        check(title in texts, f"the axis title {title!r} is drawn (got {[t for t in texts if '(' in t]})")
    legend = [t for t in texts if "95% interval" in t]
    check(len(legend) == 2 and all("mean of 2 seeds" in t for t in legend),
          f"the legend names both bands (got {legend})")
    gap = page.js("const c = document.querySelector('.sim-chart').getBoundingClientRect();"
                  " const d = document.querySelector('.chart-data').getBoundingClientRect();"
                  " return d.top - c.bottom")
    check(gap is not None and 0 <= gap < 80,
          f"the table's summary sits right under the chart, above the inputs ({gap} px below it)")
    page.click(".chart-data > summary")
    rows = page.count(".chart-data tbody tr")
    focusable = page.js("return document.querySelector('.chart-data .table-scroll').tabIndex")
    n = len(svg_points(page, ".sim-chart polyline.line-a"))
    heads = page.texts(".chart-data thead th")
    check(rows == n and focusable == 0 and len(heads) == 5,
          f"the chart's numbers are a table the keyboard reaches ({rows} rows for {n} points, "
          f"tabindex {focusable}, columns {heads})")
    change = page.text(".change-pct") or ""
    m = re.search(r"\[([+-]\d+\.\d), ([+-]\d+\.\d)\]", change)
    says = page.count(".change .not-significant") == 1
    if m:
        lo, hi = float(m.group(1)), float(m.group(2))
        check(says == (lo <= 0 <= hi),
              f"'no significant change' shows exactly when [{lo}, {hi}] includes 0 (shown: {says})")
    else:
        check(False, f"the change reads with its interval (got {change!r})")
    found = axe_violations(page)
    check(found == [], f"axe: no violations with the band and the open table (got {found})")
    page.js("document.querySelector('.sim-chart').scrollIntoView()")
    page.all(".sim-chart")[0].screenshot(cfg["shot_epyc"].replace(".png", "-band.png"))
    with emulated_scheme(page, "dark"):
        time.sleep(0.3)
        fill = page.js("return getComputedStyle(document.querySelector('.sim-chart polygon.band-b')).fill")
        found = axe_violations(page)
        check(found == [], f"axe (dark): no violations (got {found})")
        page.all(".sim-chart")[0].screenshot(cfg["shot_epyc"].replace(".png", "-band-dark.png"))
    check(fill and fill != "none", f"the band is filled in the dark theme too (got {fill!r})")


def type_into(page, css, value):
    """Types a value into a text field as a keystroke would: value, then `input`."""
    page.js("const e = document.querySelector(arguments[0]); e.value = arguments[1];"
            "e.dispatchEvent(new Event('input', {bubbles: true}));", css, value)


def level_names(page):
    return page.texts(".level-name")


DESIGNED = [("sockets", "2"), ("nodes", "2"), ("llcs", "2"), ("clusters", "2"),
            ("cores", "4"), ("threads", "2")]


def designer(page, cfg):
    """The topology designer: built by hand from counts, the drawing and the domains
    follow as one types; a bad value shows its error beside the field while the last
    machine stays; a distance cell changes the NUMA levels; Back undoes; the link opens
    the same machine in a fresh page; irregular machines and pastes that lack
    information say so; no axe violation, light, dark and at 390 px."""
    page.driver.set_script_timeout(60)
    page.open()
    page.wait_for(".level-name")
    page.click("#open-designer")
    page.wait_for("#designer-title")
    counts = [page.js("return document.querySelector(arguments[0]).value", f"#designer-{k}")
              for k, _ in DESIGNED]
    check(counts == ["2", "2", "1", "8", "4", "1"],
          f"the designer opens on the preset's counts, kunpeng920-6426 (got {counts})")
    cells = page.count(".designer-slit input")
    check(cells == 12, f"the NUMA distances are shown: a 4 x 4 grid, 12 editable cells (got {cells})")
    for k, v in DESIGNED:
        type_into(page, f"#designer-{k}", v)
    n = page.wait_count("button.cpu", 128)
    check(n == 128, f"2 x 2 x 2 x 2 x 4 x 2 draws 128 CPUs (got {n})")
    levels = page.wait_for(".level-name", pred=lambda t: t and t[0] == "SMT")
    check(levels[:3] == ["SMT", "CLS", "MC"],
          f"the domain tree follows: SMT, CLS, MC first (got {levels})")
    built = page.wait_for("#designer-levels-built", pred=lambda t: "SMT (2)" in t[0])
    check(built and "SMT (2) › CLS (8) › MC (16)" in built[0],
          f"the designer lists the levels built, with their sizes (got {built})")
    total = page.text("#designer-total")
    check(total and "128 CPUs" in total, f"the designer says the machine in use: {total!r}")
    # A bad value: its error beside the field, tied to it; the machine stays.
    before = page.hash
    type_into(page, "#designer-cores", "0")
    err = page.wait_for("#designer-cores-error")
    tied = page.js("const i = document.querySelector('#designer-cores');"
                   "return [i.getAttribute('aria-describedby'), i.getAttribute('aria-invalid'),"
                   " i.parentElement.contains(document.querySelector('#designer-cores-error'))]")
    check(err and "at least 1" in err[0] and tied == ["designer-cores-error", "true", True],
          f"cores 0: the error shows beside the field, tied by aria-describedby (got {err}, {tied})")
    time.sleep(0.3)
    page.screenshot(cfg["shot_epyc"].replace(".png", "-designer-error.png"))
    check(page.count("button.cpu") == 128 and page.hash == before,
          "the previous machine stays in use (128 CPUs, same link)")
    type_into(page, "#designer-cores", "64")
    err = page.wait_for("#designer-cores-error")
    check(err and "2048 CPUs" in err[0], f"a machine past the designer's limit is refused there (got {err})")
    type_into(page, "#designer-cores", "4")
    page.until(lambda: page.count("#designer-cores-error") == 0, timeout=5)
    check(page.count(".field-error") == 0, "fixing it clears the error")
    found = axe_violations(page)
    check(found == [], f"axe: no violations with the designer open (got {found})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-designer.png"))
    # A distance cell: 33 is kunpeng's farthest distance, used once; making it 32
    # removes a distance, so a NUMA level goes.
    time.sleep(1.2)  # past the history's coalescing window: the edit is its own entry
    designed_hash = page.hash
    numa_before = level_names(page).count("NUMA")
    type_into(page, "#designer-d-0-3", "32")
    page.until(lambda: level_names(page).count("NUMA") != numa_before, timeout=10)
    numa_after = level_names(page).count("NUMA")
    mirror = page.js("return document.querySelector('#designer-d-3-0').value")
    check(numa_after == numa_before - 1 and mirror == "32",
          f"distance(0, 3) = 32: one NUMA level fewer, mirrored to (3, 0) (NUMA levels {numa_before} -> {numa_after}, mirror {mirror})")
    type_into(page, "#designer-d-0-1", "10")
    err = page.wait_for("#designer-slit-errors .field-error")
    check(err and "node_distance(0, 1) is 10" in err[0]
          and page.js("return document.querySelector('#designer-d-0-1').getAttribute('aria-describedby')") == "designer-slit-errors",
          f"distance 10 between nodes: build()'s error under the grid, tied to the cell (got {err})")
    type_into(page, "#designer-d-0-1", "16")
    page.until(lambda: page.count(".field-error") == 0, timeout=5)
    link = page.hash
    check(len(link) < 2048, f"the designed machine's link is short: {len(link)} characters")
    note(f"designed 128-CPU link: {len(link)} characters")
    names = level_names(page)
    # Back undoes the distance edit (and the designer shows the machine it returns to).
    page.driver.back()
    page.until(lambda: level_names(page).count("NUMA") == numa_before, timeout=10)
    back = page.js("return document.querySelector('#designer-d-0-3').value")
    check(page.hash == designed_hash and back == "33",
          f"Back undoes the distance edit; the grid follows (cell {back!r})")
    page.driver.forward()
    page.until(lambda: level_names(page) == names, timeout=10)
    check(page.hash == link, "Forward redoes it")
    # The link in a fresh page: the same machine.
    page.open(link.lstrip("#"))
    page.wait_for(".level-name")
    got = (page.count("button.cpu"), level_names(page))
    check(got == (128, names), f"the link opens the same machine in a fresh page (got {got[0]} CPUs, {got[1]})")
    # The custom workload's distributions, with core's parser and messages.
    page.click("#open-designer")
    page.wait_for("#designer-client-work")
    type_into(page, "#designer-client-work", "uniform:5-10us")
    time.sleep(0.3)
    type_into(page, "#designer-sleep", "sometimes")
    err = page.wait_for("#designer-sleep-error")
    check(err and "is not a duration" in err[0], f"a bad distribution shows core's message (got {err})")
    type_into(page, "#designer-sleep", "exp:20us")
    page.until(lambda: page.count(".field-error") == 0, timeout=5)
    time.sleep(1.2)
    page.driver.refresh()
    page.wait_for(".level-name")
    page.click("#open-designer")
    kept = page.js("return [...document.querySelectorAll('.designer-work input')].map(e => e.value)")
    check(kept == ["uniform:5us-10us", "fixed:5us", "exp:20us"],
          f"the distributions travel in the link and come back with their units (got {kept})")
    page.click(".tabs button:nth-child(5)")
    page.wait_for("#sim-workload")
    wl = page.js("return document.querySelector('#sim-workload').value")
    check(wl == "custom", f"the Simulate tab runs the custom workload as designed (got {wl})")
    page.click(".tabs button:nth-child(1)")
    # Dark and a phone's width.
    with emulated_scheme(page, "dark"):
        time.sleep(0.3)
        check(page_background(page) == DARK_BG, "dark: the page is dark")
        found = axe_violations(page)
        check(found == [], f"axe, dark: no violations with the designer open (got {found})")
        page.js("document.querySelector('.designer').scrollIntoView()")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-designer-dark.png"))
    try:
        set_viewport(page, *MOBILE)
        time.sleep(0.5)
        width = page.js("return document.documentElement.scrollWidth")
        check(width <= MOBILE[0], f"390 px: the designer fits ({width} px)")
        small = page.js(SMALL_TARGETS.replace("'button, select, summary'", "'.designer button, .designer select, .designer input[type=text]'"))
        check(small == [], f"390 px: the designer's fields are at least 40 px (too small: {small[:4]})")
        page.js("document.querySelector('.designer').scrollIntoView()")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-designer-mobile.png"))
        page.js("document.querySelector('.designer-numa').scrollIntoView()")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-designer-mobile-numa.png"))
    finally:
        set_viewport(page, *VIEWPORT)
    # An irregular machine says why and offers its JSON.
    page.select("#preset", "alderlake-8p8e")
    page.wait_for("#designer-irregular")
    why = page.text("#designer-irregular")
    check(why and "hybrid" in why, f"alderlake-8p8e cannot be counts: the designer says why ({why!r})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-designer-irregular.png"))
    page.click("#designer-json")
    page.wait_for("#custom-text")
    text = page.js("return document.querySelector('#custom-text').value")
    check('"asym_prio"' in text, "Edit its per-CPU JSON opens the custom form holding the machine's JSON")
    # Its kernel config can still be chosen (issue 16: Kconfig in the page).
    page.select("#preset", "alderlake-8p8e")
    page.click("#open-designer")
    page.wait_for("#designer-irregular")
    smt_before = "SMT" in level_names(page)
    page.click("#designer-config_sched_smt")
    page.until(lambda: "SMT" not in level_names(page), timeout=10)
    check(smt_before and "SMT" not in level_names(page) and page.count("#designer-irregular") == 1,
          f"CONFIG_SCHED_SMT=n on the hybrid part drops its SMT level (got {level_names(page)})")
    # A paste without clusters: the note offers the designer.
    page.click(".designer .close")
    page.until(lambda: page.count(".designer") == 0, timeout=5)
    page.js("const s = document.querySelector('#preset'); s.value = 'custom';"
            "s.dispatchEvent(new Event('change', {bubbles: true}));")
    page.wait_for("#custom-text")
    with open("core/tests/fixtures/kunpeng920_96c_lscpu.txt", encoding="utf-8") as f:
        paste = f.read()
    page.js("const t = document.querySelector('#custom-text'); t.value = arguments[0];"
            "t.dispatchEvent(new Event('input', {bubbles: true}));", paste)
    page.click("#custom-load")
    noted = page.wait_for("#missing-note")
    check(noted and "cluster ids" in noted[0] and "NUMA distances" in noted[0],
          f"plain lscpu of a Kunpeng: the note says clusters and distances are missing (got {noted})")
    page.js("window.scrollTo(0, 0)")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-designer-missing.png"))
    page.click("#missing-designer")
    page.wait_for("#designer-cores")
    # 24 cores per LLC as 6 clusters of 4: the same 96 CPUs, now with a CLS level.
    type_into(page, "#designer-clusters", "6")
    type_into(page, "#designer-cores", "4")
    levels = page.wait_for(".level-name", pred=lambda t: "CLS" in t)
    check("CLS" in levels and page.count("button.cpu") == 96 and page.count("#missing-note") == 0,
          f"the designer adds the clusters: 96 CPUs, CLS appears (got {levels})")
    # Timing at the designer's limit: the edit that makes it 1024 CPUs.
    for k, v in [("threads", "1"), ("cores", "8"), ("clusters", "4"), ("llcs", "4"),
                 ("nodes", "4"), ("sockets", "1")]:
        type_into(page, f"#designer-{k}", v)
    page.wait_count("button.cpu", 512)
    t0 = time.time()
    type_into(page, "#designer-threads", "2")
    got = page.wait_count("button.cpu", 1024, timeout=60)
    note(f"1024 CPUs drawn {time.time() - t0:.2f} s after the edit")
    check(got == 1024, f"the designer draws 1024 CPUs, its limit (got {got})")
    page.wait_for(".level-name")
    note(f"1024 CPUs: domains shown {time.time() - t0:.2f} s after the edit")
def decisions(page):
    """Side A's and B's chosen CPUs and queue texts as shown."""
    return (page.texts('.decision[data-side="a"] .chosen-cpu'),
            page.texts('.decision[data-side="b"] .chosen-cpu'))


def lessons(page, cfg):
    """A lesson from the header's Lessons menu: it opens at step 1 with its scenario
    loaded, Next and the keyboard advance it (and load the step's scenario), the step
    is in the link (a fresh page and the embed view open it there), and the "now try"
    task says done only once the student has done it."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    page.open()
    page.wait_for(".level-name")
    page.click("#lessons-button")
    picks = page.wait_for(".lesson-pick")
    check(len(picks) == 6, f"the Lessons menu lists 6 lessons (got {picks})")
    page.click('.lesson-pick[data-lesson="4"]')
    head = page.wait_for("#lesson-title", pred=lambda t: "step 1 of" in t[0])
    check(head and "Lesson 4 of 6" in head[0] and "cluster patch" in head[0],
          f"lesson 4 opens at step 1 (got {head[:1]})")
    a = page.wait_for('.decision[data-side="a"] .chosen-cpu', pred=lambda t: t[0] == "CPU 12")
    b = page.wait_for('.decision[data-side="b"] .chosen-cpu', pred=lambda t: t[0] == "CPU 1")
    check(a[:1] == ["CPU 12"] and b[:1] == ["CPU 1"],
          f"its scenario is loaded: low load, 6.6 takes prev 12, 6.6+cluster CPU 1 (got A {a}, B {b})")
    hl = page.js("return document.querySelector('main').dataset.highlight")
    check(hl == "decisions", f"step 1 points at the decisions (data-highlight {hl!r})")
    page.click("#lesson-next")
    head = page.wait_for("#lesson-title", pred=lambda t: "step 2 of" in t[0])
    a = page.wait_for('.decision[data-side="a"] .chosen-cpu', pred=lambda t: t[0] == "CPU 12")
    b = page.wait_for('.decision[data-side="b"] .chosen-cpu', pred=lambda t: t[0] == "CPU 12")
    busy = page.text(".wakeup .count")
    check("step 2 of" in (head[:1] or [""])[0] and b[:1] == ["CPU 12"] and busy == "127 of 128 busy",
          f"Next opens step 2 and loads its high-load scenario (got {head[:1]}, B {b}, {busy!r})")
    # The keyboard: ArrowRight in the focused panel is Next, ArrowLeft is Back.
    page.js("document.getElementById('lesson').focus()")
    ActionChains(page.driver).send_keys(Keys.ARROW_RIGHT).perform()
    head = page.wait_for("#lesson-title", pred=lambda t: "step 3 of" in t[0])
    b = page.wait_for('.decision[data-side="b"] .chosen-cpu', pred=lambda t: t[0] == "CPU 0")
    check("step 3 of" in (head[:1] or [""])[0] and b[:1] == ["CPU 0"],
          f"ArrowRight opens step 3: cluster-scan without 3/3 leaves the wakee on busy CPU 0 (got {head[:1]}, B {b})")
    link = page.hash
    ActionChains(page.driver).send_keys(Keys.ARROW_LEFT).perform()
    head = page.wait_for("#lesson-title", pred=lambda t: "step 2 of" in t[0])
    check("step 2 of" in (head[:1] or [""])[0], f"ArrowLeft goes back to step 2 (got {head[:1]})")
    ActionChains(page.driver).send_keys(Keys.ARROW_RIGHT).perform()
    page.wait_for("#lesson-title", pred=lambda t: "step 3 of" in t[0])
    status = page.text(".task-status") or ""
    task = page.text(".lesson-task") or ""
    check("Now try" in task and status == "",
          f"the last step shows the task, not yet done (task {task[:40]!r}, status {status!r})")
    axe = axe_violations(page)
    check(axe == [], f"axe: no violations with a lesson open (got {axe})")
    # Do the task: tick cluster on side B, then free CPU 3 in the waker's cluster.
    page.click('input[data-patch="cluster"][data-side="b"]')
    page.wait_for('.decision[data-side="b"] code', pred=lambda t: "cluster" in t[0] and "scan" not in t[0])
    check(page.text(".task-status") == "", "half the task is not the task: still not done")
    page.click('button.cpu[data-cpu="3"]')
    status = page.wait_for(".task-status", pred=lambda t: t[0].startswith("Done"))
    a, b = decisions(page)
    check(status[:1] and status[0].startswith("Done") and a[:1] == ["CPU 12"] and b[:1] == ["CPU 3"],
          f"the task is detected: B moves into the cluster, A stays on 12 (status {status[:1]}, A {a}, B {b})")
    page.js("window.scrollTo(0, 0)")
    page.screenshot(cfg["shot"].replace(".png", "-lesson.png"))
    # The step's link opens the lesson there, in a fresh page and in the embed view.
    page.open(link[1:])
    head = page.wait_for("#lesson-title", pred=lambda t: "step 3 of" in t[0])
    check(head[:1] and "Lesson 4 of 6 · step 3 of 3" in head[0], f"the step's link opens it (got {head[:1]})")
    page.driver.get(page.url + "?embed" + link)
    head = page.wait_for("#lesson-title", pred=lambda t: "step 3 of" in t[0])
    b = page.wait_for('.decision[data-side="b"] .chosen-cpu')
    check(head[:1] and "step 3 of 3" in head[0] and b[:1] == ["CPU 0"],
          f"the embed view shows the lesson step beside its decisions (got {head[:1]}, B {b})")
    page.screenshot(cfg["shot"].replace(".png", "-lesson-embed.png"))
    page.open()
    page.wait_for(".level-name")
    check(page.count(".lesson-panel") == 0, "a fresh page has no lesson open")


def glossary(page, cfg):
    """A flag chip is a button whose pop-over explains the flag; Escape closes it and
    gives the focus back; a tap (click) opens it too, and the level card behind it
    does not take the click."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    page.open()
    page.wait_for(".level-name")
    chip = '.level[data-level="CLS"] button.flag[data-term="SD_CLUSTER"]'
    check(page.count(chip) == 1, "the CLS level's SD_CLUSTER chip is a button")
    expanded = page.attrs(chip, "aria-expanded")
    check(expanded == ["false"], f"it starts closed (aria-expanded {expanded})")
    page.js(f"document.querySelector('{chip}').focus()")
    ActionChains(page.driver).send_keys(Keys.ENTER).perform()
    pop = page.wait_for(".gloss-pop")
    owner = page.js(f"const b = document.querySelector('{chip}');"
                    "return [b.getAttribute('aria-expanded'), b.getAttribute('aria-controls'),"
                    " document.getElementById(b.getAttribute('aria-controls'))?.getAttribute('role')]")
    check(pop[:1] and "cluster" in pop[0] and "6.7" in pop[0] and owner[0] == "true" and owner[2] == "note",
          f"Enter opens the explanation, tied to the chip by aria-controls (got {pop[:1]}, {owner})")
    highlighted = page.js("return document.querySelector('.level.active') !== null")
    check(not highlighted, "the level card behind the chip was not toggled")
    axe = axe_violations(page)
    check(axe == [], f"axe: no violations with a pop-over open (got {axe})")
    page.screenshot(cfg["shot"].replace(".png", "-glossary.png"))
    ActionChains(page.driver).send_keys(Keys.ESCAPE).perform()
    gone = page.until(lambda: page.count(".gloss-pop") == 0, timeout=5)
    focus = page.js("return document.activeElement.dataset.term")
    check(gone and focus == "SD_CLUSTER", f"Escape closes it and the focus stays on the chip (focus {focus!r})")
    page.click(chip)
    check(page.wait_count(".gloss-pop", 1, timeout=5) == 1, "a click (a tap) opens it")
    page.click(chip)
    check(page.wait_count(".gloss-pop", 0, timeout=5) == 0, "a second click closes it")
    # Every flag chip of every level has an entry: none is drawn as plain text.
    plain = page.js("return [...document.querySelectorAll('.flags > span.flag')].map(e => e.textContent)")
    check(plain == [], f"every flag chip has a glossary entry (plain: {plain})")
    page.click(".tabs button:nth-child(4)")
    page.wait_for(".terms")
    terms = page.attrs(".terms button.gloss-btn", "data-term")
    check({"SIS_UTIL", "wake_affine", "select_idle_sibling", "wakelist"} <= set(terms),
          f"the Wake-up tab explains its terms (got {terms})")


def examples(page, cfg):
    """The Wake-up tab's examples menu: each seed's decisive wake-up; seed 01's gives
    6.6 → CPU 12 (prev) and 6.6+cluster → CPU 2 (the waker's cluster), and the others
    show what their seed changes."""
    page.open()
    page.wait_for(".level-name")
    page.click(".tabs button:nth-child(4)")
    page.wait_for("#wake-example")
    values = page.js("return [...document.querySelectorAll('#wake-example option')].map(o => o.value)")
    check(values == ["", "seed01", "seed02", "seed03", "seed04"], f"one example per seed (got {values})")
    page.select("#wake-example", "seed01")
    a = page.wait_for('.decision[data-side="a"] .chosen-cpu', pred=lambda t: t[0] == "CPU 12")
    b = page.wait_for('.decision[data-side="b"] .chosen-cpu', pred=lambda t: t[0] == "CPU 2")
    heads = page.texts(".decision-head code")
    check(a[:1] == ["CPU 12"] and b[:1] == ["CPU 2"] and heads == ["v6.6", "v6.6+cluster"],
          f"seed 01: 6.6 takes prev 12, 6.6+cluster CPU 2 (got A {a}, B {b}, {heads})")
    note = page.text(".example-note") or ""
    check("CPU 2" in note, f"the menu says what the example shows (got {note!r})")
    page.select("#wake-example", "seed03")
    q = page.wait_for(".decision .queue", pred=lambda t: len(t) == 2 and "remote" in t[0])
    check(len(q) == 2 and "remote rq lock" in q[0] and "wakelist + IPI" in q[1],
          f"seed 03: 6.8 locks the target's runqueue, ttwu-l2c queues with an IPI (got {q})")
    page.select("#wake-example", "seed04")
    a = page.wait_for('.decision[data-side="a"] .chosen-cpu', pred=lambda t: t[0] == "CPU 5")
    b = page.wait_for('.decision[data-side="b"] .chosen-cpu')
    cookies = page.text(".cookies") or ""
    check(a[:1] == ["CPU 5"] and b[:1] and b[0] != "CPU 5" and "cookie 2" in cookies,
          f"seed 04: 6.12 takes CPU 5 beside cookie 2, the patch goes elsewhere (got A {a}, B {b}, {cookies!r})")
    page.screenshot(cfg["shot"].replace(".png", "-examples.png"))


def layout_1280(page, cfg):
    """At 1280x720 the result comes first: the wake-up decisions and the Simulate
    tab's chart start within the first screen, with the right panel scrolling with the
    page, and the Domains tab's cards too."""
    try:
        set_viewport(page, 1280, 720)
        page.open(fragment(TEACHING))
        page.wait_for('.decision[data-side="b"] .chosen-cpu')
        top = page.js("return document.querySelector('.decision').getBoundingClientRect().top")
        check(top < 720 - 60, f"wake-up: the decision's top is in the first screen ({top:.0f} < 660 px)")
        own = page.js("const p = document.querySelector('.domain-panel');"
                      "return getComputedStyle(p).overflowY + ' ' + (p.scrollHeight > p.clientHeight + 1)")
        check(own.startswith("visible"), f"wake-up: the right panel does not scroll on its own (got {own})")
        page.screenshot(cfg["shot"].replace(".png", "-1280-wakeup.png"))
        page.open(fragment(SIMULATE))
        page.wait_for(".sim-status.done", timeout=180)
        top = page.js("return document.querySelector('.sim-chart').getBoundingClientRect().top")
        check(top < 720 - 60, f"simulate: the chart's top is in the first screen ({top:.0f} < 660 px)")
        page.screenshot(cfg["shot"].replace(".png", "-1280-simulate.png"))
    finally:
        set_viewport(page, *VIEWPORT)


# ---------------------------------------------------------------- export and compare

# Downloads are `<a download>` clicks on blob: URLs (web/src/export.rs). The hook
# keeps each click's name and Blob instead of saving a file, so the test reads the
# bytes the user would get (from the Blob itself: the page's CSP, connect-src 'self',
# refuses a fetch of a blob: URL).
DOWNLOAD_HOOK = """
  if (!window.__downloads) {
    window.__downloads = [];
    window.__blobs = {};
    const create = URL.createObjectURL;
    URL.createObjectURL = (b) => { const u = create(b); window.__blobs[u] = b; return u; };
    const click = HTMLAnchorElement.prototype.click;
    HTMLAnchorElement.prototype.click = function () {
      if (this.download) { window.__downloads.push({name: this.download, href: this.href}); return; }
      return click.call(this);
    };
    URL.revokeObjectURL = () => {};
  }
  window.__downloads.length = 0;
"""


def download(page, selector, timeout=20):
    """Clicks `selector` (a download button) and returns (file name, bytes)."""
    page.js(DOWNLOAD_HOOK)
    page.click(selector)
    page.until(lambda: page.js("return window.__downloads.length") > 0, timeout=timeout)
    name, href = page.js("const d = window.__downloads[0]; return [d.name, d.href]")
    b64 = page.driver.execute_async_script(
        "const cb = arguments[arguments.length - 1];"
        "window.__blobs[arguments[0]].arrayBuffer().then(b => {"
        " let s = ''; const u = new Uint8Array(b);"
        " for (let i = 0; i < u.length; i += 8192) s += String.fromCharCode(...u.subarray(i, i + 8192));"
        " cb(btoa(s)); }, e => cb(null));", href)
    return name, base64.b64decode(b64 or "")


def cli_bytes(cfg, *args):
    return subprocess.run([cfg["cli"], *args], check=True, capture_output=True).stdout


def without_wall(text):
    """A run's or sweep's JSON without its wall-clock fields (each side's measurement)."""
    v = json.loads(text)
    for k in ("wall_ms", "events_per_s"):
        v.pop(k, None)
    return v


def export(page, cfg):
    """Export: the Simulate tab's CSV files are the CLI's bytes for the same runs (and
    its JSON the CLI's but for the wall time), the chart and the machine drawing save as
    SVG (XML with the series / every CPU) and PNG, and every kernel text has copy and
    download buttons."""
    import xml.etree.ElementTree as ET
    page.driver.set_script_timeout(30)
    sim = dict(SIMULATE["sim"], seeds=2)
    page.open(fragment(dict(SIMULATE, sim=sim)))
    page.wait_for(".sim-status.done", timeout=180)
    page.wait_for('[data-export="ab-csv"]')
    w = sim["workload"]
    args = ["--machine", "kunpeng920-6426", "--cpus", sim["cpus"], "--workload", w["kind"],
            "--threads", str(w["clients"]), "--duration-ms", str(sim["duration_ms"]),
            "--seed", str(sim["seed"]), "--seeds", "2"]
    name, got = download(page, '[data-export="ab-csv"]')
    want = cli_bytes(cfg, "sweep", *args, "--baseline", "6.6", "--patched", "6.6+cluster",
                     "--format", "csv")
    check(got == want and len(got) > 60,
          f"the change CSV is `schedlab sweep --format csv`'s bytes ({len(got)} and {len(want)} bytes: {got[:200]!r} / {want[:200]!r})")
    check(name == "schedlab-kunpeng920-6426-6.6-vs-6.6+cluster-seed1-ab.csv",
          f"the file name says machine, kernels and seed (got {name})")
    name, got = download(page, '[data-export="metrics-csv"]')
    a = cli_bytes(cfg, "run", *args, "--patches", "6.6", "--format", "csv")
    b = cli_bytes(cfg, "run", *args, "--patches", "6.6+cluster", "--format", "csv")
    want = a + b.split(b"\n", 1)[1]
    check(got == want and got.count(b"\n") == 5,
          f"the metrics CSV is `schedlab run --format csv`'s bytes for A then B ({len(got)} and {len(want)} bytes)")
    _, got = download(page, '[data-export="a-json"]')
    want = cli_bytes(cfg, "run", *args, "--patches", "6.6", "--format", "json")
    check(without_wall(got) == without_wall(want) and b'"wall_ms"' in got,
          "A's JSON is `schedlab run --format json`'s but for the wall time")
    _, got = download(page, '[data-export="ab-json"]')
    want = cli_bytes(cfg, "sweep", *args, "--baseline", "6.6", "--patched", "6.6+cluster",
                     "--format", "json")
    check(without_wall(got) == without_wall(want),
          "the change JSON is `schedlab sweep --format json`'s but for the wall time")

    name, svg = download(page, '[data-figure="chart"][data-format="svg"]')
    try:
        root = ET.fromstring(svg)
        lines = [e.get("class", "") for e in root.iter("{http://www.w3.org/2000/svg}polyline")]
    except ET.ParseError as e:
        root, lines = None, [f"not XML: {e}"]
    check(root is not None and sorted(lines) == ["line line-a", "line line-b"]
          and name.endswith("-chart.svg") and b"stroke:" in svg,
          f"the chart's SVG parses as XML, has both series and inlined styles (got {name}: {lines})")
    name, png = download(page, '[data-figure="chart"][data-format="png"]')
    check(png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000 and name.endswith(".png"),
          f"the chart's PNG has the PNG signature and a size ({name}, {len(png)} bytes)")
    with open(cfg["shot_epyc"].replace(".png", "-export-chart.png"), "wb") as f:
        f.write(png)
    page.screenshot(cfg["shot_epyc"].replace(".png", "-export.png"))

    # Seed 01's example: a sweep with published rows. Its change CSV is the bytes of
    # the command line the page prints, run natively; the published CSV adds the
    # seed's numbers to each row.
    page.select("#sim-example", "seed01-tbench")
    page.wait_for(".sim-status.done", timeout=240, pred=lambda t: "42 simulations" in t[0])
    page.wait_for('[data-export="published-csv"]')
    cmd = page.wait_for(".sim-cli code")[0].split()
    check(cmd[:2] == ["schedlab", "sweep"], f"the example's command line is a sweep (got {cmd[:2]})")
    _, got = download(page, '[data-export="ab-csv"]')
    want = cli_bytes(cfg, *cmd[1:], "--format", "csv")
    check(got == want and got.count(b"\n") == 8,
          f"the example's change CSV is the bytes of its printed command line ({len(got)} and {len(want)} bytes)")
    _, got = download(page, '[data-export="published-csv"]')
    rows = got.decode().splitlines()
    check(rows[0].endswith(",published_change_pct,published_baseline,published_patched")
          and len(rows) == 8 and rows[1].startswith(want.decode().splitlines()[1])
          and ",13.80," in rows[1],
          f"the published CSV adds seed 01's numbers to the model's rows (got {rows[:2]})")
    want = cli_bytes(cfg, "reproduce", "seed01-tbench", "--scale", "page", "--format", "csv")
    check(got == want, f"the published CSV is `schedlab reproduce seed01-tbench --scale page "
                       f"--format csv`'s bytes ({len(got)} and {len(want)} bytes)")
    _, got = download(page, '[data-export="published-json"]')
    want = cli_bytes(cfg, "reproduce", "seed01-tbench", "--scale", "page", "--format", "json")
    got_v = without_wall(got) if got else {}
    check(got_v == without_wall(want) and got_v.get("experiment") == "seed01-tbench"
          and len(got_v.get("rows", [])) == 7
          and got_v["rows"][0].get("published_change_pct") == 13.8,
          "the published JSON is `schedlab reproduce seed01-tbench --scale page --format json`'s "
          f"but for the wall time ({len(got)} and {len(want)} bytes)")

    page.open()
    page.wait_for(".level-name")
    name, svg = download(page, '[data-figure="machine"][data-format="svg"]')
    try:
        root = ET.fromstring(svg)
        cpus = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "cpu"]
    except ET.ParseError:
        cpus = []
    check(len(cpus) == 128 and name == "schedlab-kunpeng920-6426-6.8-machine.svg",
          f"the machine drawing saves as SVG with its 128 CPUs (got {name}, {len(cpus)})")
    name, png = download(page, '[data-figure="machine"][data-format="png"]')
    check(png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000,
          f"the machine drawing saves as PNG ({name}, {len(png)} bytes)")
    with open(cfg["shot_epyc"].replace(".png", "-export-machine.png"), "wb") as f:
        f.write(png)
    for nth, ids in ((2, ["kernel-text"]), (3, ["kernel-text", "schedstat-text"])):
        page.click(f".tabs button:nth-child({nth})")
        page.wait_for(f"#{ids[-1]}")
        for pre in ids:
            copy = page.count(f'[data-copy="{pre}"]')
            name, got = download(page, f'[data-download="{pre}"]')
            text = page.js("return document.getElementById(arguments[0]).textContent", pre)
            check(copy == 1 and got.decode() == text and len(text) > 20 and name.endswith(".txt"),
                  f"#{pre} has a copy button and downloads its own text ({name}, {len(got)} bytes)")
    schedstat = page.js("return document.getElementById('schedstat-text').textContent")
    check(schedstat.startswith("version 15") or "cpu0 " in schedstat,
          f"the debugfs tab shows CPU 0's /proc/schedstat lines (got {schedstat[:80]!r})")


def domain_diff(page, cfg):
    """Compare kernels on the Domains tab: 6.6 against 6.6+cluster on kunpeng920-6426
    marks the CLS level's lines (the patch makes it a cluster domain) and says so; a
    release against itself marks none."""
    s = {"machine": "kunpeng920-6426", "patches": "6.6", "view": "domains",
         "wake": {"compare": "6.6+cluster"}}
    page.open(fragment(s))
    page.wait_for("table.line-diff")
    with_ = page.js("return document.querySelector('#diff-with').value")
    fmt = page.js("return document.querySelector('#diff-format').value")
    check(fmt == "debugfs", f"the comparison shows the debugfs files, which print the flags (got {fmt!r})")
    check(with_ == "6.6+cluster", f"the comparison defaults to B, 6.6+cluster (got {with_!r})")
    summary = page.text(".diff-summary")
    check("flags differ on" in summary and "CLS" in summary,
          f"the summary says the CLS level's flags differ (got {summary!r})")
    marked = page.js("return [...document.querySelectorAll('tr.diff-row:not(.same)')]"
                     ".map(r => [r.className, r.querySelector('.diff-mark').textContent,"
                     " r.querySelector('.diff-right').textContent])")
    check(marked and all(m[1] in "~+-" and m[1] != " " for m in marked)
          and any("SD_CLUSTER" in m[2] or "CLS" in m[2] for m in marked),
          f"changed lines are marked with ~/+/- and the CLS level's are among them (got {marked[:4]})")
    check(page.js("return document.querySelector('table.line-diff').dataset.identical") == "false",
          "the diff is not identical")
    page.js("document.querySelector('.domain-diff').scrollIntoView()")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-domain-diff.png"))
    page.select("#diff-format", "dmesg")
    page.until(lambda: "dmesg" in page.text(".diff-summary"), timeout=10)
    n = page.count("tr.diff-row:not(.same)")
    check(n == 0, f"dmesg prints no flags: CPU 0's lines are the same under both ({n} marked rows)")
    page.select("#diff-format", "debugfs")
    page.select("#diff-with", "6.6")
    page.until(lambda: page.js("return document.querySelector('table.line-diff').dataset.identical") == "true",
               timeout=10)
    n = page.count("tr.diff-row:not(.same)")
    summary = page.text(".diff-summary")
    check(n == 0 and "the same" in summary, f"6.6 against itself marks no line (got {n}: {summary!r})")

    # The diff travels in the link: the other kernel and the text, opened afresh.
    page.select("#diff-with", "5.15")
    page.select("#diff-format", "schedstat")
    page.until(lambda: "schedstat" in page.text(".diff-summary")
               and "5.15" in page.text(".diff-summary"), timeout=10)
    diff_rows = lambda: page.js("return [...document.querySelectorAll('tr.diff-row')]"
                                ".map(r => r.className + '|' + r.textContent)")
    sent = (page.text(".diff-summary"), diff_rows())
    link = page.until(lambda: "5.15" in decoded_hash(page) and page.hash, timeout=5)
    page.open(link.lstrip("#"))
    page.wait_for("table.line-diff")
    picked = page.js("return [document.querySelector('#diff-with').value,"
                     " document.querySelector('#diff-format').value]")
    got = (page.text(".diff-summary"), diff_rows())
    check(picked == ["5.15", "schedstat"] and got == sent and len(sent[1]) > 3,
          f"the link opens on the same diff: 5.15 as schedstat ({picked}; {got[0]!r} against {sent[0]!r}, "
          f"{len(got[1])} and {len(sent[1])} rows)")
    page.open(fragment(s))
    page.wait_for("table.line-diff")
    check(page.js("return document.querySelector('#diff-format').value") == "debugfs"
          and '"ui"' not in decoded_hash(page),
          f"a link without a diff opens on the defaults and carries none ({decoded_hash(page)[:120]!r})")
    set_viewport(page, 390, 844)
    try:
        page.select("#diff-with", "6.6+cluster")
        time.sleep(0.5)
        width = page.js("return document.documentElement.scrollWidth")
        check(width <= 390, f"at 390 px the diff scrolls inside its box, not the page (page width {width})")
        page.js("document.querySelector('.domain-diff').scrollIntoView()")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-domain-diff-390.png"))
    finally:
        set_viewport(page, *VIEWPORT)


# ---------------------------------------------------------------- timeline, click-to-explain, trace

# The timeline's run: SIMULATE's (tbench, 4 clients on node 0, 60 ms after a 12 ms
# warm-up, seed 1, 6.6 against 6.6+cluster); its default window is the 2 ms after
# the warm-up, as `schedlab run --trace-window 12..14`.
TIMELINE_WINDOW_MS = (12, 14)


def sim_args(sim):
    w = sim["workload"]
    return ["--machine", "kunpeng920-6426", "--cpus", sim["cpus"], "--workload", w["kind"],
            "--threads", str(w["clients"]), "--duration-ms", str(sim["duration_ms"]),
            "--seed", str(sim["seed"])]


def cli_trace(cfg, patches, window_ms, cap=500000):
    """`schedlab run --trace` of SIMULATE's run under `patches`: (bytes, parsed)."""
    path = os.path.join(tempfile.mkdtemp(prefix="trace-"), "t.json")
    subprocess.run([cfg["cli"], "run", *sim_args(SIMULATE["sim"]), "--patches", patches,
                    "--trace", path, "--trace-window", f"{window_ms[0]}..{window_ms[1]}",
                    "--trace-cap", str(cap)], check=True, capture_output=True)
    with open(path, "rb") as f:
        raw = f.read()
    return raw, json.loads(raw)


def trace_counts(v):
    """A Chrome trace's wake-up flows (s, f), wake slices, sched slices."""
    ev = v["traceEvents"]
    return {
        "flow_starts": sum(1 for e in ev if e.get("ph") == "s"),
        "flow_ends": sum(1 for e in ev if e.get("ph") == "f"),
        "wakes": sum(1 for e in ev if e.get("cat") == "wake" and e.get("ph") == "X"
                     and e["name"].startswith("wake ")),
        "sched": sum(1 for e in ev if e.get("cat") == "sched" and e.get("ph") == "X"),
    }


def open_timeline(page):
    """SIMULATE's run, finished, with its timeline shown; returns the canvas' wake-up
    counts per side."""
    page.open(fragment(SIMULATE))
    page.wait_for(".sim-status.done", timeout=180)
    page.click("#timeline-show")
    got = page.until(lambda: page.attrs(".timeline canvas", "data-wakeups"), timeout=120)
    return [int(x) for x in (got or [""])[0].split(",") if x]


def canvas_point(page, canvas, x, y, click=False):
    """Moves the real pointer to (x, y) CSS px of the timeline's canvas (and clicks
    there): the canvas' scrolling box and the page are scrolled so the point shows,
    and the pointer goes to viewport coordinates (Selenium's element offsets start
    from the element's in-view centre, which moves as the box scrolls)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    left, top = page.js("""const c = arguments[0], box = c.parentElement;
        box.scrollTop = Math.max(0, arguments[2] - box.clientHeight / 2);
        const r0 = c.getBoundingClientRect();
        window.scrollBy(0, r0.top + arguments[2] - innerHeight / 2);
        const r = c.getBoundingClientRect();
        return [r.left, r.top];""", canvas, x, y)
    ab = ActionBuilder(page.driver)
    ab.pointer_action.move_to_location(int(left + x), int(top + y))
    if click:
        ab.pointer_action.click()
    ab.perform()


def view_span(page):
    a, b = (float(x) for x in page.attrs(".timeline canvas", "data-view")[0].split(","))
    return a, b


def timeline(page, cfg):
    """The timeline: A above B on one axis, one track per CPU grouped by node/LLC and
    cluster; its wake-up arrows are the run's (the CLI's trace of the same window has
    as many wake-up flows), and the wheel, the keys and a drag zoom and pan; a click
    on a group's name folds it."""
    from selenium.webdriver.common.action_chains import ActionChains
    t0 = time.time()
    counts = open_timeline(page)
    note(f"run and timeline in {time.time() - t0:.1f} s")
    want = [trace_counts(cli_trace(cfg, p, TIMELINE_WINDOW_MS)[1])["flow_starts"]
            for p in ("6.6", "6.6+cluster")]
    check(len(counts) == 2 and counts == want and min(want) > 50,
          f"A's and B's arrows are the run's wake-ups in 12..14 ms, as `schedlab run --trace` counts them (page {counts}, CLI {want})")
    canvas = page.all(".timeline canvas")[0]
    h0 = page.js("return arguments[0].getBoundingClientRect().height", canvas)
    check(h0 > 2 * (32 * 11), f"both sides' 32 CPU tracks are drawn (canvas {h0:.0f} px high)")
    lo, hi = view_span(page)
    check(abs(lo - 12e6) < 1 and abs(hi - 14e6) < 1, f"the view opens on the whole window (got {lo:.0f}..{hi:.0f} ns)")
    # Keyboard: focus the canvas (a Tab stop) and zoom, pan, reset.
    page.js("arguments[0].focus()", canvas)
    check(page.js("return document.activeElement === arguments[0]", canvas), "the canvas takes focus")
    ActionChains(page.driver).send_keys("+").perform()
    a, b = view_span(page)
    check(abs((b - a) - (hi - lo) / 2) < 2, f"+ halves the span (got {b - a:.0f} ns)")
    ActionChains(page.driver).send_keys("\ue014").perform()  # ArrowRight
    a2, b2 = view_span(page)
    check(a2 > a and abs((b2 - a2) - (b - a)) < 2, f"→ pans later ({a:.0f} → {a2:.0f})")
    ActionChains(page.driver).send_keys("0").perform()
    check(view_span(page) == (lo, hi), "0 shows the whole window again")
    # The wheel zooms about the pointer (not the page's scroll).
    page.js("""const c = arguments[0], r = c.getBoundingClientRect();
               c.dispatchEvent(new WheelEvent('wheel', {deltaY: -300, clientX: r.left + r.width * 0.75,
                 clientY: r.top + 60, bubbles: true, cancelable: true}));""", canvas)
    a, b = view_span(page)
    check(b - a < (hi - lo) * 0.7, f"the wheel zooms in ({b - a:.0f} ns of {hi - lo:.0f})")
    # A drag pans.
    ActionChains(page.driver).move_to_element_with_offset(canvas, 100, 0).click_and_hold() \
        .move_by_offset(-150, 0).release().perform()
    a3, b3 = view_span(page)
    check(a3 > a and abs((b3 - a3) - (b - a)) < 2, f"dragging left pans later ({a:.0f} → {a3:.0f})")
    # Hovering a track shows what runs there (A's CPU 12: below the axis, A's
    # header, node 0's header and three clusters of 4 CPUs with their headers).
    tip_text = "const t = document.querySelector('.timeline-tip'); return t && !t.hidden ? t.textContent : null"
    canvas_point(page, canvas, canvas.size["width"] * 0.6, 22 + 20 + 15 + 3 * (15 + 44) + 15 + 5)
    tip = page.until(lambda: page.js(tip_text), timeout=5)
    # A wake-up arrow crossing CPU 12's track is drawn over it and answers the hover.
    check(tip and ("CPU 12" in tip or re.match(r"wake-up #\d+ \(A ", tip)),
          f"hovering shows the slice or wake-up under the pointer (got {tip!r})")
    # Fold A's first group (its name, in the gutter): its CPUs' rows go.
    canvas_point(page, canvas, 20, 22 + 20 + 7, click=True)
    h1 = page.until(lambda: (lambda h: h if h < h0 - 100 else None)(
        page.js("return arguments[0].getBoundingClientRect().height", canvas)), timeout=5)
    check(h1 and h1 < h0 - 32 * 11 + 20, f"clicking a group's name folds it ({h0:.0f} → {h1} px)")
    canvas_point(page, canvas, 20, 22 + 20 + 7, click=True)  # unfold again
    page.js("arguments[0].focus()", canvas)
    ActionChains(page.driver).send_keys("0", "+", "+", "+", "+").perform()  # 125 µs
    set_viewport(page, 1280, 720)
    try:
        page.js("document.querySelector('.timeline-panel').scrollIntoView()")
        canvas_point(page, canvas, canvas.size["width"] * 0.5, 300)
        time.sleep(0.3)
        page.screenshot(cfg["shot_epyc"].replace(".png", "-timeline-1280.png"))
    finally:
        set_viewport(page, *VIEWPORT)


def explain_sim_wake(page, cfg):
    """Click-to-explain: a wake-up arrow clicked in the timeline opens the Wake-up tab
    on that wake-up, whose decision chooses the simulated CPU, says where it came
    from, offers the state file `schedlab run --capture-wake N` writes, and leads back
    to the hand-set wake-up."""
    from selenium.webdriver.common.action_chains import ActionChains
    page.driver.set_script_timeout(30)
    open_timeline(page)
    canvas = page.all(".timeline canvas")[0]
    page.js("arguments[0].focus()", canvas)
    ActionChains(page.driver).send_keys("]").perform()  # the one nearest the middle
    xy = page.attrs(".timeline canvas", "data-selected-xy")[0]
    check(xy and page.text(".timeline-selected").startswith("wake-up #"),
          f"] selects a wake-up and says what it was (got {page.text('.timeline-selected')!r})")
    # Zoom in about it until it stands alone, then click it.
    for _ in range(6):
        x, y = (float(v) for v in page.attrs(".timeline canvas", "data-selected-xy")[0].split(","))
        page.js("""const c = arguments[0], r = c.getBoundingClientRect();
                   c.dispatchEvent(new WheelEvent('wheel', {deltaY: -400, clientX: r.left + arguments[1],
                     clientY: r.top + arguments[2], bubbles: true, cancelable: true}));""", canvas, x, y)
    x, y = (float(v) for v in page.attrs(".timeline canvas", "data-selected-xy")[0].split(","))
    check(x > 190 + 50, f"the selected wake-up stays in view while zooming about it (x = {x})")
    seq = page.attrs(".timeline canvas", "data-selected-wake")[0]
    cpu = page.attrs(".timeline canvas", "data-selected-cpu")[0]
    side = page.attrs(".timeline canvas", "data-selected-side")[0]
    t0 = time.time()
    canvas_point(page, canvas, x, y, click=True)
    origin = page.wait_for(".sim-wake-origin", timeout=60)
    took = time.time() - t0
    note(f"wake-up #{seq} of side {side} captured and shown in {took:.2f} s")
    got_seq = page.attrs(".sim-wake-origin", "data-wake")
    sim_cpu = page.attrs(".sim-wake-origin", "data-simulated-cpu")
    check(got_seq == [seq] and f"wake-up #{seq} of side {side.upper()}, seed 1" in (origin or [""])[0],
          f"the Wake-up tab says where it came from (clicked #{seq}; got {origin})")
    check(sim_cpu == [cpu], f"the simulated CPU is the record's (record {cpu}, page {sim_cpu})")
    dec = page.wait_for(f'.decision[data-side="{side}"] .chosen-cpu')
    cpu_attr = page.attrs(f'.decision[data-side="{side}"]', "data-cpu")
    check(cpu_attr == [cpu] and dec == [f"CPU {cpu}"],
          f"side {side.upper()}'s decision on the captured state chooses the simulated CPU {cpu} (got {cpu_attr})")
    check(page.count(".trace li.st-enter") > 2 and page.count(".code-view") >= 1,
          "the decision shows its trace and the code view")
    check(page.count('.decision[data-side="a"]') == 1 and page.count('.decision[data-side="b"]') == 1,
          "both sides decide the captured inputs (A/B)")
    check(page.count("#all-idle") == 0, "the hand-set inputs are put away")
    # The state file is the CLI's.
    name, got = download(page, ".sim-wake-save")
    path = os.path.join(tempfile.mkdtemp(prefix="cap-"), "w.json")
    subprocess.run([cfg["cli"], "run", *sim_args(SIMULATE["sim"]),
                    "--patches", "6.6" if side == "a" else "6.6+cluster",
                    "--capture-wake", seq, "--capture-file", path], check=True, capture_output=True)
    with open(path, "rb") as f:
        want = f.read()
    check(got == want and len(got) > 500,
          f"the state file is `schedlab run --capture-wake {seq}`'s bytes ({name}: {len(got)} and {len(want)} bytes)")
    set_viewport(page, 1280, 720)
    try:
        page.js("window.scrollTo(0, 0)")
        time.sleep(0.2)
        page.screenshot(cfg["shot_epyc"].replace(".png", "-sim-wake-1280.png"))
    finally:
        set_viewport(page, *VIEWPORT)
    page.click("#sim-wake-close")
    page.wait_for("#all-idle")
    check(page.count(".sim-wake") == 0, "Back to the hand-set wake-up closes it")


def trace_download(page, cfg):
    """The trace download: side A's Chrome/Perfetto JSON of the whole run parses, is
    `schedlab run --trace`'s bytes, and counts the run's wake-ups, wake-up migrations
    and context switches as the run's report does."""
    page.driver.set_script_timeout(60)
    page.open(fragment(SIMULATE))
    page.wait_for(".sim-status.done", timeout=180)
    page.set_input("#timeline-from", "0")
    page.set_input("#timeline-len", "1000")
    t0 = time.time()
    name, got = download(page, '.trace-download[data-side="a"]', timeout=120)
    note(f"trace of the whole run made in {time.time() - t0:.1f} s, {len(got)} bytes")
    try:
        v = json.loads(got)
    except ValueError as e:
        v = None
        check(False, f"the trace parses as JSON ({e})")
    if v is None:
        return
    check(name.endswith(".json") and "kunpeng920-6426" in name, f"the file name says what it is (got {name})")
    raw, _ = cli_trace(cfg, "6.6", (0, 1000))
    check(got == raw, f"the trace is `schedlab run --trace`'s bytes ({len(got)} and {len(raw)} bytes)")
    c = trace_counts(v)
    ev = v["traceEvents"]
    arg = lambda e, k: (e.get("args") or {}).get(k) is True  # noqa: E731
    m = native_run(cfg, SIMULATE["sim"], "6.6")["metrics"]
    counted = {
        "wakeups": sum(1 for e in ev if e.get("cat") == "wake" and e.get("ph") == "X"
                       and arg(e, "measured") and not arg(e, "background")),
        "migrations_wakeup": sum(1 for e in ev if e.get("cat") == "wake" and e.get("ph") == "X"
                                 and arg(e, "measured") and not arg(e, "background") and arg(e, "migrated")),
        "context_switches": sum(1 for e in ev if e.get("cat") == "switch" and arg(e, "measured")
                                and arg(e, "switch")),
    }
    want = {k: m.get(k) for k in counted}
    check(counted == want and want["wakeups"] > 100,
          f"the trace counts the run's wake-ups, wake-up migrations and context switches (trace {counted}, run {want})")
    check(c["flow_starts"] == c["wakes"] == v["otherData"]["wakeups_in_run"] and c["flow_ends"] <= c["flow_starts"]
          and c["sched"] > c["wakes"],
          f"one wake-up flow per wake-up, every one of the run's, and the CPUs' slices ({c}, run {v['otherData']['wakeups_in_run']})")


# ---------------------------------------------------------------- the machine, live

# A short run to play in slow motion: 2 tbench clients on node 0 for 2 ms (plus the
# 0.4 ms warm-up), 6.6 against 6.6+cluster.
LIVE = dict(SIMULATE, sim={"workload": {"kind": "tbench", "clients": 2}, "cpus": "node0",
                           "duration_ms": 2, "seed": 1})
# The big one: 64 tbench pairs over epyc9654-2p's 384 CPUs.
LIVE_EPYC = {
    "machine": "epyc9654-2p", "patches": "6.6", "view": "simulate",
    "wake": {"compare": "6.6+cluster"},
    "sim": {"workload": {"kind": "tbench", "clients": 64}, "cpus": "all",
            "duration_ms": 20, "seed": 1},
}


def live_attrs(page):
    """The live view's measurements (data-* on .live-view), as a dict of strings."""
    return page.js("const v = document.querySelector('.live-view');"
                   "return v ? Object.assign({}, v.dataset) : {}") or {}


def live(page, cfg):
    """The machine, live: a short run played in slow motion draws frames, one arrow per
    wake-up of the record (as many as the run made, and the measured ones are the
    native CLI's count), a marker per task; stepping plays one wake-up at a time; a
    click on an arrow opens that wake-up in the Wake-up tab, deciding the simulated
    CPU; on epyc9654-2p with 64 pairs it reports the frame rate and draw time."""
    page.open(fragment(LIVE))
    page.wait_for(".sim-status.done", timeout=180)
    page.wait_for("#live-status")
    # Slow motion: 20 µs of simulated time a frame (index 7 of the speed scale).
    page.js("const s = document.querySelector('#live-speed'); s.value = '7';"
            "s.dispatchEvent(new Event('input', {bubbles: true}));")
    speed = page.text(".live-speed-text")
    check(speed == "20 µs of simulated time per frame", f"the speed scale says its step (got {speed!r})")
    ended = page.until(lambda: (lambda a: a.get("endedA") == "true" and a.get("endedB") == "true" and a)(
        live_attrs(page)), timeout=150)
    a = live_attrs(page)
    note(f"live view after playing the whole record: {a}")
    check(ended, "both sides play to the end of their record")
    frames = int(a.get("frames", "0"))
    t_ms = int(a.get("tNs", "0")) / 1e6
    check(frames >= 60, f"frames were drawn in slow motion ({frames} frames for {t_ms:.3f} ms)")
    native = {"a": native_run(cfg, LIVE["sim"], "6.6"), "b": native_run(cfg, LIVE["sim"], "6.6+cluster")}
    for side in "ab":
        s = side.upper()
        wakes, arrows = int(a.get(f"wakes{s}", -1)), int(a.get(f"arrows{s}", -2))
        run_wakes, feed_wakes = int(a.get(f"runWakeups{s}", -3)), int(a.get(f"feedWakes{s}", -4))
        check(wakes > 20 and wakes == arrows == feed_wakes == run_wakes and a.get(f"skipped{s}") == "0",
              f"{side}: one arrow drawn per wake-up of the run (played {wakes}, arrows {arrows}, "
              f"in the record {feed_wakes}, the run's count {run_wakes})")
        measured = int(a.get(f"measured{s}", -1))
        want = native[side]["metrics"]["wakeups"]
        report = a.get(f"reportWakeups{s}")
        check(measured == want and report == str(want),
              f"{side}: the measured wake-ups played are the report's and the native CLI's "
              f"({measured}, page report {report}, CLI {want})")
        markers, tasks = int(a.get(f"markers{s}", -1)), int(a.get(f"tasks{s}", -2))
        check(markers == tasks >= 4, f"{side}: a marker per task (drawn {markers}, tasks seen {tasks}; "
                                     f"2 tbench pairs are 4 tasks)")

    # One wake-up at a time.
    # At the end it stopped by itself; Play plays again from the start, Pause pauses.
    check(live_attrs(page).get("playing") == "false", "playback stops at the end of the record")
    page.click("#live-play")
    again = page.until(lambda: live_attrs(page).get("playing") == "true", timeout=5)
    page.click("#live-play")
    paused = page.until(lambda: live_attrs(page).get("playing") == "false", timeout=5)
    check(again and paused, "Play plays again, Pause pauses")
    page.click("#live-restart")
    # The restart shows on the next frame: wait for it, so each step is measured
    # against the restarted count, not a stale one.
    restarted = page.until(lambda: (lambda x: x if (x.get("wakesA"), x.get("wakesB")) == ("0", "0")
                                    else None)(live_attrs(page)), timeout=5)
    check(restarted, f"Restart plays from the start again (got {live_attrs(page)})")
    totals = []
    for _ in range(3):
        before = live_attrs(page)
        page.click("#live-step")
        after = page.until(lambda: (lambda x: x if x.get("wakesA") is not None and
                                    (x.get("wakesA"), x.get("wakesB")) !=
                                    (before.get("wakesA"), before.get("wakesB")) else None)(live_attrs(page)),
                           timeout=5) or live_attrs(page)
        totals.append((int(after.get("wakesA", 0)), int(after.get("wakesB", 0))))
    # Each step plays the earliest next wake-up, on both sides when both make it at
    # that instant: the leading side never runs more than one ahead per step.
    check(all(max(t) <= k + 1 <= sum(t) for k, t in enumerate(totals))
          and all(sum(b) > sum(a) for a, b in zip(totals, totals[1:])),
          f"each step plays the next wake-up (wake-ups A, B after each: {totals})")
    status = page.text("#live-status")
    check(status and "paused" in status and "wake-ups" in status, f"the status line says so (got {status!r})")
    # A click on the newest arrow opens that wake-up in the Wake-up tab, captured by
    # re-running the side's run to it: its decision chooses the simulated CPU.
    a = live_attrs(page)
    side = 0 if a.get("lastArrowA") else 1
    buttons = page.all(f'.live-side[data-side="{side}"] .live-wake')
    newest = (buttons[0].get_attribute("data-wake"), buttons[0].get_attribute("data-cpu")) if buttons else None
    check(len(buttons) >= 2, f"the latest wake-ups are listed as buttons (got {len(buttons)})")
    if newest:
        x, y = (float(v) for v in a["lastArrow" + "AB"[side]].split(","))
        # A click at the arrow's middle (client coordinates; +1 for the canvas border).
        page.js("""const c = document.querySelector(arguments[0]);
                   c.scrollIntoView({block: 'center'});
                   const r = c.getBoundingClientRect();
                   c.dispatchEvent(new MouseEvent('click', {bubbles: true,
                     clientX: r.left + 1 + arguments[1], clientY: r.top + 1 + arguments[2]}));""",
                f"#live-canvas-{side}", x, y)
        page.wait_for(".sim-wake-origin", timeout=60)
        got = page.attrs(".sim-wake-origin", "data-wake")
        sim_cpu = page.attrs(".sim-wake-origin", "data-simulated-cpu")
        letter = "ab"[side]
        page.wait_for(f'.decision[data-side="{letter}"] .chosen-cpu')
        chosen = page.attrs(f'.decision[data-side="{letter}"]', "data-cpu")
        check(got == [newest[0]] and sim_cpu == [newest[1]] and chosen == [newest[1]],
              f"a click on the newest arrow opens that wake-up in the Wake-up tab, deciding the "
              f"simulated CPU (clicked #{newest[0]} on CPU {newest[1]}; tab shows {got}, simulated "
              f"{sim_cpu}, decided {chosen})")

    # Big: epyc9654-2p, 64 pairs, both sides streaming; the frame rate and draw time
    # while playing 20 µs a frame, then as fast as it goes.
    try:
        set_viewport(page, 1280, 720)
        page.open(fragment(LIVE_EPYC))
        page.wait_for("#live-status", timeout=60)
        page.js("document.querySelector('.live-view').scrollIntoView()")
        page.js("const s = document.querySelector('#live-speed'); s.value = '7';"
                "s.dispatchEvent(new Event('input', {bubbles: true}));")
        page.until(lambda: int(live_attrs(page).get("recordsB", "0")) > 20000, timeout=120)
        time.sleep(4)
        slow = live_attrs(page)
        page.js("document.querySelector('#live-canvas-0').scrollIntoView({block: 'end'})")
        page.screenshot(cfg["shot"].replace(".png", "-live-1280.png"))
        page.js("const s = document.querySelector('#live-speed'); s.value = '13';"
                "s.dispatchEvent(new Event('input', {bubbles: true}));")
        time.sleep(4)
        fast = live_attrs(page)
        for name, m in [("20 µs/frame", slow), ("as fast as it goes", fast)]:
            note(f"epyc9654-2p, 64 tbench pairs, A and B ({name}): {m.get('fps')} fps, "
                 f"draw {m.get('drawMs')} ms a frame (max {m.get('drawMaxMs')}), "
                 f"{m.get('frames')} frames drawn, wake-ups A {m.get('wakesA')} B {m.get('wakesB')}, "
                 f"markers A {m.get('markersA')} B {m.get('markersB')}")
        check(float(slow.get("fps", 0)) > 0 and int(slow.get("wakesA", 0)) > 0
              and int(slow.get("markersA", 0)) >= 128,
              f"epyc9654-2p: frames drawn with 128+ task markers (got {slow})")
        check(float(slow.get("drawMs", 99)) < 16.7,
              f"epyc9654-2p: a frame draws within a 60 fps budget (avg {slow.get('drawMs')} ms)")
        with emulated_scheme(page, "dark"):
            time.sleep(1)
            page.js("document.querySelector('#live-canvas-0').scrollIntoView({block: 'end'})")
            page.screenshot(cfg["shot"].replace(".png", "-live-1280-dark.png"))
        set_viewport(page, 390, 844)
        time.sleep(1)
        page.js("document.querySelector('.live-view').scrollIntoView()")
        page.screenshot(cfg["shot"].replace(".png", "-live-390.png"))
        wide = page.js("return document.documentElement.scrollWidth")
        check(wide <= 390, f"at 390 px the live view fits the width (page {wide} px wide)")
    finally:
        set_viewport(page, *VIEWPORT)


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
    simulate_kept,
    live,
    chart_band,
    dark_mode,
    mobile_layout,
    designer,
    lessons,
    glossary,
    examples,
    layout_1280,
    export,
    domain_diff,
    timeline,
    explain_sim_wake,
    trace_download,
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
