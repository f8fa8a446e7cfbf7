"""Journeys of what leaves the page: share links and presentation mode (the embed is
in embed.py), the machine designer, the CSV/JSON/SVG/PNG export and the domain diff."""

import shutil
import tempfile
import time

from selenium.webdriver.common.by import By

from harness import (
    DARK_BG,
    MOBILE,
    Page,
    SIMULATE,
    SMALL_TARGETS,
    TEACHING,
    VIEWPORT,
    axe_violations,
    busy_factor,
    check,
    cli_bytes,
    decoded_hash,
    download,
    emulated_scheme,
    fragment,
    note,
    page_background,
    set_viewport,
    start_browser,
    window_frame,
    without_wall,
)


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
    check(snippet.startswith("<iframe src=\"") and "?embed#v2:" in snippet
          and 'width="1280" height="720"' in snippet,
          f"the snippet embeds the embed view at 1280x720 by default, where a simulation's "
          f"chart and drawings are whole (embed checks) ({snippet[:90]!r}...)")
    check(md.endswith("(" + link + ")"), f"the Markdown links the same address ({md[:60]!r}...)")
    # A slide's link text and the iframe's title name both kernels compared, not A alone.
    check("v6.6 against v6.6+cluster" in md and 'against v6.6+cluster"' in snippet.split("title=")[1][:120],
          f"the Markdown and the snippet's title name both sides ({md[:70]!r}...)")
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
    # A projector's 1024 px: the bar is as wide as its contents (left: 50% left it half
    # the screen, the keys' words on three lines and "Fullscreen" out of its button).
    size = page.driver.get_window_size()
    try:
        # Only the width matters here (the height a headless window gets varies).
        page.driver.set_window_size(1024 + window_frame(page.driver)[0], size["height"])
        page.until(lambda: page.js("return innerWidth") == 1024, timeout=5)
        fit = page.js("""
            const bar = document.querySelector('.present-bar');
            const over = [...bar.querySelectorAll('button')]
              .filter(b => b.scrollWidth > b.clientWidth + 1).map(b => b.textContent);
            const r = document.createRange(); r.selectNodeContents(bar.querySelector('.present-keys'));
            const lines = new Set([...r.getClientRects()].map(x => Math.round(x.top))).size;
            return [over, lines];""")
        check(fit == [[], 1], f"1024 px: the presentation bar's buttons hold their words and its "
                              f"keys are one line (overflowing {fit[0]}, {fit[1]} lines)")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-present-1024.png"))
    finally:
        page.driver.set_window_size(size["width"], size["height"])
    page.click("#present-toggle")


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
    # And its smallest: one CPU is counted as one ("1 CPU", not "1 CPUs").
    for k in ("sockets", "nodes", "llcs", "clusters", "cores", "threads"):
        type_into(page, f"#designer-{k}", "1")
    total = page.wait_for("#designer-total", pred=lambda t: "1 CPU," in t[0], timeout=30)
    check(total and "In use: 1 CPU, 1 NUMA node" in total[0],
          f"one CPU is said in the singular (got {total})")


def custom_import(page, cfg):
    """The custom-machine form's reader is a module of its own (web/src/machine_import.rs),
    fetched the first time Load is pressed: a first visit and the open form do not fetch
    it; a failed fetch says so and keeps the machine, and the next Load fetches it; a bad
    paste shows core's error; a good one loads the machine."""
    def fetched():
        return page.js("return performance.getEntriesByType('resource')"
                       ".filter(e => e.name.includes('schedlab-import')).length")

    def paste(text):
        page.js("const t = document.querySelector('#custom-text'); t.value = arguments[0];"
                "t.dispatchEvent(new Event('input', {bubbles: true}));", text)

    page.open()
    page.wait_for("button.cpu")
    before = page.count("button.cpu")
    machine = page.js("return document.querySelector('#preset').value")
    check(fetched() == 0, "a first visit does not fetch the machine reader's module")
    page.select("#preset", "custom")
    page.wait_for("#custom-text")
    check(fetched() == 0, "opening the custom-machine form does not fetch it either")
    with open("core/tests/fixtures/kvm_2vcpu_lscpu_p.txt", encoding="utf-8") as f:
        kvm = f.read()
    paste(kvm)
    drv = page.driver
    drv.execute_cdp_cmd("Network.enable", {})
    drv.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*schedlab-import*"]})
    try:
        page.click("#custom-load")
        err = page.wait_for(".custom-error", pred=lambda t: "could not be loaded" in t[0])
        check(err and "keeps its current machine" in err[0] and page.count("button.cpu") == before,
              f"a failed fetch of the reader says so and keeps the machine (got {err}, "
              f"{page.count('button.cpu')} of {before} CPUs)")
        check(page.js("return document.querySelector('#custom-text').value") == kvm,
              "the pasted text stays in the form after the failed fetch")
    finally:
        drv.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    paste("this is not lscpu")
    page.click("#custom-load")
    err = page.wait_for(".custom-error", pred=lambda t: "could not be loaded" not in t[0])
    check(err and "could not be loaded" not in err[0] and page.count("button.cpu") == before,
          f"with the reader fetched, a bad paste shows core's error and keeps the machine (got {err})")
    picked = page.js("return document.querySelector('#preset').value")
    check(picked == machine, f"after the bad paste the machine picker names the machine in use, "
                             f"{machine}, not Custom… (got {picked})")
    role = page.js("return document.querySelector('.custom-error').getAttribute('role')")
    check(role == "alert", f"the error is announced to screen readers: role=alert (got {role})")
    # A JSON machine's wrong value and an lscpu row's CPU number past the limit are
    # said in words: the field or the line, what it must be (not serde's "expected
    # u32", not "the machine has 100000 CPUs").
    paste('{"name": "x", "arch": "x86", "packages": "2"}')
    page.click("#custom-load")
    err = page.wait_for(".custom-error", pred=lambda t: "packages" in t[0])
    check(err and 'the field `packages` must be a whole number from 0 to 4294967295, found "2"'
          in err[0] and "expected u32" not in err[0],
          f"a JSON machine's wrong value is said in words (got {err})")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-custom-bad-json.png"))
    paste("CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE\n  0    0      0    0 0:0:0:0          yes\n"
          "99999    0      0    1 1:1:1:0          yes\n")
    page.click("#custom-load")
    err = page.wait_for(".custom-error", pred=lambda t: "99999" in t[0])
    check(err and "line 3: CPU 99999 is past schedlab's limit" in err[0] and "0 to 4095" in err[0]
          and "100000" not in err[0],
          f"an lscpu row's CPU number past the limit names the line and the limit (got {err})")
    check(page.count("button.cpu") == before and page.js(
        "return document.querySelector('#custom-text').value").startswith("CPU NODE"),
          "after a refused paste the machine and the pasted text stay")
    paste(kvm)
    page.click("#custom-load")
    got = page.wait_count("button.cpu", 2)
    check(got == 2 and page.count(".custom-error") == 0,
          f"a 2-vCPU KVM guest's `lscpu -p` loads its 2 CPUs (got {got})")
    picked = page.js("const s = document.querySelector('#preset'); return [s.value, s.selectedOptions[0].textContent]")
    check(picked[0] == "custom" and picked[1].startswith("custom: "),
          f"a good paste switches the picker to the custom machine (got {picked})")
    check(page.js("return document.querySelector('#custom-load').textContent") == "Load",
          "the Load button is back from Reading…")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-custom-import.png"))



