//! The LLC scan's part of `listing()`: `select_idle_cpu()` and `select_idle_core()`
//! (fair.c v6.8 7283-7418), with SIS_PROP and SIS_UTIL per release and seed 01 2/3's
//! cluster first.

use super::listing::Opts;
use super::{Listing, Site};
use crate::release::Release;

/// `select_idle_cpu()` (fair.c v6.8 7356-7418) up to its loops: `this_sd` before
/// 6.1, SIS_PROP's budget (before 6.7) and SIS_UTIL's.
pub(super) fn sic_budget(l: &mut Listing, o: &Opts) {
    let Opts { release, f, .. } = *o;
    l.func(
        "select_idle_cpu",
        "select_idle_cpu(p, sd, has_idle_core, target)",
    );
    l.at("{", Site::ScanEnter);
    l.plain("    int i, cpu, idle_cpu = -1, nr = INT_MAX;");
    if release < Release::new(6, 1) {
        l.plain("    this_sd = rcu_dereference(*this_cpu_ptr(&sd_llc));");
        l.plain("    if (!this_sd)");
        l.plain("        return -1;");
    }
    l.plain("    cpumask_and(cpus, sched_domain_span(sd), p->cpus_ptr);");
    if f.sis_prop && release < Release::new(6, 7) {
        l.plain("    if (sched_feat(SIS_PROP) && !has_idle_core) {");
        if release >= Release::new(6, 1) {
            l.plain("        this_sd = rcu_dereference(*this_cpu_ptr(&sd_llc));");
            l.plain("        if (!this_sd)");
            l.plain("            return -1;");
        }
        if release >= Release::new(5, 14) {
            l.plain("        avg_idle = this_rq->wake_avg_idle;");
        } else {
            l.plain("        avg_idle = this_rq()->avg_idle / 512;");
        }
        l.plain("        avg_cost = this_sd->avg_scan_cost + 1;");
        l.plain("        span_avg = sd->span_weight * avg_idle;");
        l.plain("        if (span_avg > 4*avg_cost)");
        l.at(
            "            nr = div_u64(span_avg, avg_cost);",
            Site::ScanPropBudget,
        );
        l.plain("        else");
        l.plain("            nr = 4;");
        l.plain("    }");
    }
    if f.sis_util {
        l.plain("    if (sched_feat(SIS_UTIL)) {");
        l.plain("        sd_share = rcu_dereference(per_cpu(sd_llc_shared, target));");
        l.plain("        if (sd_share) {");
        l.at(
            "            nr = READ_ONCE(sd_share->nr_idle_scan) + 1;",
            Site::ScanUtilBudget,
        );
        l.plain("            if (nr == 1)  /* overloaded LLC: unlikely to have an idle CPU */");
        l.at("                return -1;", Site::ScanUtilZero);
        l.plain("        }");
        l.plain("    }");
    }
}

