"""Journeys of access: axe-core at 0 violations, the keyboard, the dark scheme, a
390 px phone and the 1280x720 laptop layout."""

import time

from harness import (
    BROKEN_JOINS,
    BROKEN_WORDS,
    DARK_BG,
    LIGHT_BG,
    LONE_KEYS,
    MISALIGNED_FIELDS,
    MOBILE,
    OUT_OF_BOX,
    OUT_OF_VIEWPORT,
    SIMULATE,
    SMALL_TARGETS,
    SMALLEST_SVG_TEXT,
    SUBTITLE_WRAP,
    SVG_TEXT_CUT,
    TEACHING,
    VIEWPORT,
    WRAPPED_TEXT,
    axe_violations,
    check,
    emulated_scheme,
    fragment,
    page_background,
    set_viewport,
)


def axe_simulate_and_custom(page, label):
    """axe on the Simulate tab with results, then on the custom-machine form; `label`
    says which theme the checks ran in."""
    page.open(fragment(SIMULATE))
    page.wait_for(".sim-status.done", timeout=180)
    found = axe_violations(page)
    check(found == [], f"{label}: no violations on the Simulate tab with results (got {found})")
    page.select("#preset", "custom")
    page.wait_for("textarea")
    found = axe_violations(page)
    check(found == [], f"{label}: no violations on the custom-machine form (got {found})")


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
    axe_simulate_and_custom(page, "axe")
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
        axe_simulate_and_custom(page, "axe, dark")


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


def theme_properties(page):
    """Every custom property static/css/00-colours.css sets on :root, as the page resolves it."""
    return page.js("""
        const names = new Set();
        for (const sheet of document.styleSheets) for (const r of sheet.cssRules)
          if (r.selectorText === ':root') for (const n of r.style) if (n.startsWith('--')) names.add(n);
        const cs = getComputedStyle(document.documentElement);
        return Object.fromEntries([...names].sort().map(n => [n, cs.getPropertyValue(n).trim()]));""")


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
    page.click('.probe-numbers [role=radio][data-side="b"]')
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


# The digests shown in the results table broken other than at their middle, as [[digest,
# characters per line]]: a 16-digit one takes one line or two of 8.
DIGESTS_SPLIT = """
    const out = [];
    for (const c of document.querySelectorAll('.sim-results code.digest')) {
      if (!c.checkVisibility()) continue;
      const tops = [];
      const walk = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode())
        for (let i = 0; i < n.data.length; i++) {
          const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1);
          const x = [...r.getClientRects()].find(x => x.width > 0);
          if (x) tops.push(Math.round(x.top));
        }
      const lines = [];
      tops.forEach((t, i) => { if (i === 0 || t !== tops[i - 1]) lines.push(0); lines[lines.length - 1] += 1; });
      const n = tops.length;
      if (!(lines.length === 1 || (lines.length === 2 && lines[0] === Math.floor(n / 2))))
        out.push([c.textContent, lines]);
    }
    return out;"""


