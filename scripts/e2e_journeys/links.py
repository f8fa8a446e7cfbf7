"""Journeys of the page as served and as linked: the opening page, the CSP and the
server's headers, shared wake-up links (good, bad and hostile), Back/Forward history
and the settings a link carries."""

import base64
import os
import re
import time

from harness import SIMULATE, TEACHING, busy_factor, check, decoded_hash, fragment, note


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
    # Which side's probes the drawing numbers: one side always is, so it is a choice
    # of one of two, not a toggle (a toggle promises a press on the pressed one turns
    # it off): one radio group over both columns, named by its visible label, A | B,
    # one tab stop, arrow keys move the choice. No aria-pressed button is left in the
    # cards.

    def numbering():
        return page.js("""
            const g = document.querySelectorAll('.wakeup [role=radiogroup]');
            const l = g.length === 1 && document.getElementById(g[0].getAttribute('aria-labelledby'));
            const radios = g.length === 1 ? [...g[0].querySelectorAll('[role=radio]')] : [];
            return {groups: g.length, label: l ? l.textContent.trim() : null,
                    radios: radios.map(b => [b.textContent.trim(), b.getAttribute('aria-checked'), b.tabIndex]),
                    pressed: document.querySelectorAll('.decisions [aria-pressed]').length,
                    active: document.activeElement && document.activeElement.textContent.trim()};""")

    def drawn_probes_are(side):
        # The CPUs numbered in the drawing are the ones this side's trace probed.
        return page.js(f"""
            const traced = [...document.querySelectorAll('.side-{side} .trace .st-probe')]
              .map(li => li.textContent.match(/probe CPU (\\d+)/)[1]);
            const drawn = [...document.querySelectorAll('button.cpu .probe-no')]
              .map(s => s.closest('button').dataset.cpu);
            return [[...new Set(traced)].sort().join(), [...new Set(drawn)].sort().join()];""")
    shown = numbering()
    check(shown["groups"] == 1 and shown["label"] == "Probe numbers in the drawing:"
          and shown["radios"] == [["A", "true", 0], ["B", "false", -1]] and shown["pressed"] == 0,
          f"one radio group 'Probe numbers in the drawing: A | B', A checked and the one tab stop, "
          f"no aria-pressed toggle in the cards (got {shown})")
    page.click('.probe-numbers [role=radio][data-side="b"]')
    shown = page.until(lambda: (n := numbering())["radios"][1][1] == "true" and n, timeout=5)
    check(shown and shown["radios"] == [["A", "false", -1], ["B", "true", 0]],
          f"a click on B checks B and moves the tab stop there (got {shown})")
    d = drawn_probes_are("b")
    check(d[0] and d[0] == d[1], f"the drawing numbers B's probes (B's trace, drawn: {d})")
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    page.js("document.querySelector('.probe-numbers [aria-checked=true]').focus()")
    ActionChains(page.driver).send_keys(Keys.ARROW_LEFT).perform()
    shown = page.until(lambda: (n := numbering())["radios"][0][1] == "true" and n, timeout=5)
    check(shown and shown["radios"] == [["A", "true", 0], ["B", "false", -1]] and shown["active"] == "A",
          f"Left from B checks and focuses A (got {shown})")
    d = drawn_probes_are("a")
    check(d[0] == d[1], f"the drawing numbers A's probes (A's trace, drawn: {d})")
    page.js("document.querySelector('.probe-numbers [aria-checked=true]').focus()")
    ActionChains(page.driver).send_keys(Keys.ARROW_RIGHT).perform()
    shown = page.until(lambda: (n := numbering())["radios"][1][1] == "true" and n, timeout=5)
    check(shown and shown["active"] == "B", f"Right from A checks and focuses B (got {shown})")
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
    # A first visit on a damaged link: the page shows its default scenario, and the link
    # stays in the address bar for the user to fix (it was replaced by the default's).
    bad = "v1:this-is-not-a-scenario!"
    page.open(bad)
    banner = page.wait_for(".banner")
    page.wait_for("button.cpu")
    time.sleep(0.5)
    check(banner and "shows its default scenario" in banner[0] and "stays in the address bar" in banner[0]
          and page.js("return location.hash") == "#" + bad,
          f"a first visit's damaged link stays in the address bar, the banner says so "
          f"(hash {page.js('return location.hash')!r}, banner {banner})")
    page.js("window.scrollTo(0, 0)")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-badlink-first.png"))
    # Changing the scenario replaces the damaged link (no history entry keeps it).
    length = page.js("return history.length")
    page.click(".tabs button:nth-child(4)")
    changed = page.until(lambda: page.js("return location.hash") != "#" + bad, timeout=10)
    check(changed and page.js("return history.length") == length and '"wakeup"' in decoded_hash(page),
          f"changing the scenario replaces the damaged link with the page's "
          f"(hash {page.js('return location.hash')[:40]!r}, history {length} -> {page.js('return history.length')})")
    page.open(fragment(TEACHING))
    page.wait_for('.decision[data-side="a"] .chosen-cpu')
    page.js("location.hash = '#v1:this-is-not-a-scenario!'")
    banner = page.wait_for(".banner")
    check(banner and "could not be opened" in banner[0],
          f"a garbage fragment shows the error banner (got {banner})")
    a = page.wait_for('.decision[data-side="a"] .chosen-cpu')
    check(a, f"the wake-up decisions are still shown under the banner (got {a})")
    time.sleep(0.5)
    check(page.js("return location.hash") == "#v1:this-is-not-a-scenario!",
          f"a damaged link after a good one stays in the address bar too "
          f"(got {page.js('return location.hash')[:40]!r})")
    page.click("#all-idle")
    count = page.wait_for(".wakeup .count", pred=lambda t: t[0].startswith("0 of"))
    check(count[:1] == ["0 of 128 busy"], f"the page still reacts after a bad link (got {count})")
    check(page.hash != "#v1:this-is-not-a-scenario!" and "kunpeng920" in decoded_hash(page),
          f"the change replaced the damaged link with the scenario (hash {page.js('return location.hash')[:40]!r})")
    # A hand-edited link whose JSON is wrong: the banner names the field and what it
    # must hold (not serde's "line 1 column N" of JSON the user never saw), and the
    # scenario as the user left it (all idle) stays.
    edited = dict(TEACHING, sim=dict(SIMULATE["sim"], seed="abc"))
    page.js("location.hash = arguments[0]", "#" + fragment(edited))
    banner = page.wait_for(".banner", pred=lambda t: "sim.seed" in t[0])
    check(banner and 'field `sim.seed` must be a whole number, 0 or more, found "abc"' in banner[0]
          and "could not be opened" in banner[0] and "column" not in banner[0],
          f"a wrong field in a hand-edited link is named by its path (got {banner})")
    count = page.texts(".wakeup .count")
    a = page.texts('.decision[data-side="a"] .chosen-cpu')
    check(count[:1] == ["0 of 128 busy"] and a,
          f"the page keeps the scenario it had under the banner (got {count}, decision {a})")
    # A field given twice (two edits of one link): named in words, not serde's
    # "duplicate field `prev`", and the scenario stays.
    twice = (b'{"machine":"kunpeng920-6426","patches":"6.6","view":"wakeup",'
             b'"wake":{"prev":12,"sync":true,"prev":13}}')
    page.js("location.hash = arguments[0]",
            "#v1:" + base64.urlsafe_b64encode(twice).decode().rstrip("="))
    banner = page.wait_for(".banner", pred=lambda t: "wake.prev" in t[0])
    check(banner and "field `wake.prev` appears twice" in banner[0]
          and "keeps its current scenario" in banner[0] and "duplicate" not in banner[0]
          and page.texts(".wakeup .count")[:1] == ["0 of 128 busy"],
          f"a field given twice in a link is named in words and the scenario stays (got {banner})")
    page.js("window.scrollTo(0, 0)")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-badlink.png"))
    # A syntax error right after a number is placed after it, not in it.
    page.js("location.hash = arguments[0]", "#v1:" + base64.urlsafe_b64encode(
        b'{"machine":"kunpeng920-6426","patches":"6.6","sim":{"sweep":[1}}').decode().rstrip("="))
    banner = page.wait_for(".banner", pred=lambda t: "sweep" in t[0])
    check(banner and "expected `,` or `]` after `sim.sweep[0]`" in banner[0],
          f"a bracket missing after a list's number is said to be after it (got {banner})")
    # JSON nested past serde's 128 levels: a short path and its depth, not `[0]` x 126.
    deep = "[" * 200 + "]" * 200
    page.js("location.hash = arguments[0]", "#v1:" + base64.urlsafe_b64encode(
        ('{"machine":' + deep + '}').encode()).decode().rstrip("="))
    banner = page.wait_for(".banner", pred=lambda t: "nested" in t[0])
    check(banner and "nested too deep to read" in banner[0] and " deep)" in banner[0]
          and banner[0].count("[0]") <= 8,
          f"a deeply nested link names a short path and how deep (got {banner})")
    # A link pasted from a file a Windows tool wrote starts with a byte-order mark: the
    # address bar percent-encodes it, and the link opens as it would without it.
    page.js("location.hash = arguments[0]", "#\ufeff" + fragment(TEACHING))
    a = page.until(lambda: not page.count(".banner")
                   and page.texts('.decision[data-side="a"] .chosen-cpu'), timeout=10)
    check(a and page.texts(".wakeup .count")[:1] == ["126 of 128 busy"],
          f"a link after a byte-order mark opens (decision {a}, banner {page.texts('.banner')})")


