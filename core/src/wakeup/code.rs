//! The wake-up path as readable kernel-style code, and which of its lines a traced
//! decision went through (issue 17: "a code view … highlights the lines this decision
//! went through and marks the lines a toggled patch adds or changes").
//!
//! [`listing()`] writes `try_to_wake_up()`'s placement part for a patch set: the
//! functions [`super::select`] mirrors, in the kernel's order and with the kernel's
//! names, condensed (comments, locking, statistics and the EAS/uclamp arguments left
//! out; `asym_fits_cpu(…)` keeps its name but not its arguments). The text follows the
//! release and the patch set the way the model does: SIS_PROP before 6.7 and while the
//! feature is on, SIS_UTIL from 6.0, `select_idle_smt(p, prev)` from 5.13, seed 02's
//! `sched_smt_active()` test, seed 01's cluster scan and its prev/recent fallback,
//! seed 03's L2 test in `ttwu_queue_cond()`, seed 04's cookie checks, the
//! `for_each_cpu_wrap()` start (`target + 1` from 5.14), `WF_CURRENT_CPU` from 6.6.
//! A line a patch of the set adds or changes names that patch ([`CodeLine::by`]).
//!
//! [`hits()`] maps each [`Step`] of a [`Trace`] to the line ([`Site`]) that produced
//! it. The mapping reads each step's function and the fixed start of its text, so a
//! change of wording in `select.rs` must be followed here: the property test
//! `every_step_of_a_decision_has_its_line_in_the_listing` (core/tests/wakeup.rs)
//! decides random wake-ups on every preset and patch set there and fails on a step
//! without a line, or on a line missing from the listing of the set that decided.

use super::trace::{Step, Trace};
use super::QueuePath;
use crate::patch::{Patch, PatchSet};
use crate::release::Release;

/// A line of the listing that a trace step can point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Site {
    /// `try_to_wake_up()`: p still on_cpu, queued to its old CPU.
    OnCpuWakelist,
    /// `select_task_rq()`: one allowed CPU.
    SingleCpu,
    /// `select_task_rq()`: the chosen CPU is not allowed, `select_fallback_rq()`.
    Fallback,
    FairEnter,
    CurrentCpu,
    WakeWide,
    AffineDomain,
    FindIdlest,
    FairReturnSlow,
    FairReturnFast,
    /// `wake_affine()` keeps prev.
    WakeAffinePrev,
    /// `wake_affine()` pulls to the waker's CPU.
    WakeAffineThis,
    AffineIdleThis,
    AffineIdleSync,
    AffineIdlePrev,
    AffineWeight,
    SisEnter,
    SisTarget,
    SisTargetReturn,
    SisPrev,
    SisPrevReturn,
    SisPrevCluster,
    SisKthread,
    SisKthreadReturn,
    SisRecent,
    SisRecentReturn,
    SisCapacity,
    CapacityProbe,
    SisNoLlc,
    SisIdleCores,
    SmtProbe,
    SisSmtReturn,
    SisScanReturn,
    SisPrevAffReturn,
    SisRecentAffReturn,
    SisTargetLast,
    ScanEnter,
    ScanPropBudget,
    ScanUtilBudget,
    ScanUtilZero,
    ClusterEnter,
    ClusterCore,
    ClusterCoreReturn,
    ClusterBudget,
    ClusterProbe,
    ClusterProbeReturn,
    ClusterDone,
    ScanCore,
    ScanCoreReturn,
    ScanBudget,
    ScanProbe,
    ScanReturn,
    CoreProbe,
    QueueCond,
    QueueWakelist,
    QueueLocal,
    QueueRemote,
}

/// One line of the listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeLine {
    /// The kernel function the line belongs to.
    pub func: &'static str,
    /// The text, indented with spaces.
    pub text: String,
    /// The trace steps this line produces, if any.
    pub site: Option<Site>,
    /// The patch of the set that adds or changes this line.
    pub by: Option<Patch>,
}