# The text of every visible results-table cell holding a number (not a change with its
# interval, which may wrap at its spaces, nor a digest) whose text takes more than one line.
BROKEN_NUMBERS = """
    const out = [];
    for (const td of document.querySelectorAll('.sim-results td:not(.change-cell)')) {
      if (!td.checkVisibility() || td.querySelector('code')) continue;
      const r = document.createRange(); r.selectNodeContents(td);
      if (new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1) out.push(td.textContent);
    }
    return out;"""

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
        click_hint_seen(page, "390x844, the drawing folded", MOBILE[1])
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
        out = page.js(OUT_OF_BOX)
        check(out == [], f"wake-up, A against B: nothing reaches out of its fieldset or panel (got {out[:4]})")
        # Session 39: the key left "prev" alone on its third line; the heading's "·"
        # ended its first line, "select_task_rq_fair() step by step" on the second.
        lone = page.js(LONE_KEYS, ".legend")
        check(lone == [], f"390 px, wake-up: no line of the key holds one key alone (lone: {lone})")
        wrap = page.js(SUBTITLE_WRAP)
        check(wrap == [], f"390 px, wake-up: the heading's subtitle wraps whole, no dot ends a line (got {wrap})")
        broken = page.js(BROKEN_JOINS, ".trace")
        check(broken == [], f"390 px, wake-up: no arrow or CPU range of the traces is broken across lines (broken: {broken})")
        page.js("document.querySelector('.decisions').scrollIntoView()")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-mobile-wakeup.png"))
        page.open(fragment(SIMULATE))
        page.wait_for(".sim-status.done", timeout=180)
        # "the simulator, A against" over "B" (session 39).
        wrap = page.js(SUBTITLE_WRAP)
        check(wrap == [], f"390 px, Simulate: the heading's subtitle wraps whole, no dot ends a line (got {wrap})")
        broken = page.js(BROKEN_JOINS, ".sim-status, .live-status")
        check(broken == [], f"390 px, Simulate: no number of the status lines is on another line than its unit (broken: {broken})")
        fit = page.js("return [document.documentElement.scrollWidth,"
                      " document.querySelector('.sim-chart svg').getBoundingClientRect().right]")
        check(fit[0] <= MOBILE[0] and fit[1] <= MOBILE[0],
              f"Simulate with results: the page and the chart fit the screen (got {fit})")
        small = page.js(SMALL_TARGETS)
        check(small == [], f"Simulate with results: no button or select under 40 px (smaller: {small[:4]})")
        broken = page.js(BROKEN_WORDS, ".sim-results thead code, .sim-cli code")
        check(broken == [], f"Simulate with results: the table's heads and the command lines break "
                            f"between words, not inside one (broken: {broken[:6]})")
        # A digest took 13 characters then 3 ("1c3e190923198" over "a8a").
        split = page.js(DIGESTS_SPLIT)
        digests = page.count(".sim-results code.digest")
        check(digests >= 2 and split == [],
              f"Simulate with results: each digest is whole or broken at its middle "
              f"({digests} digests; broken elsewhere: {split})")
        # The chart is drawn about as wide as its panel on a phone, so its labels keep
        # their 11 px (at 440 units they were 8 px, at 640 5 px); the heat map's A/B
        # switch stays one row (it went one button under the other).
        least = page.js(SMALLEST_SVG_TEXT, ".sim-chart svg")
        ab = page.js("return [...document.querySelectorAll('.heat-focus .seg')].map(b => b.getBoundingClientRect().top)")
        check(11 <= least[0] < 1000 and len(ab) == 2 and ab[0] == ab[1],
              f"Simulate on a phone: the chart's text is drawn at least 11 px and A/B for the "
              f"shading sit side by side (smallest text {least}, switch tops {ab})")
        cut = page.js(SVG_TEXT_CUT, ".sim-chart svg")
        check(cut == [], f"Simulate on a phone: no text of the chart is cut at its edges (cut: {cut})")
        page.js("document.querySelector('.sim-chart').scrollIntoView()")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-mobile-simulate.png"))
        # Seed 01's tbench table (3 seeds, intervals, the published column): a number
        # never breaks across lines (1066 read as 106 over 6 when cells broke anywhere).
        page.select("#sim-example", "seed01-tbench")
        page.wait_for(".sim-status.done", timeout=300, pred=lambda t: "42 simulations" in t[0])
        broken = page.js(BROKEN_NUMBERS)
        check(page.count(".sweep-table td.published") == 7 and broken == [],
              f"390 px, seed 01's sweep table: no number breaks across lines (broken: {broken[:6]})")
        least = page.js(SMALLEST_SVG_TEXT, ".sim-chart svg")
        check(11 <= least[0] < 1000,
              f"390 px, seed 01's sweep chart (7 scales, published points): its text is drawn "
              f"at least 11 px (smallest {least})")
        caps = page.texts(".live-side figcaption")
        check(caps == ["A: 6.6 (128 clients, seed 1)", "B: 6.6+cluster (128 clients, seed 1)"],
              f"the live view says which of the sweep's runs it plays (got {caps})")
        page.js("document.querySelector('.sweep-table').scrollIntoView()")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-mobile-sweep.png"))
        page.open()
        page.wait_for(".level-name")
        # A lesson's glossary terms are 40 px to tap but do not open up its lines: the
        # gap between two lines of a sentence stays a line's height.
        page.click("#lessons-button")
        page.wait_for(".lesson-pick")
        page.click('.lesson-pick[data-lesson="4"]')
        page.wait_for("#lesson-title", pred=lambda t: "step 1 of" in t[0])
        gaps = page.js("""
            const out = [];
            for (const p of document.querySelectorAll('.lesson-panel p')) {
              if (!p.querySelector('.gloss-btn')) continue;
              const r = document.createRange(); r.selectNodeContents(p);
              const tops = [...new Set([...r.getClientRects()].map(x => Math.round(x.bottom)))].sort((a, b) => a - b);
              const cs = getComputedStyle(p);
              const lh = cs.lineHeight === 'normal' ? 1.2 * parseFloat(cs.fontSize) : parseFloat(cs.lineHeight);
              for (let i = 1; i < tops.length; i++) out.push((tops[i] - tops[i - 1]) / lh);
            }
            return out;""")
        check(gaps and max(gaps) < 1.25,
              f"lesson text at 390 px: lines with glossary terms keep their spacing (gaps in line heights {[round(g, 2) for g in gaps][:12]})")
        small = page.js(SMALL_TARGETS)
        check(small == [], f"a lesson open: no button or select under 40 px (smaller: {small[:4]})")
        page.js("document.querySelector('.lesson-panel').scrollIntoView()")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-mobile-lesson.png"))
        page.click(".lesson-close")
        page.wait_count(".lesson-panel", 0, timeout=5)
        page.open()
        page.wait_for(".level-name")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-mobile.png"))
        # A bad paste in the custom-machine form: its error is on the screen the Load
        # button was tapped on (not below it), and the picker names the machine in use.
        machine = page.js("return document.querySelector('#preset').value")
        page.select("#preset", "custom")
        page.wait_for("#custom-text")
        page.js("const t = document.querySelector('#custom-text'); t.value = 'this is not lscpu';"
                "t.dispatchEvent(new Event('input', {bubbles: true}));")
        page.click("#custom-load")
        err = page.wait_for(".custom-error", timeout=30)
        time.sleep(0.5)  # any scroll to it has ended
        box = page.js("const e = document.querySelector('.custom-error'), r = e.getBoundingClientRect();"
                      " return [r.top, r.bottom, innerHeight, e.getAttribute('role')]")
        check(err and box[0] >= 0 and box[1] <= box[2] and box[3] == "alert",
              f"390 px, a bad paste: its error is within the screen and announced "
              f"(top {box[0]:.0f}, bottom {box[1]:.0f} of {box[2]} px, role {box[3]})")
        picked = page.js("return document.querySelector('#preset').value")
        check(picked == machine, f"390 px, a bad paste: the machine picker still names the machine "
                                 f"in use, {machine} (got {picked})")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-mobile-custom-error.png"))
    finally:
        set_viewport(page, *VIEWPORT)
    page.open()
    page.wait_for(".level-name")
    opened = page.js("return document.querySelector('details.machine-fold').open")
    width = page.js("return innerWidth")
    check(opened and width == VIEWPORT[0],
          f"back at {VIEWPORT[0]} px the drawing is open (open {opened}, {width} px)")


