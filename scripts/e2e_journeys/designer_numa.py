"""The topology designer's NUMA inputs past the regular ones: memory-only (CPU-less)
nodes and a distance table that is not symmetric, as machine files take them
(core/tests/numa_input.rs)."""

import time

from harness import (
    DARK_BG,
    MOBILE,
    VIEWPORT,
    axe_violations,
    check,
    emulated_scheme,
    page_background,
    reopen_in_designer,
    set_viewport,
)
from sharing import type_into


def value(page, css):
    return page.js("const e = document.querySelector(arguments[0]); return e && e.value", css)


def attr(page, css, name):
    return page.js("const e = document.querySelector(arguments[0]);"
                   " return e && e.getAttribute(arguments[1])", css, name)


def designer_numa(page, cfg):
    """The designer's memory-only nodes and its "symmetric" box: a count next to the
    nodes per socket extends the distance grid with nodes headed "no CPUs"; a bad count
    says why beside the field and keeps the machine; with "symmetric" off a cell is
    edited alone and the note names the pairs that differ; the link carries both and
    the designer opens on them again; checking "symmetric" mirrors, unchecking gives
    the table back; no axe violation, light and dark; it fits 390 px."""
    page.open()
    page.wait_for(".level-name")
    page.click("#open-designer")
    page.wait_for("#designer-title")
    cpus = page.count("button.cpu")
    label = page.text("label[for=designer-memory-nodes]")
    check(value(page, "#designer-memory-nodes") == "0" and label and "no CPUs" in label,
          f"a memory-only nodes count, labelled as having no CPUs, starts at 0 (got {label!r})")
    # One memory-only node: the 4 x 4 grid becomes 5 x 5, the CPUs stay.
    type_into(page, "#designer-memory-nodes", "1")
    cells = page.wait_count(".designer-slit input", 20)
    heads = page.texts(".designer-slit thead th.memory-only")
    total = page.wait_for("#designer-total", pred=lambda t: "memory-only" in t[0])
    check(cells == 20 and heads == ["node 4\nno CPUs"] and page.count("button.cpu") == cpus,
          f"memory-only nodes: 20 cells, node 4 headed 'no CPUs', {cpus} CPUs still (got {cells}, {heads}, {page.count('button.cpu')})")
    check(total and "5 NUMA nodes (1 memory-only)" in total[0], f"the total says so: {total}")
    aria = attr(page, "#designer-d-0-4", "aria-label")
    check(aria == "distance from node 0 to node 4 (memory only)",
          f"a memory-only node's cell says so to a screen reader (got {aria!r})")
    note_text = page.text("#designer-memory-note")
    check(note_text and "5.18" in note_text, f"the note says what each release counts (got {note_text!r})")
    # A bad count: its error beside the field, the machine and the grid stay.
    before = page.hash
    type_into(page, "#designer-memory-nodes", "x")
    err = page.wait_for("#designer-memory-nodes-error")
    tied = attr(page, "#designer-memory-nodes", "aria-describedby")
    check(err and "from 0 to 32" in err[0] and tied == "designer-memory-nodes-error"
          and page.hash == before and page.count(".designer-slit input") == 20,
          f"memory-only nodes 'x': the error beside the field, the machine kept (got {err}, {tied})")
    type_into(page, "#designer-memory-nodes", "1")
    page.until(lambda: page.count(".field-error") == 0, timeout=5)
    # Symmetric off: one direction alone.
    check(page.js("return document.querySelector('#designer-symmetric').checked") is True,
          "symmetric is on by default")
    page.click("#designer-symmetric")
    page.until(lambda: page.js("return !document.querySelector('#designer-symmetric').checked"), timeout=5)
    type_into(page, "#designer-d-4-0", "17")
    note = page.wait_for("#designer-slit-asym")
    mirror = value(page, "#designer-d-0-4")
    described = attr(page, "#designer-d-4-0", "aria-describedby")
    check(mirror == "20" and note and "node_distance(0, 4) = 20 but node_distance(4, 0) = 17" in note[0]
          and "Node-distance not symmetric" in note[0] and described == "designer-slit-asym",
          f"symmetric off: (4, 0) = 17 leaves (0, 4) at 20, and the note names the pair (got {mirror}, {note}, {described})")
    check(page.count(".field-error") == 0, "an asymmetric table is no error")
    found = axe_violations(page)
    check(found == [], f"axe: no violations with memory-only nodes and an asymmetric table (got {found})")
    page.js("document.querySelector('.designer-numa').scrollIntoView()")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-designer-numa.png"))
    with emulated_scheme(page, "dark"):
        time.sleep(0.3)
        found = axe_violations(page)
        check(page_background(page) == DARK_BG and found == [],
              f"axe, dark: no violations there either (got {found})")
    try:
        set_viewport(page, *MOBILE)
        time.sleep(0.5)
        width = page.js("return document.documentElement.scrollWidth")
        check(width <= MOBILE[0], f"390 px: the grid with a memory-only node fits (scrolls in its box; page {width} px)")
        page.js("document.querySelector('.designer-numa').scrollIntoView()")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-designer-numa-mobile.png"))
    finally:
        set_viewport(page, *VIEWPORT)
    # The link, in a fresh page: the designer opens on the same table.
    reopen_in_designer(page, "#designer-memory-nodes")
    got = [value(page, "#designer-memory-nodes"),
           page.js("return document.querySelector('#designer-symmetric').checked"),
           value(page, "#designer-d-4-0"), value(page, "#designer-d-0-4"),
           page.count(".designer-slit input")]
    check(got == ["1", False, "17", "20", 20],
          f"the link opens the memory-only node and the asymmetric table as designed (got {got})")
    # Checking symmetric mirrors the cells above the diagonal; unchecking gives them back.
    page.click("#designer-symmetric")
    page.until(lambda: value(page, "#designer-d-4-0") == "20", timeout=5)
    mirrored = (value(page, "#designer-d-4-0"), page.count("#designer-slit-asym"))
    page.click("#designer-symmetric")
    page.until(lambda: value(page, "#designer-d-4-0") == "17", timeout=5)
    check(mirrored == ("20", 0) and value(page, "#designer-d-4-0") == "17",
          f"symmetric on mirrors (4, 0) to 20; off right after gives 17 back (got {mirrored})")
