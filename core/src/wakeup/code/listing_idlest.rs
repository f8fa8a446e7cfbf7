//! The slow path's part of `listing()`: `find_idlest_cpu()`,
//! `find_idlest_group()` and `find_idlest_group_cpu()` (fair.c v6.8 7107-7211,
//! 10314-10475), with the NUMA allowance's text per release.

use super::{Listing, Site};
use crate::release::Release;

/// Appends the slow path's three functions to `l`.
pub(super) fn slow_path(l: &mut Listing, release: Release) {
    l.func(
        "find_idlest_cpu",
        "find_idlest_cpu(sd, p, cpu, prev_cpu, sd_flag)  /* slow path */",
    );
    l.plain("{");
    l.plain("    int new_cpu = cpu;");
    l.plain("    if (!cpumask_intersects(sched_domain_span(sd), p->cpus_ptr))");
    l.at("        return prev_cpu;", Site::IdlestNoAllowed);
    l.plain("    while (sd) {");
    l.plain("        if (!(sd->flags & sd_flag)) {");
    l.plain("            sd = sd->child;");
    l.plain("            continue;");
    l.plain("        }");
    l.plain("        group = find_idlest_group(sd, p, cpu);");
    l.plain("        if (!group) {");
    l.plain("            sd = sd->child;");
    l.plain("            continue;");
    l.plain("        }");
    l.plain("        new_cpu = find_idlest_group_cpu(group, p, cpu);");
    l.plain("        if (new_cpu == cpu) {");
    l.plain("            sd = sd->child;");
    l.plain("            continue;");
    l.plain("        }");
    l.plain("        /* Now try balancing at a lower domain level of 'new_cpu': */");
    l.plain("        cpu = new_cpu;");
    l.plain("        weight = sd->span_weight;");
    l.plain("        sd = NULL;");
    l.plain("        for_each_domain(cpu, tmp) {");
    l.plain("            if (weight <= tmp->span_weight)");
    l.plain("                break;");
    l.plain("            if (tmp->flags & sd_flag)");
    l.plain("                sd = tmp;");
    l.plain("        }");
    l.plain("    }");
    l.at("    return new_cpu;", Site::IdlestReturn);
    l.plain("}");

    l.func("find_idlest_group", "find_idlest_group(sd, p, this_cpu)");
    l.plain("{");
    l.plain("    do {  /* each group of sd, the local one first */");
    l.plain("        if (!cpumask_intersects(sched_group_span(group), p->cpus_ptr))");
    l.plain("            continue;");
    if release >= Release::new(5, 14) {
        l.plain("        if (!sched_group_cookie_match(cpu_rq(this_cpu), p, group))");
        l.at("            continue;", Site::IdlestGroupCookie);
    }
    l.plain("        local_group = cpumask_test_cpu(this_cpu, sched_group_span(group));");
    l.at(
        "        update_sg_wakeup_stats(sd, group, sgs, p);",
        Site::IdlestGroupStats,
    );
    l.plain("        if (!local_group && update_pick_idlest(idlest, &idlest_sgs, group, sgs))");
    l.plain("            idlest = group, idlest_sgs = *sgs;");
    l.plain("    } while (group = group->next, group != sd->groups);");
    l.plain("    if (!idlest)");
    l.at("        return NULL;", Site::IdlestGroupNone);
    l.plain("    if (!local)");
    l.at("        return idlest;", Site::IdlestGroupNoLocal);
    l.plain("    if (local_sgs.group_type < idlest_sgs.group_type)");
    l.at("        return NULL;", Site::IdlestGroupLessBusy);
    l.plain("    if (local_sgs.group_type > idlest_sgs.group_type)");
    l.at("        return idlest;", Site::IdlestGroupBusier);
    l.plain("    switch (local_sgs.group_type) {");
    l.plain("    case group_overloaded:");
    l.plain("    case group_fully_busy:");
    l.plain("        imbalance = scale_load_down(NICE_0_LOAD) * (sd->imbalance_pct-100) / 100;");
    l.plain("        if ((sd->flags & SD_NUMA) &&");
    l.plain("            ((idlest_sgs.avg_load + imbalance) >= local_sgs.avg_load))");
    l.at("            return NULL;", Site::IdlestGroupNumaLoad);
    l.plain("        if (idlest_sgs.avg_load >= (local_sgs.avg_load + imbalance))");
    l.at("            return NULL;", Site::IdlestGroupLoad);
    l.plain("        if (100 * local_sgs.avg_load <= sd->imbalance_pct * idlest_sgs.avg_load)");
    l.at("            return NULL;", Site::IdlestGroupPct);
    l.plain("        break;");
    l.plain("    case group_imbalanced:");
    l.plain("    case group_asym_packing:");
    l.plain("    case group_smt_balance:");
    l.at("        return NULL;", Site::IdlestGroupUnused);
    l.plain("    case group_misfit_task:");
    l.plain("        if (local->sgc->max_capacity >= idlest->sgc->max_capacity)");
    l.at("            return NULL;", Site::IdlestGroupMisfit);
    l.plain("        break;");
    l.plain("    case group_has_spare:");
    l.plain("        if (sd->flags & SD_NUMA) {");
    if release >= Release::new(6, 0) {
        l.plain(
            "            imb_numa_nr = min(cpumask_weight(sched_group_span(local) & p->cpus_ptr),",
        );
        l.plain("                              sd->imb_numa_nr);");
        l.plain("            imbalance = abs(local_sgs.idle_cpus - idlest_sgs.idle_cpus);");
        l.plain("            if (!adjust_numa_imbalance(imbalance, local_sgs.sum_nr_running + 1,");
        l.plain("                                       imb_numa_nr))");
    } else if release >= Release::new(5, 18) {
        l.plain(
            "            if (allow_numa_imbalance(local_sgs.sum_nr_running + 1, sd->imb_numa_nr))",
        );
    } else {
        l.plain("            if (allow_numa_imbalance(local_sgs.sum_nr_running, sd->span_weight))");
    }
    l.at("                return NULL;", Site::IdlestGroupNuma);
    l.plain("        }");
    l.plain("        if (local_sgs.idle_cpus >= idlest_sgs.idle_cpus)");
    l.at("            return NULL;", Site::IdlestGroupIdle);
    l.plain("        break;");
    l.plain("    }");
    l.at("    return idlest;", Site::IdlestGroupPush);
    l.plain("}");

    l.func(
        "find_idlest_group_cpu",
        "find_idlest_group_cpu(group, p, this_cpu)",
    );
    l.plain("{");
    l.plain("    if (group->group_weight == 1)");
    l.at(
        "        return cpumask_first(sched_group_span(group));",
        Site::IdlestCpuOne,
    );
    l.plain("    for_each_cpu_and(i, sched_group_span(group), p->cpus_ptr) {");
    if release >= Release::new(5, 14) {
        l.plain("        if (!sched_core_cookie_match(cpu_rq(i), p))");
        l.plain("            continue;");
    }
    l.plain("        if (sched_idle_cpu(i))");
    l.at("            return i;", Site::IdlestCpuSchedIdle);
    l.plain("        if (available_idle_cpu(i)) {");
    l.plain("            struct cpuidle_state *idle = idle_get_state(cpu_rq(i));");
    l.plain("            if (idle && idle->exit_latency < min_exit_latency) {");
    l.plain("                min_exit_latency = idle->exit_latency;");
    l.plain("                latest_idle_timestamp = cpu_rq(i)->idle_stamp;");
    l.plain("                shallowest_idle_cpu = i;");
    l.plain("            } else if ((!idle || idle->exit_latency == min_exit_latency) &&");
    l.plain("                       cpu_rq(i)->idle_stamp > latest_idle_timestamp) {");
    l.plain("                latest_idle_timestamp = cpu_rq(i)->idle_stamp;");
    l.plain("                shallowest_idle_cpu = i;");
    l.plain("            }");
    l.plain("        } else if (shallowest_idle_cpu == -1) {");
    l.plain("            load = cpu_load(cpu_rq(i));");
    l.plain("            if (load < min_load)");
    l.plain("                min_load = load, least_loaded_cpu = i;");
    l.plain("        }");
    l.plain("    }");
    l.at(
        "    return shallowest_idle_cpu != -1 ? shallowest_idle_cpu : least_loaded_cpu;",
        Site::IdlestCpuReturn,
    );
    l.plain("}");
}