def drawing_follows_width(page, cfg):
    """The machine drawing follows the window's width live: opened at 1366 px it is
    open; narrowed to 390 px it folds (the page no wider than the screen); a resize
    that stays narrow leaves a drawing the user opened open; widened, it opens."""
    fold = "return document.querySelector('details.machine-fold').open"
    try:
        set_viewport(page, 1366, 900)
        page.open()
        page.wait_for(".level-name")
        check(page.js(fold), "at 1366 px the drawing is open")
        set_viewport(page, *MOBILE)
        folded = page.until(lambda: not page.js(fold), timeout=5)
        width = page.js("return [innerWidth, document.documentElement.scrollWidth]")
        check(folded and width[0] == MOBILE[0] and width[1] <= width[0],
              f"narrowed to {MOBILE[0]} px it folds, and nothing overflows (folded {folded}; viewport, page {width} px)")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-resized-390.png"))
        page.click("details.machine-fold > summary")
        page.until(lambda: page.js(fold), timeout=5)
        set_viewport(page, MOBILE[0] + 40, MOBILE[1])
        time.sleep(0.3)
        opened = page.js(fold)
        width = page.js("return [innerWidth, document.documentElement.scrollWidth]")
        check(opened and width[0] == MOBILE[0] + 40 and width[1] <= width[0],
              f"opened by hand, a resize that stays narrow keeps it open and in the screen "
              f"(open {opened}; viewport, page {width} px)")
        set_viewport(page, *MOBILE)
        page.js("document.querySelector('details.machine-fold').open = false")
        set_viewport(page, 1366, 900)
        opened = page.until(lambda: page.js(fold), timeout=5)
        width = page.js("return innerWidth")
        check(opened and width == 1366, f"widened back to 1366 px it opens (open {opened}, {width} px)")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-resized-1366.png"))
    finally:
        set_viewport(page, *VIEWPORT)