/// Builds the listing line by line.
struct Listing {
    lines: Vec<CodeLine>,
    func: &'static str,
}

impl Listing {
    fn func(&mut self, name: &'static str, signature: &str) {
        if !self.lines.is_empty() {
            self.plain("");
        }
        self.func = name;
        self.plain(signature);
    }

    fn line(&mut self, text: &str, site: Option<Site>, by: Option<Patch>) {
        self.lines.push(CodeLine {
            func: self.func,
            text: text.to_string(),
            site,
            by,
        });
    }

    fn plain(&mut self, text: &str) {
        self.line(text, None, None);
    }

    fn at(&mut self, text: &str, site: Site) {
        self.line(text, Some(site), None);
    }
}

/// The wake-up path of `set` as kernel-style code ([module docs](self)).
pub fn listing(set: &PatchSet) -> Vec<CodeLine> {
    let release = set.release;
    let f = set.features;
    let has = |p: Patch| set.has(p).then_some(p);
    let cluster = has(Patch::Cluster).or(has(Patch::ClusterScan));
    let fallback = has(Patch::Cluster);
    let cookie = has(Patch::CookieFastpath);
    let l2c = has(Patch::TtwuL2c);
    let wrap = if release >= Release::new(5, 14) {
        "target + 1"
    } else {
        "target"
    };
    let mut l = Listing {
        lines: Vec::new(),
        func: "",
    };

    l.func(
        "try_to_wake_up",
        "try_to_wake_up(p, state, wake_flags)  /* the placement part */",
    );
    l.plain("{");
    l.at(
        "    if (READ_ONCE(p->on_cpu) && ttwu_queue_wakelist(p, task_cpu(p), wake_flags))",
        Site::OnCpuWakelist,
    );
    l.plain("        goto unlock;");
    l.plain("    cpu = select_task_rq(p, p->wake_cpu, wake_flags | WF_TTWU);");
    l.plain("    ttwu_queue(p, cpu, wake_flags);");
    l.plain("}");

    l.func("select_task_rq", "select_task_rq(p, cpu, wake_flags)");
    l.plain("{");
    l.plain("    if (p->nr_cpus_allowed > 1 && !is_migration_disabled(p))");
    l.plain("        cpu = p->sched_class->select_task_rq(p, cpu, wake_flags);");
    l.plain("    else");
    l.at("        cpu = cpumask_any(p->cpus_ptr);", Site::SingleCpu);
    l.plain("    if (unlikely(!is_cpu_allowed(p, cpu)))");
    l.at(
        "        cpu = select_fallback_rq(task_cpu(p), p);",
        Site::Fallback,
    );
    l.plain("    return cpu;");
    l.plain("}");

    l.func(
        "select_task_rq_fair",
        "select_task_rq_fair(p, prev_cpu, wake_flags)",
    );
    l.at("{", Site::FairEnter);
    l.plain("    int sync = (wake_flags & WF_SYNC) && !(current->flags & PF_EXITING);");
    l.plain("    int cpu = smp_processor_id(), new_cpu = prev_cpu, want_affine = 0;");
    l.plain("    if (wake_flags & WF_TTWU) {");
    l.plain("        record_wakee(p);");
    if release >= Release::new(6, 6) {
        l.plain("        if ((wake_flags & WF_CURRENT_CPU) && cpumask_test_cpu(cpu, p->cpus_ptr))");
        l.at("            return cpu;", Site::CurrentCpu);
    }
    l.at(
        "        want_affine = !wake_wide(p) && cpumask_test_cpu(cpu, p->cpus_ptr);",
        Site::WakeWide,
    );
    l.plain("    }");
    l.plain("    for_each_domain(cpu, tmp) {");
    l.plain("        if (want_affine && (tmp->flags & SD_WAKE_AFFINE) &&");
    l.at(
        "            cpumask_test_cpu(prev_cpu, sched_domain_span(tmp))) {",
        Site::AffineDomain,
    );
    l.plain("            if (cpu != prev_cpu)");
    l.plain("                new_cpu = wake_affine(tmp, p, cpu, prev_cpu, sync);");
    l.plain("            sd = NULL;  /* prefer wake_affine over balance flags */");
    l.plain("            break;");
    l.plain("        }");
    l.plain("        if (tmp->flags & sd_flag)");
    l.plain("            sd = tmp;");
    l.plain("        else if (!want_affine)");
    l.plain("            break;");
    l.plain("    }");
    l.plain("    if (unlikely(sd))");
    l.at(
        "        new_cpu = find_idlest_cpu(sd, p, cpu, prev_cpu, sd_flag);  /* slow path */",
        Site::FindIdlest,
    );
    l.plain("    else if (wake_flags & WF_TTWU)");
    l.plain("        new_cpu = select_idle_sibling(p, prev_cpu, new_cpu);  /* fast path */");
    l.at("    return new_cpu;", Site::FairReturnFast);
    l.plain("}");

    l.func("wake_wide", "wake_wide(p)");
    l.plain("{");
    l.plain("    unsigned int master = current->wakee_flips, slave = p->wakee_flips;");
    l.plain("    int factor = __this_cpu_read(sd_llc_size);");
    l.plain("    if (master < slave)");
    l.plain("        swap(master, slave);");
    l.at(
        "    if (slave < factor || master < slave * factor)",
        Site::WakeWide,
    );
    l.plain("        return 0;");
    l.plain("    return 1;");
    l.plain("}");

    l.func(
        "wake_affine",
        "wake_affine(sd, p, this_cpu, prev_cpu, sync)",
    );
    l.plain("{");
    l.plain("    int target = nr_cpumask_bits;");
    if f.wa_idle {
        l.plain("    if (sched_feat(WA_IDLE))");
        l.plain("        target = wake_affine_idle(this_cpu, prev_cpu, sync);");
    }
    if f.wa_weight {
        l.plain("    if (sched_feat(WA_WEIGHT) && target == nr_cpumask_bits)");
        l.plain("        target = wake_affine_weight(sd, p, this_cpu, prev_cpu, sync);");
    }
    l.plain("    if (target != this_cpu)");
    l.at("        return prev_cpu;", Site::WakeAffinePrev);
    l.at("    return target;", Site::WakeAffineThis);
    l.plain("}");

    l.func(
        "wake_affine_idle",
        "wake_affine_idle(this_cpu, prev_cpu, sync)",
    );
    l.plain("{");
    l.at(
        "    if (available_idle_cpu(this_cpu) && cpus_share_cache(this_cpu, prev_cpu))",
        Site::AffineIdleThis,
    );
    l.plain("        return available_idle_cpu(prev_cpu) ? prev_cpu : this_cpu;");
    l.at(
        "    if (sync && cpu_rq(this_cpu)->nr_running == 1)",
        Site::AffineIdleSync,
    );
    l.plain("        return this_cpu;");
    l.at(
        "    if (available_idle_cpu(prev_cpu))",
        Site::AffineIdlePrev,
    );
    l.plain("        return prev_cpu;");
    l.plain("    return nr_cpumask_bits;");
    l.plain("}");

    l.func(
        "wake_affine_weight",
        "wake_affine_weight(sd, p, this_cpu, prev_cpu, sync)",
    );
    l.plain("{");
    l.plain("    this_eff_load = cpu_load(cpu_rq(this_cpu));");
    l.plain("    if (sync) {");
    l.plain("        unsigned long current_load = task_h_load(current);");
    l.plain("        if (current_load > this_eff_load)");
    l.plain("            return this_cpu;");
    l.plain("        this_eff_load -= current_load;");
    l.plain("    }");
    l.plain("    this_eff_load += task_h_load(p);");
    if f.wa_bias {
        l.plain("    if (sched_feat(WA_BIAS))");
        l.plain("        this_eff_load *= 100;");
    }
    l.plain("    this_eff_load *= capacity_of(prev_cpu);");
    l.plain("    prev_eff_load = cpu_load(cpu_rq(prev_cpu)) - task_h_load(p);");
    if f.wa_bias {
        l.plain("    if (sched_feat(WA_BIAS))");
        l.plain("        prev_eff_load *= 100 + (sd->imbalance_pct - 100) / 2;");
    }
    l.plain("    prev_eff_load *= capacity_of(this_cpu);");
    l.plain("    if (sync)");
    l.plain("        prev_eff_load += 1;");
    l.at(
        "    return this_eff_load < prev_eff_load ? this_cpu : nr_cpumask_bits;",
        Site::AffineWeight,
    );
    l.plain("}");

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
    l.plain("    if (is_per_cpu_kthread(current) && in_task() &&");
    l.plain("        prev == smp_processor_id() &&");
    l.at(
        "        this_rq()->nr_running <= 1 && asym_fits_cpu(…, prev))",
        Site::SisKthread,
    );
    l.at("        return prev;", Site::SisKthreadReturn);
    l.plain("    recent_used_cpu = p->recent_used_cpu;");
    l.plain("    p->recent_used_cpu = prev;");
    l.plain("    if (recent_used_cpu != prev && recent_used_cpu != target &&");
    l.plain("        cpus_share_cache(recent_used_cpu, target) &&");
    l.plain("        (available_idle_cpu(recent_used_cpu) || sched_idle_cpu(recent_used_cpu)) &&");
    if cookie.is_some() {
        l.line(&cookie_and("recent_used_cpu"), None, cookie);
    }
    l.plain("        cpumask_test_cpu(recent_used_cpu, p->cpus_ptr) &&");
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
    let smt_idle = release >= Release::new(5, 13);
    match has(Patch::NoSmtIdleCores) {
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

    l.func(
        "select_idle_capacity",
        "select_idle_capacity(p, sd, target)",
    );
    l.plain("{");
    l.plain("    for_each_cpu_wrap(cpu, cpus, target) {");
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

    l.func(
        "select_idle_cpu",
        "select_idle_cpu(p, sd, has_idle_core, target)",
    );
    l.at("{", Site::ScanEnter);
    l.plain("    int i, cpu, idle_cpu = -1, nr = INT_MAX;");
    l.plain("    cpumask_and(cpus, sched_domain_span(sd), p->cpus_ptr);");
    if f.sis_prop && release < Release::new(6, 7) {
        l.plain("    if (sched_feat(SIS_PROP) && !has_idle_core) {");
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
    l.plain("            if (--nr <= 0)");
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
    l.plain("        set_idle_cores(target, false);");
    l.at("    return idle_cpu;", Site::ScanReturn);
    l.plain("}");

    l.func(
        "select_idle_core",
        "select_idle_core(p, core, cpus, &idle_cpu)",
    );
    l.plain("{");
    l.plain("    bool idle = true;");
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

    l.func(
        "ttwu_queue_cond",
        "ttwu_queue_cond(p, cpu)  /* kernel/sched/core.c */",
    );
    l.plain("{");
    l.plain("    if (!cpu_active(cpu))");
    l.plain("        return false;");
    l.plain("    if (!cpumask_test_cpu(cpu, p->cpus_ptr))");
    l.plain("        return false;");
    match l2c {
        Some(p) => l.line(
            "    if (!cpus_share_l2c(smp_processor_id(), cpu))",
            Some(Site::QueueCond),
            Some(p),
        ),
        None => l.at(
            "    if (!cpus_share_cache(smp_processor_id(), cpu))",
            Site::QueueCond,
        ),
    }
    l.plain("        return true;");
    l.plain("    if (cpu == smp_processor_id())");
    l.plain("        return false;");
    if release >= Release::new(5, 19) {
        l.plain("    if (!cpu_rq(cpu)->nr_running)");
    } else {
        l.plain("    if ((wake_flags & WF_ON_CPU) && cpu_rq(cpu)->nr_running <= 1)");
    }
    l.plain("        return true;");
    l.plain("    return false;");
    l.plain("}");

    l.func("ttwu_queue", "ttwu_queue(p, cpu, wake_flags)");
    l.plain("{");
    if f.ttwu_queue {
        l.plain("    if (sched_feat(TTWU_QUEUE) && ttwu_queue_cond(p, cpu)) {");
        l.at(
            "        __ttwu_queue_wakelist(p, cpu, wake_flags);  /* IPI unless pending or polling */",
            Site::QueueWakelist,
        );
        l.plain("        return;");
        l.plain("    }");
    }
    l.plain("    rq_lock(rq, &rf);  /* the waker's own rq, or the target's: a remote lock */");
    l.at(
        "    ttwu_do_activate(rq, p, wake_flags, &rf);",
        Site::QueueRemote,
    );
    l.plain("    rq_unlock(rq, &rf);");
    l.plain("}");

    l.lines
}

/// Where each step of `trace` comes from: `(step index, site)` for every step, in
/// order, or the first step no line accounts for.
pub fn hits(trace: &Trace) -> Result<Vec<(usize, Site)>, String> {
    // Inside select_idle_cpu()'s cluster loop: between its Enter and its Return, or
    // the end of select_idle_cpu().
    let mut in_cluster = false;
    let mut out = Vec::with_capacity(trace.steps.len());
    for (i, step) in trace.steps.iter().enumerate() {
        let site = site_of(step, &mut in_cluster)
            .ok_or_else(|| format!("no line of the listing produces step {i}: {step:?}"))?;
        out.push((i, site));
    }
    Ok(out)
}

fn site_of(step: &Step, in_cluster: &mut bool) -> Option<Site> {
    use Site::*;
    Some(match step {
        Step::Enter { func, .. } => match *func {
            "select_task_rq_fair" => FairEnter,
            "select_idle_sibling" => SisEnter,
            "select_idle_cpu" => {
                *in_cluster = false;
                ScanEnter
            }
            "select_idle_cpu/cluster" => {
                *in_cluster = true;
                ClusterEnter
            }
            _ => return None,
        },
        Step::Check {
            func, condition, ..
        } => {
            let c = condition.as_str();
            match *func {
                "select_task_rq" => SingleCpu,
                "wake_wide" => WakeWide,
                "select_task_rq_fair" => AffineDomain,
                "wake_affine_idle" if c.starts_with("this CPU") => AffineIdleThis,
                "wake_affine_idle" if c.starts_with("sync wake-up") => AffineIdleSync,
                "wake_affine_idle" if c.starts_with("prev CPU") => AffineIdlePrev,
                "wake_affine_weight" => AffineWeight,
                "select_idle_sibling" if c.starts_with("target CPU") => SisTarget,
                "select_idle_sibling" if c.contains("shares the LLC") && c.starts_with("prev") => {
                    SisPrev
                }
                "select_idle_sibling" if c.contains("shares the cluster") => SisPrevCluster,
                "select_idle_sibling" if c.starts_with("waker is a per-CPU kthread") => SisKthread,
                "select_idle_sibling" if c.starts_with("recent_used_cpu") => SisRecent,
                "select_idle_sibling" if c.starts_with("test_idle_cores") => SisIdleCores,
                "ttwu_queue_cond" => QueueCond,
                _ => return None,
            }
        }
        Step::Probe { func, reject, .. } => {
            let spent = *reject == Some(super::Reject::BudgetSpent);
            match (*func, *in_cluster, spent) {
                ("select_idle_smt", ..) => SmtProbe,
                ("select_idle_capacity", ..) => CapacityProbe,
                ("select_idle_core", ..) => CoreProbe,
                ("select_idle_cpu", true, true) => ClusterBudget,
                ("select_idle_cpu", true, false) => ClusterProbe,
                ("select_idle_cpu", false, true) => ScanBudget,
                ("select_idle_cpu", false, false) => ScanProbe,
                _ => return None,
            }
        }
        Step::Budget { func, why, .. } => match *func {
            "select_idle_cpu" if why.starts_with("SIS_UTIL") => ScanUtilBudget,
            "select_idle_cpu" if why.starts_with("SIS_PROP") => ScanPropBudget,
            _ => return None,
        },
        Step::Return { func, why, .. } => {
            let w = why.as_str();
            match *func {
                "select_fallback_rq" => Fallback,
                "find_idlest_cpu" => FindIdlest,
                "wake_affine" if w == "stay near prev" => WakeAffinePrev,
                "wake_affine" if w == "pull towards the waker" => WakeAffineThis,
                "select_task_rq_fair" if w == "WF_CURRENT_CPU" => CurrentCpu,
                "select_task_rq_fair" if w == "slow path" => FairReturnSlow,
                "select_task_rq_fair" if w == "fast path" => FairReturnFast,
                "select_idle_sibling" => match w {
                    "target is idle" => SisTargetReturn,
                    "prev is idle and cache affine" => SisPrevReturn,
                    "stack with the per-CPU kthread" => SisKthreadReturn,
                    "recent_used_cpu is idle and cache affine" => SisRecentReturn,
                    "select_idle_capacity()" => SisCapacity,
                    "no LLC domain" => SisNoLlc,
                    "idle SMT sibling of prev" => SisSmtReturn,
                    "select_idle_cpu() found an idle CPU" => SisScanReturn,
                    "cluster scan found nothing: fall back to prev" => SisPrevAffReturn,
                    "cluster scan found nothing: fall back to recent_used_cpu" => {
                        SisRecentAffReturn
                    }
                    "nothing idle: stay on target" => SisTargetLast,
                    _ => return None,
                },
                "select_idle_cpu/cluster" => {
                    *in_cluster = false;
                    ClusterDone
                }
                "select_idle_cpu" => {
                    let was = std::mem::replace(in_cluster, false);
                    match w {
                        "nr_idle_scan is 0: the LLC is overloaded, no scan" => ScanUtilZero,
                        "scan budget spent in the cluster" => ClusterBudget,
                        "idle core in the cluster" => ClusterCoreReturn,
                        "idle CPU in the cluster" => ClusterProbeReturn,
                        "scan budget spent" if !was => ScanBudget,
                        "idle core" => ScanCoreReturn,
                        "an idle thread (no idle core)" | "idle CPU" | "no idle CPU in the LLC" => {
                            ScanReturn
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        Step::Queue { path, why } => match path {
            _ if why.starts_with("p is still on_cpu") => OnCpuWakelist,
            QueuePath::Wakelist { .. } => QueueWakelist,
            QueuePath::Local => QueueLocal,
            QueuePath::RemoteLock => QueueRemote,
        },
    })
}

/// The site a listing line for `site` stands on: the local enqueue shares the
/// remote one's line (`ttwu_do_activate()` under the rq lock), the slow path's return
/// shares the fast path's.
pub fn line_site(site: Site) -> Site {
    match site {
        Site::QueueLocal => Site::QueueRemote,
        Site::FairReturnSlow => Site::FairReturnFast,
        s => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> PatchSet {
        text.parse().expect("a patch set")
    }

    fn text(set: &PatchSet) -> String {
        listing(set)
            .iter()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn marked(set: &PatchSet, p: Patch) -> usize {
        listing(set).iter().filter(|l| l.by == Some(p)).count()
    }

    #[test]
    fn the_listing_follows_the_release() {
        let v515 = text(&set("5.15"));
        assert!(v515.contains("sched_feat(SIS_PROP)") && v515.contains("wake_avg_idle"));
        assert!(!v515.contains("SIS_UTIL") && !v515.contains("WF_CURRENT_CPU"));
        assert!(v515.contains("WF_ON_CPU"), "before 5.19's idle-target rule");
        let v68 = text(&set("6.8"));
        assert!(v68.contains("nr_idle_scan") && !v68.contains("SIS_PROP"));
        assert!(v68.contains("WF_CURRENT_CPU") && v68.contains("!cpu_rq(cpu)->nr_running"));
        assert!(v68.contains("for_each_cpu_wrap(cpu, cpus, target + 1)"));
        let llc_test = "if (!cpumask_test_cpu(cpu, sched_domain_span(sd)))";
        assert!(!v68.contains(llc_test), "6.9's LLC test is not in 6.8");
        assert!(text(&set("6.12")).contains(llc_test));
    }

    #[test]
    fn each_patch_marks_the_lines_it_adds_or_changes() {
        // Seed 01: the cluster tests on prev and recent, the cluster-first scan, and
        // (3/3 only) the prev/recent fallback.
        assert_eq!(marked(&set("6.6"), Patch::Cluster), 0);
        let full = marked(&set("6.6+cluster"), Patch::Cluster);
        let scan = marked(&set("6.6+cluster-scan"), Patch::ClusterScan);
        assert!(full > scan && scan >= 20, "full {full}, scan-only {scan}");
        assert!(text(&set("6.6+cluster")).contains("return prev_aff;"));
        assert!(!text(&set("6.6+cluster-scan")).contains("prev_aff"));
        // Seed 02: the sched_smt_active() test around test_idle_cores().
        assert_eq!(marked(&set("6.6"), Patch::NoSmtIdleCores), 1);
        assert_eq!(
            marked(&set("6.6-no-smt-idle-cores"), Patch::NoSmtIdleCores),
            0
        );
        // Seed 03: the L2 test; seed 04: a cookie test in each fast path and in
        // select_idle_smt().
        let both = set("6.8+ttwu-l2c+cookie-fastpath");
        assert_eq!(marked(&both, Patch::TtwuL2c), 1);
        assert!(text(&both).contains("cpus_share_l2c(smp_processor_id(), cpu)"));
        assert_eq!(marked(&both, Patch::CookieFastpath), 4);
        // Every site a line carries is one hits() can name, and each function's
        // lines are together.
        let l = listing(&both);
        let mut seen: Vec<&str> = Vec::new();
        for line in &l {
            if seen.last() != Some(&line.func) {
                assert!(!seen.contains(&line.func), "{} is split", line.func);
                seen.push(line.func);
            }
        }
    }

    #[test]
    fn steps_map_to_their_lines() {
        let t = Trace {
            steps: vec![
                Step::Enter {
                    func: "select_idle_cpu",
                    detail: String::new(),
                },
                Step::Enter {
                    func: "select_idle_cpu/cluster",
                    detail: String::new(),
                },
                Step::Probe {
                    func: "select_idle_cpu",
                    cpu: crate::cpumask::CpuId(1),
                    reject: Some(crate::wakeup::Reject::Busy),
                },
                Step::Return {
                    func: "select_idle_cpu/cluster",
                    cpu: None,
                    why: "nothing idle in the cluster; scan the rest of the LLC".into(),
                },
                Step::Probe {
                    func: "select_idle_cpu",
                    cpu: crate::cpumask::CpuId(5),
                    reject: Some(crate::wakeup::Reject::BudgetSpent),
                },
            ],
        };
        let sites: Vec<Site> = hits(&t).expect("mapped").into_iter().map(|h| h.1).collect();
        assert_eq!(
            sites,
            [
                Site::ScanEnter,
                Site::ClusterEnter,
                Site::ClusterProbe,
                Site::ClusterDone,
                Site::ScanBudget
            ]
        );
        let unknown = Trace {
            steps: vec![Step::Enter {
                func: "select_idle_nothing",
                detail: String::new(),
            }],
        };
        assert!(hits(&unknown).unwrap_err().contains("select_idle_nothing"));
    }
}
