"""Journeys of the embed: the page in an iframe at each size the Share menu offers,
and a simulation's embed laid out for a slide."""

import os
import shutil
import subprocess
import sys
import tempfile
import time

from selenium.webdriver.common.by import By

from harness import (
    BROKEN_JOINS,
    SIMULATE,
    TEACHING,
    VIEWPORT,
    axe_violations,
    check,
    fragment,
    set_viewport,
)
from simulate import WATCH_STATUS


def embed(page, cfg):
    """The embed view in an iframe of each size the Share menu offers: the chosen view
    under a one-line header with an "open in schedlab" link, no pickers or tab bar, and
    the frame's page itself never scrolls; a simulation's at the default size shows its
    chart and both live drawings whole, and its Run again reruns it; in a phone's
    frame the title is whole, nothing is wider than the frame and controls are 44 px."""
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


# A domains embed whose link compares v6.8 with v6.6's dmesg lines.
DOMAINS_EMBED = {"machine": "kunpeng920-6426", "patches": "6.8",
                 "ui": {"diff_with": "6.6", "diff_text": "dmesg"}}


def embed_in(page, cfg, hostdir, host_url):
    for scenario, view, sizes in ((TEACHING, "wake-up", ((640, 360), (800, 450), (1280, 720))),
                                  (DOMAINS_EMBED, "domains", ((800, 450), (1280, 720)))):
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
                    " title: document.querySelector('.embed-title')?.textContent,"
                    " tabs: document.querySelectorAll('[role=tab]').length,"
                    " pickers: document.querySelectorAll('#preset, #release').length,"
                    " examples: [...document.querySelectorAll('#wake-example, #sim-example')]"
                    "   .filter(e => e.checkVisibility()).length,"
                    " sw: d.scrollWidth, sh: d.scrollHeight, iw: innerWidth, ih: innerHeight,"
                    " panel: (r => [r.left, r.top, r.right, r.bottom])(document.querySelector("
                    "   '.embed-main > .domain-panel').getBoundingClientRect()),"
                    " chosen: [...document.querySelectorAll('.decision .chosen-cpu')].map(e =>"
                    "   (r => [r.left, r.top, r.right, r.bottom])(e.getBoundingClientRect())),"
                    " cpu: document.querySelector('button.cpu')?.getBoundingClientRect().width,"
                    " hints: [...document.querySelectorAll('.hint')].filter(e => e.checkVisibility())"
                    "   .map(e => e.textContent),"
                    " diff: [...document.querySelectorAll('.domain-diff select')].filter(e => e.checkVisibility()).length,"
                    " fixed: [...document.querySelectorAll('.diff-fixed')].filter(e => e.checkVisibility())"
                    "   .map(e => e.textContent),"
                    " heads: [...document.querySelectorAll('.line-diff th')].map(e => e.textContent)}")
                found["axe"] = axe_violations(page) if w == 800 else []
                # The compared dmesg lines broke "span=20-23" after its hyphen at
                # 1280x720 (session 40).
                broken = page.js(BROKEN_JOINS, ".trace" if view == "wake-up" else ".line-diff")
            finally:
                page.driver.switch_to.default_content()
            # A slide shows the scenario shared, not a menu of others above it.
            check(found["examples"] == 0,
                  f"{view} at {w}x{h}: no examples menu in the embed ({found})")
            check(found["open"] and found["tabs"] == 0 and found["pickers"] == 0,
                  f"{view} at {w}x{h}: the embed header and view only ({found})")
            check(found["axe"] == [], f"{view} at {w}x{h}: axe finds no violation ({found['axe']})")
            # "Click a level to shade its span in the machine drawing." under a domains
            # embed, which has no drawing (session 39).
            check(not any("machine drawing" in t for t in found["hints"]),
                  f"{view} at {w}x{h}: no hint points at a drawing the embed does not show ({found['hints']})")
            check(found["sw"] <= found["iw"] and found["sh"] <= found["ih"],
                  f"{view} at {w}x{h}: the frame's page does not scroll ({found})")
            # A domains embed names its CPU: the view's heading is read, not drawn, and
            # the header said "kunpeng920-6426 · v6.8" (session 39).
            want = "v6.6 against v6.6+cluster" if view == "wake-up" else "· CPU 0 · v6.8"
            check(found["title"] and found["title"].endswith(want),
                  f"{view} at {w}x{h}: the header names the kernels shown, {want!r} "
                  f"(got {found['title']!r})")
            if view == "domains":
                # It showed its "Compare kernels" pickers, the one input left in an embed
                # (session 40): the link's comparison stays, named in a line.
                check(found["diff"] == 0 and found["fixed"] == ["v6.8 with v6.6, as dmesg (sched_domain_debug)."]
                      and found["heads"][1:] == ["v6.8", "v6.6"],
                      f"domains at {w}x{h}: the comparison is the link's, named, without its pickers "
                      f"(pickers shown {found['diff']}, line {found['fixed']}, columns {found['heads']})")
            if view == "wake-up":
                # A slide's frame, as narrow as a phone's at 640: both decisions (A's and
                # B's chosen CPU) in the panel without scrolling, CPUs not the phone's
                # 40 px squares (at 640×360 they were, and only A's decision showed).
                px, py, pr, pb = found["panel"]
                seen = [c for c in found["chosen"] if c[0] >= px and c[2] <= pr and c[1] >= py and c[3] <= pb]
                check(len(found["chosen"]) == 2 and len(seen) == 2 and found["cpu"] < 40,
                      f"wake-up at {w}x{h}: both decisions are in view without scrolling, "
                      f"CPUs under 40 px ({found['chosen']} in {found['panel']}, CPU {found['cpu']} px)")
            # "sd_llc_shared-" over ">nr_idle_scan", "cluster 0-" over "3" at 1280x720
            # (session 39).
            check(broken == [], f"{view} at {w}x{h}: no arrow or CPU range of the trace or the "
                                f"compared text is broken across lines (broken: {broken})")
            if view == "wake-up" and w in (640, 800):
                page.screenshot(cfg["shot_epyc"].replace(".png", "-embed.png" if w == 800 else f"-embed-{w}.png"))
    for machine in ("kunpeng920-6426", "epyc9654-1p"):
        embed_simulation(page, cfg, hostdir, host_url, machine)
    embed_phone(page, cfg, hostdir, host_url)


