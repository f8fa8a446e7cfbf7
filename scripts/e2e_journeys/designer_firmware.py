"""The topology designer's arm64 firmware fields: where the kernel reads the topology
from (ACPI's PPTT or a device tree) and whether a shared cache is described, as
machine files take them (`firmware`, `no_shared_cache`; core/tests/domains_dt.rs)."""

from harness import axe_violations, check, reopen_in_designer
from sharing import type_into


def value(page, css):
    return page.js("const e = document.querySelector(arguments[0]); return e && e.value", css)


def levels(page):
    return page.texts(".level-name")


def designer_firmware(page, cfg):
    """On arm64 the designer offers the firmware (ACPI PPTT, or a device tree with
    sockets or of clusters) and a "no shared cache" box; on 5.17 a device tree with
    socket nodes loses the clusters (a core per CPU, as arch_topology.c read it
    before 6.0); the link carries the choice and the designer opens on it; x86 shows
    neither field, and its SMT numbering select renumbers the siblings; back on arm64 the
    device tree is kept and "no shared cache" takes CLS away on 6.1; no axe violation."""
    page.open()
    page.wait_for(".level-name")
    page.select("#release", "5.17")
    page.until(lambda: value(page, "#release") == "5.17", timeout=5)
    page.click("#open-designer")
    page.wait_for("#designer-firmware")
    options = page.js("return [...document.querySelectorAll('#designer-firmware option')].map(o => o.value)")
    cache_box = page.js("const e = document.querySelector('#designer-no-shared-cache'); return e && e.checked")
    check(value(page, "#designer-firmware") == "acpi" and options == ["acpi", "dt", "dt-clusters"]
          and cache_box is False,
          f"arm64 (Kunpeng): the firmware starts at ACPI, three choices, a shared cache (got {value(page, '#designer-firmware')!r}, {options}, {cache_box})")
    acpi = levels(page)
    check("CLS" in acpi, f"with ACPI's PPTT 5.17 builds the clusters (got {acpi})")
    before = page.hash
    page.select("#designer-firmware", "dt")
    page.until(lambda: page.hash != before, timeout=10)
    page.until(lambda: levels(page) != acpi, timeout=10)
    dt = levels(page)
    check("CLS" not in dt and page.count(".field-error") == 0,
          f"a device tree with socket nodes on 5.17: no CLS (a core per CPU), no error (got {dt})")
    found = axe_violations(page)
    check(found == [], f"axe: no violations with the firmware fields (got {found})")
    page.js("document.querySelector('#designer-firmware').scrollIntoView()")
    page.screenshot(cfg["shot_epyc"].replace(".png", "-designer-firmware.png"))
    # The link, in a fresh page: the designer opens on the device tree.
    reopen_in_designer(page, "#designer-firmware")
    check(value(page, "#designer-firmware") == "dt" and levels(page) == dt,
          f"the link opens the device tree as designed (got {value(page, '#designer-firmware')!r}, {levels(page)})")
    # x86 reads CPUID and ACPI: neither field.
    page.select("#designer-arch", "x86")
    page.until(lambda: page.count("#designer-firmware") == 0, timeout=5)
    check(page.count("#designer-no-shared-cache") == 0 and page.count(".field-error") == 0,
          "x86: no firmware fields, no error")
    # The SMT numbering, on x86 with two threads a core (2 x 2 x 1 x 8 x 4 x 2 = 256
    # CPUs): CPU 0's SMT sibling is CPU 1 with siblings adjacent, CPU 128 with n and n+N/2.
    type_into(page, "#designer-threads", "2")
    page.until(lambda: page.count("button.cpu") == 256, timeout=20)
    linear = page.wait_for(".level-span", pred=lambda t: t[0] == "0-1", timeout=10)
    page.select("#designer-numbering", "smt-split")
    split = page.wait_for(".level-span", pred=lambda t: t[0] == "0,128", timeout=10)
    check(linear[:1] == ["0-1"] and split[:1] == ["0,128"]
          and value(page, "#designer-numbering") == "smt-split",
          f"SMT numbering: CPU 0's SMT span is 0-1 adjacent, 0,128 split (got {linear[:1]}, {split[:1]})")
    # Back to arm64 on 6.1: the form kept the device tree; "no shared cache" makes MC
    # the cluster (CLS degenerates), and the box stays checked through the re-render.
    page.select("#release", "6.1")
    page.select("#designer-arch", "arm64")
    page.wait_for("#designer-firmware")
    page.until(lambda: "CLS" in levels(page), timeout=10)
    dt6 = levels(page)
    check(value(page, "#designer-firmware") == "dt" and "CLS" in dt6,
          f"arm64 on 6.1: the device tree is kept and reads the clusters (got {value(page, '#designer-firmware')!r}, {dt6})")
    before = page.hash
    page.click("#designer-no-shared-cache")
    page.until(lambda: levels(page) != dt6 and page.hash != before, timeout=10)
    boxed = page.js("const e = document.querySelector('#designer-no-shared-cache'); return e && e.checked")
    check(boxed is True and "CLS" not in levels(page) and page.hash != before
          and page.count(".field-error") == 0,
          f"no shared cache: the box stays checked, CLS goes, the link changes (got {boxed}, {levels(page)})")
