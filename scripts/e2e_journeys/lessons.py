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
        hit: c.querySelectorAll('.code-lines .code-line.hit').length,
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
    code_stepper(page, cfg)


def code_stepper(page, cfg):
    """The code view's stepper on B: Start, then Step to the end moves the cursor
    through the trace's steps in order (each step's note is the trace list's step at
    the same place), the notes gathered line by line are the overview's, Step back
    and the keys p / ArrowDown move it, and the live region says each step."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    col = ".decision-col.side-b"
    now = lambda: page.js(f"""const c = document.querySelector('{col}');
        const l = c.querySelector('.code-line.current');
        return l && [l.dataset.line, l.querySelector('.code-now').textContent,
                     c.querySelector('.code-step').textContent,
                     c.querySelectorAll('.code-lines .code-line.hit').length]""")
    trace = page.js(f"""return [...document.querySelectorAll('{col} ol.trace > li')]
        .map(li => [li.className, li.textContent])""")
    idle = page.text(f"{col} .code-step") or ""
    overview = "\n".join(sorted(page.js(f"""return [...document.querySelectorAll('{col} .code-lines .code-line.hit')]
        .map(l => l.dataset.line + l.querySelector('.code-note').textContent)""")))
    page.click(f"{col} .code-start")
    first = page.until(lambda: (now() or [None, None, ""])[2].startswith("Step 1 of") and now())
    check(bool(first) and first[3] == 1 and first[2] != idle,
          f"Start puts the cursor on step 1, only its line highlighted, and says so (got {first}, before {idle!r})")
    seen = [first]
    for _ in range(200):
        if page.js(f"return document.querySelector('{col} .code-step-on').disabled"):
            break
        page.click(f"{col} .code-step-on")
        k = len(seen) + 1
        seen.append(page.until(lambda: (now() or [None, None, ""])[2].startswith(f"Step {k} of") and now()))
    n = len(seen)
    check(n == len(trace) and all(seen) and seen[-1][2].startswith(f"Step {n} of {n}"),
          f"Step walks every step of the trace ({n} steps, trace {len(trace)}, last {seen[-1]})")
    # Trace order: the cursor's note at step k is the trace list's step k.
    bad = []
    for k, ((cls, text), s) in enumerate(zip(trace, seen)):
        note = s[1] if s else ""
        if "st-probe" in cls:
            cpu = text.split("probe CPU ")[1].split(":")[0]
            ok = note.startswith("#") and f"CPU {cpu} " in note
        elif "st-return" in cls:
            ok = note.startswith("→") and note.split("→ ")[1] in text
        elif "st-enter" in cls:
            ok = note == "entered"
        else:
            ok = True
        if not ok:
            bad.append((k + 1, text, note))
    check(bad == [], f"each step's cursor note is the trace list's step at the same place (mismatches {bad})")
    # Line by line, the cursor's notes in step order are the overview's notes.
    by_line = {}
    for s in seen:
        by_line.setdefault(s[0], []).append(s[1])
    stepped = "\n".join(sorted(f"{line}// {', '.join(v)}" for line, v in by_line.items()))
    check(stepped == "\n".join(sorted(overview.split("\n"))),
          f"the cursor visits exactly the highlighted lines, its notes in the overview's order "
          f"(stepped {stepped!r}, overview {overview!r})")
    check(seen[-1][3] == len(overview.split("\n")),
          f"at the end every line the decision ran is highlighted ({seen[-1][3]})")
    page.click(f"{col} .code-back")
    back = page.until(lambda: (now() or [None, None, ""])[2].startswith(f"Step {n - 1} of") and now())
    check(bool(back) and back[:2] == seen[-2][:2],
          f"Step back returns to step {n - 1} on its line (got {back}, want {seen[-2]})")
    page.js(f"document.querySelector('{col} .code-lines').focus()")
    ActionChains(page.driver).send_keys("p").perform()
    key = page.until(lambda: (now() or [None, None, ""])[2].startswith(f"Step {n - 2} of") and now())
    ActionChains(page.driver).send_keys(Keys.ARROW_DOWN).perform()
    key2 = page.until(lambda: (now() or [None, None, ""])[2].startswith(f"Step {n - 1} of") and now())
    check(bool(key) and key[:2] == seen[-3][:2] and bool(key2),
          f"p steps back and ArrowDown on in the focused listing (got {key}, {key2})")
    # Mid-way: the screenshot at 1280x720, and axe with the stepper on.
    page.click(f"{col} .code-start")
    mid = max(1, n // 2)
    for k in range(2, mid + 1):
        page.click(f"{col} .code-step-on")
        page.until(lambda: (now() or [None, None, ""])[2].startswith(f"Step {k} of"))
    found = axe_violations(page)
    check(found == [], f"axe: no violations while stepping (got {found})")
    from harness import VIEWPORT, set_viewport
    set_viewport(page, 1280, 720)
    page.js(f"document.querySelector('{col} .code-stepper').scrollIntoView({{block: 'start'}})")
    page.until(lambda: now() and now()[2].startswith(f"Step {mid} of"))
    page.screenshot(cfg["shot_epyc"].replace(".png", "-code-step.png"))
    set_viewport(page, *VIEWPORT)
    # Another decision (every CPU idle: B takes prev at once) drops the cursor.
    page.click("#all-idle")
    reset = page.until(lambda: page.js(f"""const c = document.querySelector('{col}');
        const t = c.querySelector('.code-step').textContent;
        return t.includes('all highlighted') && !c.querySelector('.code-line.current') && t"""))
    check(bool(reset) and reset != idle,
          f"a new decision puts the stepper back to all lines highlighted (got {reset!r}, before {idle!r})")


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
