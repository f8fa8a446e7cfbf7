//! `select_idle_sibling()`'s part of `listing()`: the function itself,
//! `select_idle_capacity()` and `select_idle_smt()` (fair.c v6.8 7425-7618), with
//! seeds 01, 02 and 05 marked where the patch set has them.

use super::listing::Opts;
use super::{Listing, Site};
use crate::release::Release;

/// `select_idle_sibling()` (fair.c v6.8 7491-7618) up to the asymmetric-capacity
/// domain: target, prev, the per-CPU kthread and recent_used_cpu, each with seed
/// 04's cookie test and seed 01's cluster fall-back where the patch set has them.
pub(super) fn sis_fast_path(l: &mut Listing, o: &Opts) {
    let Opts {
        release,
        cluster,
        fallback,
        cookie,
        ..
    } = *o;
    let cookie_and = |cpu: &str| format!("        sched_core_cookie_match(cpu_rq({cpu}), p) &&");
    l.func(
        "select_idle_sibling",
        "select_idle_sibling(p, prev, target)",
    );
    l.at("{", Site::SisEnter);
    l.plain("    if ((available_idle_cpu(target) || sched_idle_cpu(target)) &&");
    if cookie.is_some() {
        l.line(&cookie_and("target"), None, cookie);
    }
    l.at("        asym_fits_cpu(…, target))", Site::SisTarget);
    l.at("        return target;", Site::SisTargetReturn);
    l.plain("    /* If the previous CPU is cache affine and idle, don't be stupid: */");
    l.plain("    if (prev != target && cpus_share_cache(prev, target) &&");
    l.plain("        (available_idle_cpu(prev) || sched_idle_cpu(prev)) &&");
    if cookie.is_some() {
        l.line(&cookie_and("prev"), None, cookie);
    }
    l.at("        asym_fits_cpu(…, prev)) {", Site::SisPrev);
    if let Some(c) = cluster {
        l.line(
            "        if (!static_branch_unlikely(&sched_cluster_active) ||",
            None,
            Some(c),
        );
        l.line(
            "            cpus_share_resources(prev, target))",
            Some(Site::SisPrevCluster),
            Some(c),
        );
        l.line(
            "            return prev;",
            Some(Site::SisPrevReturn),
            Some(c),
        );
        if let Some(fb) = fallback {
            l.line("        prev_aff = prev;", None, Some(fb));
        }
    } else {
        l.at("        return prev;", Site::SisPrevReturn);
    }
    l.plain("    }");
    l.plain("    /* Allow a per-cpu kthread to stack with the wakee (IO completion). */");
    if release >= Release::new(5, 16) {
        l.plain("    if (is_per_cpu_kthread(current) && in_task() &&");
        l.plain("        prev == smp_processor_id() &&");
        l.at(
            "        this_rq()->nr_running <= 1 && asym_fits_cpu(…, prev))",
            Site::SisKthread,
        );
    } else {
        l.plain("    if (is_per_cpu_kthread(current) &&");
        l.plain("        prev == smp_processor_id() &&");
        l.at("        this_rq()->nr_running <= 1)", Site::SisKthread);
    }
    l.at("        return prev;", Site::SisKthreadReturn);
    l.plain("    recent_used_cpu = p->recent_used_cpu;");
    if release >= Release::new(5, 15) {
        l.plain("    p->recent_used_cpu = prev;");
    }
    l.plain("    if (recent_used_cpu != prev && recent_used_cpu != target &&");
    l.plain("        cpus_share_cache(recent_used_cpu, target) &&");
    l.plain("        (available_idle_cpu(recent_used_cpu) || sched_idle_cpu(recent_used_cpu)) &&");
    if cookie.is_some() {
        l.line(&cookie_and("recent_used_cpu"), None, cookie);
    }
    if release >= Release::new(6, 5) {
        l.plain("        cpumask_test_cpu(recent_used_cpu, p->cpus_ptr) &&");
    } else {
        // 5.15-6.4 read p->recent_used_cpu after setting it to prev.
        l.plain("        cpumask_test_cpu(p->recent_used_cpu, p->cpus_ptr) &&");
    }
    l.at(
        "        asym_fits_cpu(…, recent_used_cpu)) {",
        Site::SisRecent,
    );
    if let Some(c) = cluster {
        l.line(
            "        if (!static_branch_unlikely(&sched_cluster_active) ||",
            None,
            Some(c),
        );
        l.line(
            "            cpus_share_resources(recent_used_cpu, target))",
            None,
            Some(c),
        );
        l.line(
            "            return recent_used_cpu;",
            Some(Site::SisRecentReturn),
            Some(c),
        );
    } else {
        l.at("        return recent_used_cpu;", Site::SisRecentReturn);
    }
    if let Some(fb) = fallback {
        l.line("    } else {", None, Some(fb));
        l.line("        recent_used_cpu = -1;", None, Some(fb));
    }
    l.plain("    }");
}