# Issue 16's hostile links: the largest machine a link may carry (4096 CPUs in one
# LLC), and a machine whose one CPU sits on NUMA node 65535 (refused by core's machine
# build before it sizes anything: node ids past MAX_NUMNODES, 1024).
BIG_MACHINE = {"machine": {"name": "m", "arch": "x86", "packages": 1, "cores_per_llc": 4096},
               "patches": "6.8"}
# 1024 NUMA nodes of one CPU, all at distance 20: every CPU's NUMA domain has 1024
# overlapping groups (5-7 s to open before session 32 stored equal groups once).
NODES_1024 = {"machine": {"name": "m", "arch": "x86", "packages": 1024, "cores_per_llc": 1},
              "patches": "6.8"}
NODE_65535 = {"machine": {"name": "m", "arch": "x86", "cpus": [{"cpu": 0, "node": 65535}]},
              "patches": "6.8"}


def hostile_links(page, cfg):
    """Links that once froze the tab: each opens in a fresh page to a working page or a
    clear message, quickly (target 3 s, checked at 5 s), and the tab answers a click."""
    for name, scenario, want, n_cpus in [
        ("4096 CPUs", BIG_MACHINE, None, 4096),
        ("4096 CPUs, wake-up tab comparing 6.6", dict(BIG_MACHINE, view="wakeup",
                                                      wake={"compare": "6.6"}), None, 4096),
        ("1024 NUMA nodes at one distance", NODES_1024, None, 1024),
        ("node 65535", NODE_65535, "at most 1024 NUMA nodes", 0),
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
            check(not banner and cpus == n_cpus,
                  f"{name}: the machine opens and is drawn (got {cpus} CPUs, banner {banner})")
        # The target is 3 s (issue 16; measured 1.2-2.0 s on a quiet 2-core machine);
        # the check allows 5 s, stretched by how oversubscribed the machine is (a CI run
        # beside other builds at load 8 on 2 cores took 5.1 s), and prints both.
        limit = 5.0 * busy_factor()
        check(opened < limit, f"{name}: the page is up within {limit:.1f} s "
                              f"(took {opened:.2f} s)")
        t1 = time.monotonic()
        page.click(".tabs button:nth-child(2)")
        pre = page.wait_for("pre.dmesg", timeout=30)
        took = time.monotonic() - t1
        limit = 3.0 * busy_factor()
        check(pre and took < limit, f"{name}: a click on the dmesg tab is answered within "
                                    f"{limit:.1f} s (took {took:.2f} s)")


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
    for m in ("schedlab-web", "schedlab-import", "schedlab-worker"):
        f = glob.glob(f"dist/pkg-*/{m}_bg.wasm")
        sizes[m] = f and [os.path.getsize(f[0] + ext) for ext in ("", ".br", ".gz")]
        note(f"{m}: {sizes[m]} bytes (raw, brotli, gzip)")
    check(sizes["schedlab-worker"] and os.path.dirname(glob.glob("dist/pkg-*/schedlab-worker_bg.wasm")[0])
          == os.path.dirname(raw[0]), f"the workers' module is beside the page's ({sizes})")
    with open("web/page-wasm-budget") as f:
        budget = int(next(line for line in f if not line.startswith("#")))
    check(sizes["schedlab-web"] and sizes["schedlab-web"][1] <= budget,
          f"the page's module is within web/page-wasm-budget, {budget} bytes brotli (got {sizes['schedlab-web']})")
    check(sizes["schedlab-import"] and os.path.dirname(glob.glob("dist/pkg-*/schedlab-import_bg.wasm")[0])
          == os.path.dirname(raw[0]) and all(os.path.exists(glob.glob("dist/pkg-*/schedlab-import.js")[0] + e)
                                             for e in (".br", ".gz")),
          f"the machine reader's module is beside the page's, precompressed ({sizes})")
    boot_js = open("dist/static/boot.js").read()
    check(re.search(r'"\.\./pkg-[0-9a-f]+/schedlab-import\.js"', boot_js) is not None,
          "static/boot.js imports the machine reader from the content-named directory")
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


def wakeup_inputs_refused(page, cfg):
    """The wake-up's number fields refuse a value out of range aloud, with the field's
    name and range, show the value in use again, and keep the decisions shown."""
    page.open(fragment(TEACHING))
    page.wait_for('.decision[data-side="b"] .chosen-cpu')
    value = lambda css: page.js("return document.querySelector(arguments[0]).value", css)  # noqa: E731
    link, pct = page.hash, value("#busy-pct")
    for css, typed, want, shown in [
        ("#busy-pct", "-3", 'busy %: "-3" is not a whole number from 0 to 100', pct),
        ("#busy-pct", "101", 'busy %: "101" is not a whole number from 0 to 100', pct),
        ("#nr-idle-scan", "-1", 'nr_idle_scan: "-1" is not a whole number from 0 to 32, or empty for derived', "8"),
        ("#nr-idle-scan", "2.5", 'nr_idle_scan: "2.5" is not a whole number from 0 to 32', "8"),
        ("#nr-idle-scan", "999", "nr_idle_scan: 999 is more than the waker's LLC holds: a whole number from 0 to 32", "8"),
    ]:
        page.set_input(css, typed)
        err = page.wait_for(".wake-input-error", timeout=5, pred=lambda t: typed in t[0])
        back = page.until(lambda: value(css) == shown, timeout=5)
        decisions = page.texts(".decision .chosen-cpu")
        check(err and want in err[0] and back and len(decisions) == 2 and page.hash == link,
              f"{css} {typed!r} is refused aloud, the field shows {shown!r} again, both decisions "
              f"and the link stay (error {err}, field {value(css)!r}, decisions {decisions})")
    page.js("window.scrollTo(0, document.querySelector('.wake-input-error').getBoundingClientRect().top - 200)")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-wake-inputs.png"))
    # A value in range is taken and the message goes.
    page.set_input("#nr-idle-scan", "4")
    gone = page.until(lambda: not page.count(".wake-input-error") and page.hash != link, timeout=5)
    check(gone, f"a value in range is taken and clears the message (errors {page.texts('.wake-input-error')})")


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
    page.click('.probe-numbers [role=radio][data-side="b"]')
    page.until(lambda: page.count('.probe-numbers [data-side="b"][aria-checked="true"]') == 1, timeout=10)
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
    check(page.count('.probe-numbers [data-side="b"][aria-checked="true"]') == 1,
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