# The machine drawing's geometry: every box or CPU that sticks out of the box around
# it (or, for a package, out of the drawing); how far the drawing scrolls sideways;
# the page's width; per LLC drawn as cluster boxes only, [clusters, clusters in its first
# row, how much of its width that row spans, the width a cluster needs]; the drawing's width;
# and the narrowest CPU drawn.
DRAWING_GEOMETRY = """
    const pk = document.querySelector('.packages'), out = [], rows = [];
    for (const b of pk.querySelectorAll('.box, button.cpu')) {
      const q = (b.parentElement.closest('.box') || pk).getBoundingClientRect();
      const r = b.getBoundingClientRect();
      if (r.left < q.left - 0.5 || r.right > q.right + 0.5)
        out.push(b.className + ' ' + b.textContent.slice(0, 16) + ' ' + Math.round(r.right) + ' > ' + Math.round(q.right));
    }
    for (const llc of pk.querySelectorAll('.box.llc')) {
      const cores = llc.querySelector(':scope > .cores');
      const cl = [...cores.children].filter(e => e.classList.contains('cluster'));
      if (cl.length < 2 || cl.length < cores.children.length) continue;  // bare cores beside
      const top = cl[0].getBoundingClientRect().top;
      const first = cl.filter(e => Math.abs(e.getBoundingClientRect().top - top) < 1);
      const span = first[first.length - 1].getBoundingClientRect().right - cl[0].getBoundingClientRect().left;
      // A cluster's own width, not its column's: its CPUs and gaps, and its box.
      const inner = cl[0].querySelector(':scope > .cores'), kids = [...inner.children];
      const need = kids.reduce((w, k) => w + k.getBoundingClientRect().width, 0)
        + (kids.length - 1) * parseFloat(getComputedStyle(inner).columnGap)
        + cl[0].getBoundingClientRect().width - inner.clientWidth;
      rows.push([cl.length, first.length, span / cores.clientWidth, need]);
    }
    const cpus = [...pk.querySelectorAll('button.cpu')].map(b => b.getBoundingClientRect());
    return {out: out, sideways: pk.scrollWidth - pk.clientWidth, page: document.documentElement.scrollWidth,
            rows: rows, width: pk.clientWidth,
            narrowest: Math.min(...cpus.map(r => Math.min(r.width, r.height)))};"""


def drawing_geometry_checks(page, w, where):
    """The checks every drawing passes: nothing sticks out or scrolls sideways, each
    LLC's first row of clusters spans it, and no LLC keeps its clusters in one column
    where the drawing is wide enough for two of them side by side."""
    g = page.js(DRAWING_GEOMETRY)
    check(g["out"] == [] and g["sideways"] <= 0 and g["page"] <= w,
          f"{where}: every box inside its box, nothing scrolls sideways "
          f"(sticking out {g['out'][:3]}; drawing {g['sideways']} px over; page {g['page']} px)")
    thin = [r for r in g["rows"] if r[1] < r[0] and r[2] < 0.9]
    check(thin == [], f"{where}: each LLC's first row of clusters spans it "
          f"([clusters, in row 1, share of width] short of it: {thin[:3]})")
    # Two columns need two clusters, their gap and the boxes around them (48 px is ample).
    narrow = [[round(x) for x in r[:2] + r[3:]] for r in g["rows"] if r[1] == 1 and 2 * r[3] + 48 <= g["width"]]
    check(narrow == [], f"{where}: no LLC keeps its clusters in one column in a drawing "
          f"{g['width']} px wide ([clusters, in row 1, a cluster's width]: {narrow[:3]})")
    return g