def custom_big_paste(page, cfg):
    """A pasted 1024-node machine (`lscpu -p`, then `numactl -H` with its 1024 x 1024
    distances) loads, and with the form still open the page answers a click at once:
    the machine's JSON (10 MB written out) is made only when its fold is opened. It
    was made at every render, which took 20 s a click (session 32)."""
    n = 1024
    lscpu = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n" + "".join(
        f"{i},{i},0,{i},,{i},{i},{i},{i}\n" for i in range(n))
    numactl = (f"available: {n} nodes (0-{n - 1})\n"
               + "".join(f"node {i} cpus: {i}\n" for i in range(n))
               + "node distances:\nnode " + " ".join(map(str, range(n))) + "\n"
               + "".join(f"{i}: " + " ".join("10" if j == i else "20" for j in range(n)) + "\n"
                         for i in range(n)))
    page.open()
    page.wait_for("button.cpu")
    page.select("#preset", "custom")
    page.wait_for("#custom-text")
    page.js("const t = document.querySelector('#custom-text'); t.value = arguments[0];"
            "t.dispatchEvent(new Event('input', {bubbles: true}));", lscpu + "\n" + numactl)
    t0 = time.monotonic()
    page.click("#custom-load")
    got = page.wait_count("button.cpu", n, timeout=180)
    took = time.monotonic() - t0
    note(f"a 1024-node paste loaded in {took:.2f} s")
    limit = 10.0 * busy_factor()
    check(got == n and took < limit,
          f"the 1024-node paste loads its {n} CPUs within {limit:.1f} s (got {got} in {took:.2f} s)")
    for cpu in ("5", "6"):
        t0 = time.monotonic()
        page.click(f'button.cpu[data-cpu="{cpu}"]')
        page.until(lambda: page.attrs("button.selected", "data-cpu") == [cpu], timeout=120)
        took = time.monotonic() - t0
        limit = 3.0 * busy_factor()
        check(page.count("#custom-text") == 1 and took < limit,
              f"with the form open, a click on CPU {cpu} is answered within {limit:.1f} s "
              f"(took {took:.2f} s)")
    page.click(".custom-json summary")
    text = page.until(lambda: page.js(
        "return document.querySelector('#custom-json-text').value").startswith("{"), timeout=60)
    head = page.js("return document.querySelector('#custom-json-text').value.slice(0, 4000)")
    check(text and '"nodes_per_package": 1024' in head,
          f"opening the fold shows the machine's JSON (got {head[:120]!r})")

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
    # The live view plays on above the buttons: its status line and its list of the
    # latest wake-ups change, and the buttons must not move under the pointer (a click
    # mid-move lands elsewhere). Their top, every 10 ms for 2.5 s from the run's end.
    tops = page.driver.execute_async_script(
        "const cb = arguments[arguments.length - 1], tops = [], t0 = performance.now();"
        "const f = () => { const e = document.querySelector('[data-export=\"ab-csv\"]');"
        " tops.push(e ? Math.round(e.getBoundingClientRect().top + scrollY) : -1);"
        " if (performance.now() - t0 < 2500) setTimeout(f, 10); else cb(tops); }; f();")
    playing = page.js("return document.querySelector('#live-play').textContent")
    check(len(set(tops)) == 1 and playing == "Pause",
          f"the download buttons stay put while the live view plays above them "
          f"(tops {sorted(set(tops))} px over {len(tops)} samples; the live view's button says {playing!r})")
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
    # The page hides plotters' legend (the list above the chart is the page's); the
    # file, which has no page around it, keeps it.
    texts = [" ".join(t.itertext()).strip() for t in root.iter("{http://www.w3.org/2000/svg}text")] \
        if root is not None else []
    keys = [t for t in texts if "95% interval" in t]
    hidden = b"display: none" in svg or b"display:none" in svg
    check(len(keys) == 2 and not hidden,
          f"the saved SVG names its lines and bands in its own legend (got {keys}, hidden {hidden})")
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