/// The rest of `select_idle_sibling()`: the asymmetric-capacity domain, the LLC,
/// the idle-core hint and prev's SMT siblings (seed 02's `sched_smt_active()`
/// test), the scan, and seed 01 3/3's fall-backs.
pub(super) fn sis_rest(l: &mut Listing, o: &Opts) {
    let Opts {
        fallback,
        smt_idle,
        no_smt_idle_cores,
        ..
    } = *o;
    l.plain("    if (sched_asym_cpucap_active()) {");
    l.plain("        sd = rcu_dereference(per_cpu(sd_asym_cpucapacity, target));");
    l.plain("        if (sd) {");
    l.plain("            i = select_idle_capacity(p, sd, target);");
    l.at(
        "            return ((unsigned)i < nr_cpumask_bits) ? i : target;",
        Site::SisCapacity,
    );
    l.plain("        }");
    l.plain("    }");
    l.plain("    sd = rcu_dereference(per_cpu(sd_llc, target));");
    l.plain("    if (!sd)");
    l.at("        return target;", Site::SisNoLlc);
    match no_smt_idle_cores {
        Some(p) => {
            l.line("    if (sched_smt_active()) {", None, Some(p));
            l.at(
                "        has_idle_core = test_idle_cores(target);",
                Site::SisIdleCores,
            );
            if smt_idle {
                l.plain("        if (!has_idle_core && cpus_share_cache(prev, target)) {");
                l.plain("            i = select_idle_smt(p, sd, prev);");
                l.plain("            if ((unsigned int)i < nr_cpumask_bits)");
                l.at("                return i;", Site::SisSmtReturn);
                l.plain("        }");
            }
            l.plain("    }");
        }
        None => {
            l.at(
                "    has_idle_core = test_idle_cores(target);",
                Site::SisIdleCores,
            );
            if smt_idle {
                l.plain("    if (sched_smt_active() && !has_idle_core && cpus_share_cache(prev, target)) {");
                l.plain("        i = select_idle_smt(p, sd, prev);");
                l.plain("        if ((unsigned int)i < nr_cpumask_bits)");
                l.at("            return i;", Site::SisSmtReturn);
                l.plain("    }");
            }
        }
    }
    l.plain("    i = select_idle_cpu(p, sd, has_idle_core, target);");
    l.plain("    if ((unsigned)i < nr_cpumask_bits)");
    l.at("        return i;", Site::SisScanReturn);
    if let Some(fb) = fallback {
        l.line(
            "    if ((unsigned int)prev_aff < nr_cpumask_bits)",
            None,
            Some(fb),
        );
        l.line(
            "        return prev_aff;",
            Some(Site::SisPrevAffReturn),
            Some(fb),
        );
        l.line(
            "    if ((unsigned int)recent_used_cpu < nr_cpumask_bits)",
            None,
            Some(fb),
        );
        l.line(
            "        return recent_used_cpu;",
            Some(Site::SisRecentAffReturn),
            Some(fb),
        );
    }
    l.at("    return target;", Site::SisTargetLast);
    l.plain("}");
}

/// `select_idle_capacity()` (fair.c v6.8 7425-7471, its wrap start per release)
/// and, from 5.13, `select_idle_smt()` (with seed 04's cookie test).
pub(super) fn capacity_and_smt(l: &mut Listing, o: &Opts) {
    let Opts {
        release,
        cookie,
        smt_idle,
        ..
    } = *o;
    l.func(
        "select_idle_capacity",
        "select_idle_capacity(p, sd, target)",
    );
    l.plain("{");
    if (Release::new(6, 3)..=Release::new(6, 5)).contains(&release) {
        l.plain("    for_each_cpu_wrap(cpu, cpus, target + 1) {");
    } else {
        l.plain("    for_each_cpu_wrap(cpu, cpus, target) {");
    }
    l.plain("        if (!available_idle_cpu(cpu) && !sched_idle_cpu(cpu))");
    l.plain("            continue;");
    l.at(
        "        if (util_fits_cpu(task_util, util_min, util_max, cpu) > 0)",
        Site::CapacityProbe,
    );
    l.plain("            return cpu;");
    l.plain("        /* else remember the idle CPU of most capacity */");
    l.plain("    }");
    l.plain("    return best_cpu;");
    l.plain("}");

    if smt_idle {
        l.func("select_idle_smt", "select_idle_smt(p, sd, target)");
        l.plain("{");
        l.plain("    for_each_cpu_and(cpu, cpu_smt_mask(target), p->cpus_ptr) {");
        l.plain("        if (cpu == target)");
        l.plain("            continue;");
        if release >= Release::new(6, 9) {
            l.plain("        if (!cpumask_test_cpu(cpu, sched_domain_span(sd)))");
            l.plain("            continue;");
        }
        match cookie {
            Some(c) => {
                l.line(
                    "        if (__select_idle_cpu(cpu, p) != -1)  /* idle and cookie matches */",
                    Some(Site::SmtProbe),
                    Some(c),
                );
            }
            None => l.at(
                "        if (available_idle_cpu(cpu) || sched_idle_cpu(cpu))",
                Site::SmtProbe,
            ),
        }
        l.plain("            return cpu;");
        l.plain("    }");
        l.plain("    return -1;");
        l.plain("}");
    }
}
