"""Journeys of a phone's screen (390x844) not covered by mobile_layout: the Share menu,
the forms' fields in line, and the timeline's canvas and time axis; and the time axis
at 1280 px."""

import time

from harness import (
    LABEL_COLUMNS,
    MISALIGNED_FIELDS,
    MOBILE,
    SIMULATE,
    SMALL_TARGETS,
    TEACHING,
    VIEWPORT,
    check,
    fragment,
    label_columns_fit,
    set_viewport,
)


# The Share menu's parts that reach past the screen's edges or cut their own text, as
# [[what, left, right]], and the page's width.
SHARE_FIT = """
    const out = [];
    for (const e of document.querySelectorAll('.share-body > *')) {
      if (!e.checkVisibility()) continue;
      const r = e.getBoundingClientRect();
      const cut = e.matches('button') && e.scrollWidth > e.clientWidth + 1;
      if (r.left < -0.5 || r.right > innerWidth + 0.5 || cut)
        out.push([e.tagName + ' ' + (e.textContent || e.id).trim().slice(0, 16), Math.round(r.left), Math.round(r.right)]);
    }
    return [out, document.documentElement.scrollWidth];"""

# The timeline's canvas: its drawn width (CSS px) against its own pixels per device
# pixel, and its time axis' labels as [left, right] CSS px.
TIMELINE_AXIS = """
    const c = document.querySelector('.timeline canvas');
    const ticks = (c.dataset.ticks || '').split(' ').filter(Boolean).map(t => t.split('-').map(Number));
    return {drawn: c.getBoundingClientRect().width, own: c.width / devicePixelRatio, ticks: ticks};"""

# Buttons alone on a line of their row (arguments[0]) among other controls, as
# [[button, the row's lines' controls]]: the row's buttons and labels, in lines by
# their middles. On a phone "Randomise" took a line of its own under busy % and seed
# (session 40).
LONE_BUTTONS = """
    const out = [];
    for (const row of document.querySelectorAll(arguments[0])) {
      if (!row.checkVisibility()) continue;
      const items = [...row.querySelectorAll('button, label')].filter(e => e.checkVisibility()
        && !e.parentElement.closest('button, label'));
      const lines = [];
      for (const e of items) {
        const r = e.getBoundingClientRect(), mid = (r.top + r.bottom) / 2;
        const l = lines.find(l => Math.abs(l.mid - mid) < 6);
        if (l) l.items.push(e); else lines.push({mid, items: [e]});
      }
      for (const l of lines)
        if (items.length > 1 && l.items.length === 1 && l.items[0].tagName === 'BUTTON')
          out.push([l.items[0].textContent.trim(), lines.map(l => l.items.map(e => e.textContent.trim().slice(0, 10)))]);
    }
    return out;"""


def axis_checks(page, where):
    """The timeline shown: its canvas drawn at its own size (its 11 px text stays 11 px)
    and its time labels apart from each other and inside it."""
    page.click("#timeline-show")
    page.until(lambda: page.attrs(".timeline canvas", "data-wakeups"), timeout=120)
    time.sleep(0.3)
    a = page.js(TIMELINE_AXIS)
    ticks = a["ticks"]
    apart = all(ticks[i][0] >= ticks[i - 1][1] + 4 for i in range(1, len(ticks)))
    inside = all(0 <= l and r <= a["own"] for l, r in ticks)
    check(abs(a["drawn"] - a["own"]) <= 1 and len(ticks) >= 2 and apart and inside,
          f"{where}: the timeline is drawn at its own width (its text not shrunk) and its time "
          f"labels neither meet nor leave it (drawn {a['drawn']:.0f} px of {a['own']:.0f}; labels {ticks})")
    # Its label column: 190 px at every width until session 38, which left a phone's
    # 314 px canvas 124 px of plot.
    cols = page.js(LABEL_COLUMNS)
    check(label_columns_fit(cols),
          f"{where}: the timeline's label column leaves the plot 60% of the canvas and holds its "
          f"labels whole ([canvas, column, labels' right end] px: {cols})")


def phone_views(page, cfg):
    """At 390x844: the Share menu fits the screen (it hung off its left edge, its buttons
    cut); the fields of the workload form, the wake-up form and the designer each share
    a top edge with their row's, and no button of the wake-up form is alone on a line
    (Randomise was); the timeline is drawn at its box's width (a 390 px
    minimum shrank its text to 9 px) with its time labels apart (they ran together);
    then at 1280x800 its last label is inside the canvas (it was cut)."""
    try:
        set_viewport(page, *MOBILE)
        page.open(fragment(TEACHING))
        page.wait_for(".decision")
        page.click(".share > summary")
        page.wait_for("#share-link")
        out, width = page.js(SHARE_FIT)
        small = page.js(SMALL_TARGETS, 40, ".share-body button, .share-body select")
        check(out == [] and width <= MOBILE[0] and small == [],
              f"390 px: the Share menu is within the screen, its buttons whole and 40 px "
              f"(out or cut: {out}; page {width} px; small: {small})")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-mobile-share.png"))
        page.click(".share > summary")
        found = page.js(MISALIGNED_FIELDS)
        check(found == [], f"390 px, wake-up: fields of one row share a top edge (not: {found})")
        lone = page.js(LONE_BUTTONS, ".wake-setup .row")
        check(lone == [], f"390 px, wake-up: no button of the form takes a line of its own "
                          f"(alone: {lone})")
        page.open()
        page.wait_for(".level-name")
        page.click("#open-designer")
        page.wait_for("#designer-title")
        found = page.js(MISALIGNED_FIELDS)
        check(found == [], f"390 px, the designer: fields of one row share a top edge (not: {found})")
        page.open(fragment(SIMULATE))
        page.wait_for(".sim-status.done", timeout=180)
        found = page.js(MISALIGNED_FIELDS)
        check(found == [], f"390 px, the workload: fields of one row share a top edge (not: {found})")
        axis_checks(page, "390 px")
        page.js("document.querySelector('.timeline').scrollIntoView()")
        page.screenshot(cfg["shot_epyc"].replace(".png", "-mobile-timeline.png"))
        set_viewport(page, 1280, 800)
        page.open(fragment(SIMULATE))
        page.wait_for(".sim-status.done", timeout=180)
        axis_checks(page, "1280 px")
    finally:
        set_viewport(page, *VIEWPORT)