/// The rest of `select_idle_cpu()`: seed 01 2/3's cluster first, the LLC's loop
/// (whole cores or CPU by CPU under the budget), and clearing the idle-core hint.
pub(super) fn sic_loops(l: &mut Listing, o: &Opts) {
    let Opts {
        release,
        cluster,
        wrap,
        ..
    } = *o;
    if let Some(c) = cluster {
        let by = Some(c);
        l.line(
            "    if (static_branch_unlikely(&sched_cluster_active)) {",
            None,
            by,
        );
        l.line("        struct sched_group *sg = sd->groups;", None, by);
        l.line(
            "        if (sg->flags & SD_CLUSTER) {",
            Some(Site::ClusterEnter),
            by,
        );
        l.line(
            &format!("            for_each_cpu_wrap(cpu, sched_group_span(sg), {wrap}) {{"),
            None,
            by,
        );
        l.line(
            "                if (!cpumask_test_cpu(cpu, cpus))",
            None,
            by,
        );
        l.line("                    continue;", None, by);
        l.line("                if (has_idle_core) {", None, by);
        l.line(
            "                    i = select_idle_core(p, cpu, cpus, &idle_cpu);",
            Some(Site::ClusterCore),
            by,
        );
        l.line(
            "                    if ((unsigned int)i < nr_cpumask_bits)",
            None,
            by,
        );
        l.line(
            "                        return i;",
            Some(Site::ClusterCoreReturn),
            by,
        );
        l.line("                } else {", None, by);
        l.line("                    if (--nr <= 0)", None, by);
        l.line(
            "                        return -1;",
            Some(Site::ClusterBudget),
            by,
        );
        l.line(
            "                    idle_cpu = __select_idle_cpu(cpu, p);",
            Some(Site::ClusterProbe),
            by,
        );
        l.line(
            "                    if ((unsigned int)idle_cpu < nr_cpumask_bits)",
            None,
            by,
        );
        l.line(
            "                        return idle_cpu;",
            Some(Site::ClusterProbeReturn),
            by,
        );
        l.line("                }", None, by);
        l.line("            }", None, by);
        l.line(
            "            cpumask_andnot(cpus, cpus, sched_group_span(sg));",
            Some(Site::ClusterDone),
            by,
        );
        l.line("        }", None, by);
        l.line("    }", None, by);
    }
    l.plain(&format!("    for_each_cpu_wrap(cpu, cpus, {wrap}) {{"));
    l.plain("        if (has_idle_core) {");
    l.at(
        "            i = select_idle_core(p, cpu, cpus, &idle_cpu);",
        Site::ScanCore,
    );
    l.plain("            if ((unsigned int)i < nr_cpumask_bits)");
    l.at("                return i;", Site::ScanCoreReturn);
    l.plain("        } else {");
    match cluster {
        Some(by) => l.line("            if (--nr <= 0)", None, Some(by)),
        None => l.plain("            if (!--nr)"),
    }
    l.at("                return -1;", Site::ScanBudget);
    l.at(
        "            idle_cpu = __select_idle_cpu(cpu, p);",
        Site::ScanProbe,
    );
    l.plain("            if ((unsigned int)idle_cpu < nr_cpumask_bits)");
    l.plain("                break;");
    l.plain("        }");
    l.plain("    }");
    l.plain("    if (has_idle_core)");
    if release >= Release::new(5, 13) {
        l.plain("        set_idle_cores(target, false);");
    } else {
        l.plain("        set_idle_cores(this, false);");
    }
    l.at("    return idle_cpu;", Site::ScanReturn);
    l.plain("}");
}

/// `select_idle_core()` (fair.c v6.8 7283-7309), with its `sched_smt_present`
/// test before 6.1.
pub(super) fn select_idle_core(l: &mut Listing, o: &Opts) {
    let Opts { release, .. } = *o;
    l.func(
        "select_idle_core",
        "select_idle_core(p, core, cpus, &idle_cpu)",
    );
    l.plain("{");
    l.plain("    bool idle = true;");
    if release < Release::new(6, 1) {
        l.plain("    if (!static_branch_likely(&sched_smt_present))");
        l.plain("        return __select_idle_cpu(core, p);");
    }
    l.plain("    for_each_cpu(cpu, cpu_smt_mask(core)) {");
    l.plain("        if (!available_idle_cpu(cpu)) {");
    l.plain("            idle = false;");
    l.plain("            /* remember a sched_idle thread if none yet, then stop */");
    l.plain("            break;");
    l.plain("        }");
    l.plain("        if (*idle_cpu == -1 && cpumask_test_cpu(cpu, p->cpus_ptr))");
    l.plain("            *idle_cpu = cpu;");
    l.plain("    }");
    l.at("    if (idle)", Site::CoreProbe);
    l.plain("        return core;");
    l.plain("    cpumask_andnot(cpus, cpus, cpu_smt_mask(core));");
    l.plain("    return -1;");
    l.plain("}");
}
