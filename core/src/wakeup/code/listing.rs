//! [`listing()`]: the wake-up path of a patch set as kernel-style code, function by
//! function in the kernel's order (see the [module docs](super)).

use super::{CodeLine, Listing, Site};
use crate::patch::{Patch, PatchSet, SchedFeatures};
use crate::release::Release;

/// The wake-up path of `set` as kernel-style code ([module docs](super)).
pub fn listing(set: &PatchSet) -> Vec<CodeLine> {
    let has = |p: Patch| set.has(p).then_some(p);
    let release = set.release;
    let o = Opts {
        release,
        f: set.features,
        cluster: has(Patch::Cluster).or(has(Patch::ClusterScan)),
        fallback: has(Patch::Cluster),
        cookie: has(Patch::CookieFastpath),
        l2c: has(Patch::TtwuL2c),
        no_smt_idle_cores: has(Patch::NoSmtIdleCores),
        wrap: if release >= Release::new(5, 15) {
            "target + 1"
        } else {
            "target"
        },
        smt_idle: release >= Release::new(5, 13),
    };
    let mut l = Listing {
        lines: Vec::new(),
        func: "",
    };
    ttwu_and_select_task_rq(&mut l, &o);
    super::listing_idlest::slow_path(&mut l, release);
    wake_affine(&mut l, &o);
    super::listing_sis::sis_fast_path(&mut l, &o);
    super::listing_sis::sis_rest(&mut l, &o);
    super::listing_sis::capacity_and_smt(&mut l, &o);
    super::listing_scan::sic_budget(&mut l, &o);
    super::listing_scan::sic_loops(&mut l, &o);
    super::listing_scan::select_idle_core(&mut l, &o);
    ttwu_queue(&mut l, &o);
    l.lines
}

/// What the listing depends on, read once from the patch set: the release, the
/// features, and the patches present (`Some(p)` marks a line as `p`'s).
#[derive(Clone, Copy)]
pub(super) struct Opts {
    pub(super) release: Release,
    pub(super) f: SchedFeatures,
    /// Seed 01 (whole, or its scan part).
    pub(super) cluster: Option<Patch>,
    /// Seed 01's fall-backs outside the cluster (the whole patch).
    pub(super) fallback: Option<Patch>,
    /// Seed 04's cookie test on the fast path.
    pub(super) cookie: Option<Patch>,
    /// Seed 03's L2-cache test in `ttwu_queue_cond()`.
    pub(super) l2c: Option<Patch>,
    /// Seed 02's `sched_smt_active()` test of the idle-core hint.
    pub(super) no_smt_idle_cores: Option<Patch>,
    /// The scan's wrap start: `target + 1` from 5.15, `target` before.
    pub(super) wrap: &'static str,
    /// `select_idle_smt()` on the fast path (5.13 and on).
    pub(super) smt_idle: bool,
}

/// `try_to_wake_up()`'s placement part, `select_task_rq()` and
/// `select_task_rq_fair()` (core.c and fair.c v6.8): the fast path up to
/// `select_idle_sibling()`, the slow path's call.
pub(super) fn ttwu_and_select_task_rq(l: &mut Listing, o: &Opts) {
    let Opts { release, .. } = *o;
    l.func(
        "try_to_wake_up",
        "try_to_wake_up(p, state, wake_flags)  /* the placement part */",
    );
    l.plain("{");
    if release >= Release::new(6, 0) {
        l.at(
            "    if (READ_ONCE(p->on_cpu) && ttwu_queue_wakelist(p, task_cpu(p), wake_flags))",
            Site::OnCpuWakelist,
        );
    } else {
        l.at(
            "    if (p->on_cpu && ttwu_queue_wakelist(p, task_cpu(p), wake_flags | WF_ON_CPU))",
            Site::OnCpuWakelist,
        );
    }
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
}

/// `wake_wide()`, `wake_affine()`, `wake_affine_idle()` and `wake_affine_weight()`
/// (fair.c v6.8), with the features that switch their parts.
pub(super) fn wake_affine(l: &mut Listing, o: &Opts) {
    let Opts { f, .. } = *o;
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
}

/// `ttwu_queue_cond()` and `ttwu_queue()` (core.c v6.8): the wake list or the
/// runqueue lock, with seed 03's L2-cache test.
pub(super) fn ttwu_queue(l: &mut Listing, o: &Opts) {
    let Opts {
        release, f, l2c, ..
    } = *o;
    l.func(
        "ttwu_queue_cond",
        "ttwu_queue_cond(p, cpu)  /* kernel/sched/core.c */",
    );
    l.plain("{");
    l.plain("    if (!cpu_active(cpu))");
    l.plain("        return false;");
    if release >= Release::new(6, 0) {
        l.plain("    if (!cpumask_test_cpu(cpu, p->cpus_ptr))");
        l.plain("        return false;");
    }
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
    if release >= Release::new(6, 0) {
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
}