# The embed on a phone: its title cut or not, the page's width, the results' and the
# decisions' right edges, and the controls under 44 px (CPUs and glossary terms: 40 px,
# as on the page).
PHONE_MEASURE = """
  const t = document.querySelector('.embed-title'), d = document.documentElement;
  const small = (sel, px) => [...document.querySelectorAll(sel)].filter(e => {
    const r = e.getBoundingClientRect();
    return e.checkVisibility() && r.width > 0 && Math.min(r.width, r.height) < px; })
    .map(e => e.tagName + ' ' + e.textContent.trim().slice(0, 16) + ' ' + Math.round(e.getBoundingClientRect().height));
  return {cut: t.scrollWidth > t.clientWidth + 1 || t.getBoundingClientRect().right > innerWidth,
    title: t.textContent, sw: d.scrollWidth, iw: innerWidth,
    right: Math.max(...[...document.querySelectorAll('.decision, .sim-chart, .live-canvas, .domain')]
      .filter(e => e.checkVisibility()).map(e => e.getBoundingClientRect().right), 0),
    small: small('button:not(.cpu, .gloss-btn), select, summary, .embed-header a', 44)
      .concat(small('button.cpu, button.gloss-btn', 40))};"""


def embed_phone(page, cfg, hostdir, host_url):
    """The embed in a phone's frame, 390x760 (a doc read on a phone): the title whole
    (it was cut to "kunpeng920-64..."), nothing wider than the frame (the decisions and
    the trace were cut side by side with the drawing), every control 44 px to tap
    (CPUs and glossary terms 40 px; they were 15-33 px), and axe finds no violation."""
    w, h = 390, 760
    for name, scenario, ready in (("wake-up", TEACHING, '.decision[data-side="b"] .chosen-cpu'),
                                  ("simulation", SIMULATE, ".sim-status.done"),
                                  ("domains", DOMAINS_EMBED, ".level-name")):
        src = page.url + "?embed#" + fragment(scenario)
        with open(os.path.join(hostdir, f"phone-{name}.html"), "w") as f:
            f.write(f'<!doctype html><title>host</title><body style="margin:8px"><iframe src="{src}"'
                    f' width="{w}" height="{h}" title="schedlab" style="border:0"></iframe></body>')
        page.driver.get(f"{host_url}phone-{name}.html")
        page.driver.switch_to.frame(page.driver.find_element(By.TAG_NAME, "iframe"))
        try:
            page.wait_for(ready, timeout=180)
            time.sleep(0.5)
            m = page.js(PHONE_MEASURE)
            found = axe_violations(page)
            # The change line broke "+9.31% for" over "B (higher is better)" (session 40).
            broken = page.js(BROKEN_JOINS, ".change") if name == "simulation" else []
            page.screenshot(cfg["shot_epyc"].replace(".png", f"-embed-phone-{name}.png"))
        finally:
            page.driver.switch_to.default_content()
        check(not m["cut"] and m["sw"] <= m["iw"] and m["right"] <= m["iw"],
              f"{name} embed at {w}x{h}: the title is whole and nothing is wider than the frame "
              f"(title {m['title']!r} cut {m['cut']}; page {m['sw']} px, widest part's right "
              f"{m['right']:.0f} of {m['iw']})")
        check(m["small"] == [], f"{name} embed at {w}x{h}: every control is 44 px to tap, "
                                f"CPUs and terms 40 (smaller: {m['small'][:5]})")
        check(found == [], f"{name} embed at {w}x{h}: axe finds no violation ({found})")
        check(broken == [], f"{name} embed at {w}x{h}: no join broken over two lines ({broken})")