def drawing_uses_width(page, cfg):
    """The machine drawing uses its panel's width: an LLC's clusters tile it row-major
    in as many columns as fit, so at 1366x900 on kunpeng920-6426 node 0's cluster 0
    and cluster 1 sit side by side, on the Domains tab and on the Wake-up and Simulate
    tabs (whose drawing panel is narrower), and each first row of clusters spans its
    LLC; on every preset at 1366, 1920 and 390 px (on each of the three tabs but at
    390 px) nothing sticks out of its box, nothing scrolls sideways and no LLC keeps
    its clusters in one column where two fit, and at 390 px every CPU is still 40 px a
    side."""
    side_by_side = """return [0, 1].map(i => { const b = [...document.querySelectorAll('.box.cluster')]
            .find(e => e.querySelector('.box-label').firstChild.textContent.trim() === 'cluster ' + i)
            .getBoundingClientRect(); return [Math.round(b.left), Math.round(b.top), Math.round(b.width)]; })"""
    try:
        set_viewport(page, 1366, 900)
        page.open()
        page.wait_for(".level-name")
        presets = [p for p in page.attrs("#preset option", "value") if p != "custom"]
        check(len(presets) >= 10, f"the Machine select lists the presets (got {presets})")
        for view in ("domains", "wakeup", "simulate"):
            page.open(fragment({"machine": "kunpeng920-6426", "patches": "6.8", "view": view}))
            page.wait_for(".box.cluster")
            time.sleep(0.3)
            pos = page.js(side_by_side)
            check(pos[0][1] == pos[1][1] and pos[1][0] >= pos[0][0] + pos[0][2],
                  f"1366 px, kunpeng920-6426, {view} tab: node 0's cluster 0 and cluster 1 side by side "
                  f"(left, top, width: {pos})")
            page.screenshot(cfg["shot"].replace(".png", f"-drawing-1366-{view}.png"))
        for w, h in ((1366, 900), (1920, 1080), MOBILE):
            set_viewport(page, w, h)
            for view in ("domains",) if w <= 640 else ("domains", "wakeup", "simulate"):
                for name in presets:
                    page.open(fragment({"machine": name, "patches": "6.8", "view": view}))
                    page.wait_for(".machine h2", pred=lambda t, n=name: t[0].startswith(n))
                    if w <= 640:
                        page.click("details.machine-fold > summary")
                        page.until(lambda: page.js("return document.querySelector('details.machine-fold').open"),
                                   timeout=5)
                    g = drawing_geometry_checks(page, w, f"{w} px, {name}, {view} tab")
                    if w <= 640:
                        check(g["narrowest"] >= 40, f"{w} px, {name}: every CPU at least 40 px a side "
                              f"(narrowest {g['narrowest']:.1f})")
                    if w == 1920 and name in ("kunpeng920-6426", "epyc9654-2p"):
                        page.screenshot(cfg["shot"].replace(".png", f"-drawing-1920-{view}-{name}.png"))
    finally:
        set_viewport(page, *VIEWPORT)


# What a click on a CPU does, wherever the page says it and it is drawn: the hint
# above the machine drawing, or the folded drawing's summary on a phone, as
# [[text, top, bottom]] (px from the viewport's top).
CLICK_HINTS = """
    return [...document.querySelectorAll('.machine > .hint, .machine-fold > summary .fold-hint')]
      .filter(e => e.checkVisibility()).map(e => { const r = e.getBoundingClientRect();
        return [e.textContent, Math.round(r.top), Math.round(r.bottom)]; });"""


def click_hint_seen(page, where, height):
    """Checks that, the page at its top, what a click on a CPU does is said within the
    first screen (a first-time user sees what to do without scrolling)."""
    page.js("window.scrollTo(0, 0)")
    hints = page.until(lambda: page.js(CLICK_HINTS), timeout=5) or []
    seen = [h for h in hints if "lick a CPU" in h[0] and h[1] >= 0 and h[2] <= height]
    check(seen, f"{where}: the hint saying what a click on a CPU does is on the first "
                f"screen (drawn: {hints})")


