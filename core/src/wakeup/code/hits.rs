//! [`hits()`]: which line of the listing each step of a trace comes from.

use super::Site;
use crate::wakeup::trace::{Step, Trace};
use crate::wakeup::QueuePath;

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
            let spent = *reject == Some(crate::wakeup::Reject::BudgetSpent);
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