# The embed's measures: the panel's visible box, its scroll, the chart's and the live
# canvases' boxes, the Run again button's, the status line's text size.
EMBED_MEASURE = """
  const panel = document.querySelector('.embed-main > .domain-panel');
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const d = document.documentElement, status = document.querySelector('.sim-status');
  return {panel: box(panel), scroll: panel.scrollTop,
    parts: [...document.querySelectorAll('.sim-chart, .live-canvas')].map(box),
    again: [...document.querySelectorAll('#sim-again')].filter(e => e.checkVisibility()).map(box),
    font: status ? parseFloat(getComputedStyle(status).fontSize) : 0,
    sw: d.scrollWidth, sh: d.scrollHeight, iw: innerWidth, ih: innerHeight};"""


def embed_simulation(page, cfg, hostdir, host_url, machine):
    """A simulation's embed at the Share menu's default size: the chart and both
    machines, live, are whole without scrolling; Run again is there and restarts the
    run (its status goes back to running, then done); the status is slide-sized."""
    w, h = 1280, 720
    scenario = dict(SIMULATE, machine=machine, sim=dict(SIMULATE["sim"], cpus="0-15"))
    src = page.url + "?embed#" + fragment(scenario)
    with open(os.path.join(hostdir, f"sim-{machine}.html"), "w") as f:
        f.write(f'<!doctype html><title>host</title><body style="margin:8px"><iframe src="{src}"'
                f' width="{w}" height="{h}" title="simulation" style="border:0"></iframe></body>')
    set_viewport(page, w + 40, h + 40)
    page.driver.get(f"{host_url}sim-{machine}.html")
    page.driver.switch_to.frame(page.driver.find_element(By.TAG_NAME, "iframe"))
    try:
        page.wait_for(".sim-status.done", timeout=180)
        time.sleep(0.5)  # the live view sizes its canvases on the next frame
        m = page.js(EMBED_MEASURE)
        px, py, pr, pb = m["panel"]
        whole = [b for b in m["parts"] if b[0] >= px and b[2] <= pr and b[1] >= py and b[3] <= pb]
        check(len(m["parts"]) == 3 and len(whole) == 3 and m["scroll"] == 0
              and m["sw"] <= m["iw"] and m["sh"] <= m["ih"],
              f"{machine} at {w}x{h}: the chart and both live drawings are whole in the embed, "
              f"nothing scrolled ({m})")
        check(m["again"] and m["font"] >= 17,
              f"{machine}: Run again is shown, and the status is slide-sized "
              f"({m['font']} px; {m['again']})")
        page.screenshot(cfg["shot_epyc"].replace(".png", f"-embed-sim-{machine}.png"))
        found = axe_violations(page)
        check(found == [], f"{machine}: axe finds no violation in the simulation's embed ({found})")
        if machine == "kunpeng920-6426":
            before = page.texts('.digest')
            page.js(WATCH_STATUS)
            page.click("#sim-again")
            page.wait_for(".sim-status.running", timeout=10)
            page.wait_for(".sim-status.done", timeout=180)
            said = [c for c, _, _ in page.js("return window.__said")]
            went = [c.split()[-1] for i, c in enumerate(said) if i == 0 or c != said[i - 1]]
            check(went[-2:] == ["running", "done"] and "done" in went[:1],
                  f"Run again restarts the run: its status goes from done to running to done "
                  f"(classes {went})")
            check(page.texts('.digest') == before and before,
                  f"and runs the same simulation again (digests {before})")
    finally:
        page.driver.switch_to.default_content()
        set_viewport(page, *VIEWPORT)


def embed_bad_link(page, cfg):
    """A damaged link in an embed: the frame says why and shows the default view, and
    its advice is one a reader of the slide or doc can follow (a frame has no address
    bar to fix the link in)."""
    page.driver.get("about:blank")
    page.driver.get(page.url + "?embed#v2:garbage")
    banner = page.wait_for(".banner")
    page.wait_for(".level-name")
    check(banner and "could not be opened" in banner[0] and "address bar" not in banner[0]
          and "Share menu" in banner[0],
          f"the embed's banner says why and who can fix it, not the address bar (got {banner})")