def layout_1280(page, cfg):
    """At 1280x720 and 1366x900 the five tabs fit their bar, each on one line; at
    1280x720 the result comes first: the wake-up decisions and the Simulate tab's
    chart start within the first screen, with the right panel scrolling with the
    page, and the Domains tab's cards too. At 1280x800 the machine drawing's hint
    ("Click a CPU to ...") is on the first screen, on the Domains, Wake-up and
    Simulate tabs; after a run it says the shade is how busy each CPU was, and the
    command lines break between words; the fields of a row in the workload form, the
    wake-up form and the designer share a top edge, and the timeline's field labels
    take a line each. The lessons menu is within the screen at 1280, 1100 and 800 px."""
    try:
        # The lessons menu: left-aligned to its button, it reached 21 px past the right
        # edge at 1280 px, cutting "Why the cluster patch wins at low load".
        for w in (1280, 1100, 800):
            set_viewport(page, w, 800)
            page.open()
            page.wait_for(".level-name")
            page.click("#lessons-button")
            page.wait_for(".lesson-pick")
            out, sw, iw = page.js(OUT_OF_VIEWPORT, ".lessons-list")
            check(out == [] and sw <= iw,
                  f"{w}x800: the lessons menu is within the screen (out: {out}; page {sw} of {iw} px)")
            page.click("#lessons-button")
        set_viewport(page, 1280, 800)
        for where, scenario, ready in (("Domains", None, ".level-name"),
                                       ("Wake-up", TEACHING, ".decision"),
                                       ("Simulate", SIMULATE, ".sim-setup, .sim")):
            page.open(fragment(scenario) if scenario else None)
            page.wait_for(ready)
            click_hint_seen(page, f"1280x800, {where}", 800)
            # The wake-up's key of seven left "prev" alone on its second line (session 39).
            lone = page.js(LONE_KEYS, ".legend")
            check(lone == [], f"1280x800, {where}: no line of a key holds one key alone (lone: {lone})")
        for w, h in ((1280, 720), (1366, 900)):
            set_viewport(page, w, h)
            page.open()
            page.wait_for(".level-name")
            bar = page.js("const t = document.querySelector('.tabs'); return [t.scrollWidth - t.clientWidth,"
                          " [...t.children].map(b => Math.round(b.getBoundingClientRect().height))]")
            check(bar[0] <= 0 and max(bar[1]) < 40,
                  f"{w} px: the tabs fit their bar, one line each (overflow {bar[0]} px, heights {bar[1]})")
        set_viewport(page, 1280, 720)
        page.open(fragment(TEACHING))
        page.wait_for('.decision[data-side="b"] .chosen-cpu')
        top = page.js("return document.querySelector('.decision').getBoundingClientRect().top")
        check(top < 720 - 60, f"wake-up: the decision's top is in the first screen ({top:.0f} < 660 px)")
        own = page.js("const p = document.querySelector('.domain-panel');"
                      "return getComputedStyle(p).overflowY + ' ' + (p.scrollHeight > p.clientHeight + 1)")
        check(own.startswith("visible"), f"wake-up: the right panel does not scroll on its own (got {own})")
        found = page.js(MISALIGNED_FIELDS)
        check(found == [], f"wake-up: the fields of one row share a top edge (not: {found})")
        page.screenshot(cfg["shot"].replace(".png", "-1280-wakeup.png"))
        page.open(fragment(SIMULATE))
        page.wait_for(".sim-status.done", timeout=180)
        top = page.js("return document.querySelector('.sim-chart').getBoundingClientRect().top")
        check(top < 720 - 60, f"simulate: the chart's top is in the first screen ({top:.0f} < 660 px)")
        # "the simulator, A" over "against B" (session 39).
        wrap = page.js(SUBTITLE_WRAP)
        check(wrap == [], f"1280x720, simulate: the heading's subtitle wraps whole (got {wrap})")
        broken = page.js(BROKEN_JOINS, ".sim-status, .live-status")
        check(broken == [], f"1280x720, simulate: no number of the status lines is on another line than its unit (broken: {broken})")
        broken = page.js(BROKEN_WORDS, ".sim-cli code")
        check(broken == [], f"simulate: the command lines break between words (broken: {broken[:6]})")
        cut = page.js(SVG_TEXT_CUT, ".sim-chart svg")
        check(cut == [], f"simulate: no text of the chart is cut at its edges (cut: {cut})")
        # Uneven labels ("CPUs (all, nodeN, list)" on two lines) moved the select 2 px
        # off its row; the timeline's "from (ms)" and "length (ms)" took two lines each.
        found = page.js(MISALIGNED_FIELDS)
        check(found == [], f"simulate: the workload's fields of one row share a top edge (not: {found})")
        wrapped = page.js(WRAPPED_TEXT, ".timeline-controls label")
        check(page.count(".timeline-controls label") >= 2 and wrapped == [],
              f"simulate: the timeline's field labels take one line each (wrapped: {wrapped})")
        # After the run the drawing shades how busy each CPU was; the allowed CPUs keep
        # their outline, and the hint says so (it said they were the shaded ones).
        hint = page.text(".machine > .hint") or ""
        check(page.count(".cpu.heat") > 0 and hint.startswith("Outlined: the CPUs the workload may use; shaded: how busy"),
              f"simulate: the hint says what the outline and the shade mean after a run (got {hint!r})")
        page.screenshot(cfg["shot"].replace(".png", "-1280-simulate.png"))
        page.open()
        page.wait_for(".level-name")
        page.click("#open-designer")
        page.wait_for("#designer-title")
        found = page.js(MISALIGNED_FIELDS)
        check(found == [], f"the designer: the fields of one row share a top edge (not: {found})")
    finally:
        set_viewport(page, *VIEWPORT)


