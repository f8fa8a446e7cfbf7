//! [`listing()`]: the wake-up path of a patch set as kernel-style code, function by
//! function in the kernel's order (see the [module docs](super)).

use super::{CodeLine, Listing, Site};
use crate::patch::{Patch, PatchSet};
use crate::release::Release;

/// The wake-up path of `set` as kernel-style code ([module docs](super)).
pub fn listing(set: &PatchSet) -> Vec<CodeLine> {
    let release = set.release;
    let f = set.features;
    let has = |p: Patch| set.has(p).then_some(p);
    let cluster = has(Patch::Cluster).or(has(Patch::ClusterScan));
    let fallback = has(Patch::Cluster);
    let cookie = has(Patch::CookieFastpath);
    let l2c = has(Patch::TtwuL2c);
    let wrap = if release >= Release::new(5, 15) {
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

    super::listing_idlest::slow_path(&mut l, release);

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

    l.lines
}
