"""Journeys of teaching: the lessons, glossary pop-overs, the examples menu and the
kernel code view."""

from harness import TEACHING, axe_violations, check, fragment, note


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