# Every control drawn in the browser's own style rather than the page's: Chromium's
# default button is grey (239, 239, 239 light; 107, 107, 107 dark) with an outset
# border, its default select and textarea grey-bordered (118, 118, 118 light; 133,
# 133, 133 dark). As [[tag, id or class, text]].
UNSTYLED_CONTROLS = """
    const grey = ['rgb(239, 239, 239)', 'rgb(107, 107, 107)'];
    const edge = ['rgb(118, 118, 118)', 'rgb(133, 133, 133)'];
    return [...document.querySelectorAll('button, select, textarea')].filter(e => {
      const r = e.getBoundingClientRect();
      if (!(r.width > 0 && r.height > 0 && e.checkVisibility())) return false;
      const s = getComputedStyle(e);
      return grey.includes(s.backgroundColor) || s.borderTopStyle === 'outset'
        || edge.includes(s.borderTopColor);
    }).map(e => [e.tagName, e.id || String(e.className), e.textContent.trim().slice(0, 20)]);"""


def controls_drawn(page, cfg):
    """Every button, select and text box is drawn in the page's style, light and dark:
    the drawing's SVG/PNG bar, the Share menu and the kernel diff's pickers were left
    to the browser (grey, outset); and the debugfs tab's Copy and Download sit side by
    side under their note, as the dmesg tab's do."""
    for scheme in ("light", "dark"):
        with emulated_scheme(page, scheme):
            page.open()
            page.wait_for(".level-name")
            page.click("details.share summary")
            page.wait_for("#share-link")
            found = page.js(UNSTYLED_CONTROLS)
            check(found == [], f"{scheme}: the Domains tab with the Share menu open draws every "
                               f"control in the page's style (left to the browser: {found})")
            if scheme == "dark":
                page.screenshot(cfg["shot"].replace(".png", "-controls-dark.png"))
            page.click("details.share summary")
            for tab in (2, 3):
                page.click(f".tabs button:nth-child({tab})")
                page.wait_for("pre.dmesg")
                found = page.js(UNSTYLED_CONTROLS)
                check(found == [], f"{scheme}: tab {tab} draws every control in the page's style "
                                   f"(left to the browser: {found})")
    rows = page.js("return [...document.querySelectorAll('.dmesg-note')].map(n =>"
                   " [...n.querySelectorAll('.copy-text')].map(b => Math.round(b.getBoundingClientRect().top)))")
    check(rows and all(len(r) == 2 and r[0] == r[1] for r in rows),
          f"debugfs: each Copy and Download pair shares a row (tops {rows})")
