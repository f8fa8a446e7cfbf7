//! The glossary behind the page's pop-overs: every `SD_*` flag the domain cards show
//! and the wake-up path's terms, each in a few sentences for a student, with the
//! kernel function or file where it lives (v6.8 unless a release is named).
//!
//! A test checks that every flag name of every modelled release has an entry and
//! that every `[[term]]` a lesson uses is here.

/// One entry: the key as the page and kernel spell it, a short title, the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    pub key: &'static str,
    pub title: &'static str,
    pub text: &'static str,
}

const fn t(key: &'static str, title: &'static str, text: &'static str) -> Term {
    Term { key, title, text }
}

/// Every entry, flags first (in `sd_flags.h` order), then terms.
pub const TERMS: &[Term] = &[
    t(
        "SD_BALANCE_NEWIDLE",
        "balance when a CPU goes idle",
        "A CPU about to go idle may pull work from the other groups of this domain first \
       (newidle_balance() in fair.c). Set on every level by sd_init().",
    ),
    t(
        "SD_BALANCE_EXEC",
        "balance on exec()",
        "An exec()ing task may be placed anywhere in this domain: select_task_rq_fair() \
       then takes the slow path, find_idlest_cpu(). Cleared on NUMA levels farther \
       than node_reclaim_distance.",
    ),
    t(
        "SD_BALANCE_FORK",
        "balance on fork()",
        "A new task may be placed anywhere in this domain, through find_idlest_cpu() \
       (the slow path). Cleared on far NUMA levels like SD_BALANCE_EXEC.",
    ),
    t(
        "SD_BALANCE_WAKE",
        "balance on wake-up",
        "Would send wake-ups through the slow path, find_idlest_cpu(). sd_init() never \
       sets it, so wake-ups stay on the fast path, select_idle_sibling().",
    ),
    t(
        "SD_WAKE_AFFINE",
        "wake-ups may pull",
        "select_task_rq_fair() walks up the waker's domains to the first one with this \
       flag that also spans the wakee's prev CPU, and asks wake_affine() whether to \
       pull the wakee towards the waker. The only flag that does not need groups.",
    ),
    t(
        "SD_ASYM_CPUCAPACITY",
        "CPUs of different sizes",
        "Set by asym_cpu_capacity_classify() (topology.c) when the span holds CPUs of \
       different capacity (big.LITTLE, hybrid). Wake-ups then use \
       select_idle_capacity().",
    ),
    t(
        "SD_ASYM_CPUCAPACITY_FULL",
        "every CPU size is here",
        "Like SD_ASYM_CPUCAPACITY, and the span holds every capacity the machine has; \
       the lowest such domain is sd_asym_cpucapacity.",
    ),
    t(
        "SD_SHARE_CPUCAPACITY",
        "SMT siblings",
        "The CPUs of this domain are hardware threads of one core and share its \
       execution units (cpu_smt_flags()). Only the SMT level has it.",
    ),
    t(
        "SD_CLUSTER",
        "a cluster of cores",
        "The CPUs share a cluster: on Kunpeng 920 the L3 tag of 4 cores, on Intel Atom \
       an L2. Added by seed 01's patch 1/3 (merged in 6.7) in cpu_cluster_flags(); \
       update_top_cache_domain() takes sd_share_id from the lowest domain with it, and \
       build_sched_domains() turns on sched_cluster_active.",
    ),
    t(
        "SD_SHARE_PKG_RESOURCES",
        "CPUs share a cache",
        "The CPUs share a cache (the LLC, or a cluster's tag or L2). The highest domain \
       with it is the CPU's sd_llc: the span select_idle_cpu() scans and \
       cpus_share_cache() compares. Renamed SD_SHARE_LLC in 6.9.",
    ),
    t(
        "SD_SHARE_LLC",
        "CPUs share the last-level cache",
        "6.9's name for SD_SHARE_PKG_RESOURCES: the highest domain with it is sd_llc, \
       the span select_idle_cpu() scans for an idle CPU.",
    ),
    t(
        "SD_SERIALIZE",
        "one balancer at a time",
        "Only one CPU at a time may balance this domain (a global lock in \
       rebalance_domains(), fair.c): set on NUMA levels, where balancing is expensive.",
    ),
    t(
        "SD_ASYM_PACKING",
        "prefer some CPUs",
        "Tasks are packed onto the higher-priority CPUs of the span (Intel ITMT \
       turbo cores, POWER SMT modes).",
    ),
    t(
        "SD_PREFER_SIBLING",
        "spread to the sibling groups",
        "Load balancing prefers to spread tasks over this domain's groups before \
       stacking them; sd_init() sets it except on NUMA levels.",
    ),
    t(
        "SD_OVERLAP",
        "overlapping groups",
        "The groups of this (NUMA) domain may overlap; they are built by \
       build_overlap_sched_groups().",
    ),
    t(
        "SD_NUMA",
        "a NUMA level",
        "The span crosses NUMA nodes: built from the node distance table by \
       sched_init_numa(). The lowest such domain is sd_numa.",
    ),
    t(
        "sched domain",
        "sched domain",
        "A set of CPUs the scheduler balances over, one per topology level (SMT, \
       cluster, LLC, node, NUMA) for each CPU. build_sched_domains() (topology.c) \
       builds them, and cpu_attach_domain() drops the levels that add nothing \
       (sd_degenerate()).",
    ),
    t(
        "sched group",
        "sched group",
        "A domain is split into groups: the spans of its child domains (get_group()). \
       load_balance() compares groups and moves tasks between them.",
    ),
    t(
        "LLC",
        "last-level cache",
        "The largest cache a set of cores shares (L3). The scheduler's sd_llc is the \
       highest domain with SD_SHARE_PKG_RESOURCES; cpus_share_cache() says whether two \
       CPUs share it (sd_llc_id equal). On Kunpeng 920 it is a die of 24 or 32 cores, on \
       EPYC a CCX of 8 cores.",
    ),
    t(
        "cluster",
        "cluster",
        "A few cores that share something smaller than the LLC: on Kunpeng 920 four \
       cores share an L3 tag partition, on Intel Atom four cores share an L2. \
       Reaching a CPU in the same cluster is cheaper than one elsewhere in the LLC.",
    ),
    t(
        "sd_llc",
        "sd_llc",
        "Per CPU: the highest domain with SD_SHARE_PKG_RESOURCES, set by \
       update_top_cache_domain(). sd_llc_id is its first CPU, sd_llc_size its \
       weight, sd_llc_shared its shared state (has_idle_cores, nr_idle_scan).",
    ),
    t(
        "sd_share_id",
        "sd_share_id",
        "Per CPU (6.7+): the first CPU of the lowest SD_CLUSTER domain, or sd_llc_id \
       without clusters. cpus_share_resources() compares it.",
    ),
    t(
        "sched_cluster_active",
        "sched_cluster_active",
        "A static key (6.7+) that build_sched_domains() turns on when some CPU has an \
       SD_CLUSTER domain. Only then does select_idle_sibling() prefer the cluster.",
    ),
    t(
        "select_task_rq_fair",
        "select_task_rq_fair()",
        "fair.c's answer to 'which CPU should this task run on?' for wake-ups, forks \
       and execs. For a wake-up: record_wakee(), then wake_wide() and wake_affine() \
       choose a target (the waker's CPU or prev), then select_idle_sibling() looks \
       for an idle CPU near it.",
    ),
    t(
        "select_idle_sibling",
        "select_idle_sibling()",
        "The wake-up fast path (fair.c): take target if idle, else prev if idle and \
       sharing the LLC, else recent_used_cpu, else scan the LLC with \
       select_idle_cpu(); return target if nothing is idle. With the cluster patch, \
       prev and recent count only inside target's cluster, and are fallbacks after \
       the scan otherwise.",
    ),
    t(
        "select_idle_cpu",
        "select_idle_cpu()",
        "Scans target's LLC for an idle CPU, starting after target and wrapping \
       (for_each_cpu_wrap). SIS_UTIL limits it to nr_idle_scan CPUs; with \
       sched_cluster_active it scans target's cluster first.",
    ),
    t(
        "wake_affine",
        "wake_affine()",
        "Decides whether the wakee should move to the waker's CPU ('this') or stay \
       near prev: wake_affine_idle() looks at idleness and WF_SYNC, \
       wake_affine_weight() at the two CPUs' load. Its answer is select_idle_sibling()'s \
       target.",
    ),
    t(
        "wake_wide",
        "wake_wide()",
        "Says when a waker wakes too many different tasks (wakee_flips, counted by \
       record_wakee()) for pulling them all onto its own cache: then want_affine is \
       false and the wakee stays near prev.",
    ),
    t(
        "WF_SYNC",
        "WF_SYNC",
        "A wake flag: the waker is about to sleep (a pipe or socket write followed \
       by a read). wake_affine_idle() then pulls the wakee to the waker's CPU if \
       only the waker runs there.",
    ),
    t(
        "target",
        "target",
        "The CPU select_idle_sibling() starts from: the waker's CPU if wake_affine() \
       pulled, else the wakee's prev CPU.",
    ),
    t(
        "prev",
        "prev CPU",
        "task_cpu(p): where the wakee last ran. Its caches may still hold the task's \
       data, so an idle prev is a good place to wake up.",
    ),
    t(
        "recent_used_cpu",
        "recent_used_cpu",
        "p->recent_used_cpu: the prev of the wake-up before. select_idle_sibling() \
       tries it after prev, and sets it to prev every time.",
    ),
    t(
        "SIS_UTIL",
        "SIS_UTIL",
        "A sched feature (on since 6.0) that bounds select_idle_cpu()'s scan by the LLC's \
       nr_idle_scan: the busier the LLC, the fewer CPUs are tried.",
    ),
    t(
        "SIS_PROP",
        "SIS_PROP",
        "The older scan bound: CPUs to try in proportion to this CPU's average idle \
       time over the average scan cost (avg_idle, avg_scan_cost). Off by default since \
       6.0; its code was removed in 6.7.",
    ),
    t(
        "nr_idle_scan",
        "nr_idle_scan",
        "Per LLC (sd_llc_shared): how many CPUs select_idle_cpu() may try. \
       update_idle_cpu_scan() sets it during load balancing at the LLC level: the LLC's \
       size × (1 − (util/1024)² × 1.17²), 0 at about 85% average utilisation. 0 skips \
       the scan.",
    ),
    t(
        "has_idle_cores",
        "has_idle_cores",
        "Per LLC (sd_llc_shared), SMT machines: some core has all its threads idle. \
       When set, select_idle_cpu() looks for a whole idle core and ignores the scan \
       budget. Seed 02 stops non-SMT machines from reading it (5.13).",
    ),
    t(
        "avg_idle",
        "avg_idle",
        "Per runqueue: an average of how long this CPU stays idle. SIS_PROP used it \
       (as wake_avg_idle) to size the scan; newidle balancing uses it too.",
    ),
    t(
        "util",
        "util (util_avg)",
        "PELT's utilisation: how busy a CPU or task has recently been, 0 to 1024 per \
       CPU, decaying with a 32 ms half-life. nr_idle_scan is computed from it.",
    ),
    t(
        "capacity",
        "capacity",
        "How much work a CPU can do, 1024 for the biggest. Groups sum their CPUs' \
       capacity (cap= in the cards); on hybrid machines small cores have less.",
    ),
    t(
        "wakelist",
        "wakelist (TTWU_QUEUE)",
        "Instead of locking the target's runqueue, the waker puts the task on the \
       target's wake list and sends an IPI; the target enqueues it itself \
       (ttwu_queue_wakelist(), core.c). ttwu_queue_cond() chooses: other LLC, or an \
       idle target, uses the list; a busy target in the same LLC is locked \
       remotely.",
    ),
    t(
        "TTWU_QUEUE",
        "TTWU_QUEUE",
        "The sched feature that allows the wakelist (on by default, off under \
       PREEMPT_RT).",
    ),
    t(
        "IPI",
        "IPI",
        "An inter-processor interrupt: how a waker tells another CPU to look at its \
       wake list. No IPI is needed when the target's idle task is polling \
       (set_nr_if_polling()).",
    ),
    t(
        "remote rq lock",
        "remote runqueue lock",
        "The waker takes the target CPU's runqueue lock and enqueues the task itself. \
       Cheap when the lock's cache line is close; contended when many CPUs of a big \
       LLC do it at once (seed 03).",
    ),
    t(
        "cpus_share_l2c",
        "cpus_share_l2c()",
        "Seed 03's test (RFC, not merged): whether two CPUs share an L2. ttwu_queue_cond() \
       uses it instead of cpus_share_cache(), so only L2 neighbours lock each other's \
       runqueues.",
    ),
    t(
        "core scheduling",
        "core scheduling",
        "Lets only tasks that trust each other (the same cookie) run on the SMT \
       siblings of a core at the same time (kernel/sched/core_sched.c). A sibling \
       with nothing compatible to run is forced idle.",
    ),
    t(
        "cookie",
        "core-scheduling cookie",
        "A tag a process group gets with prctl(PR_SCHED_CORE): tasks with equal \
       cookies may share a core. sched_core_cookie_match() is true when core \
       scheduling is off, the whole core is idle, or the cookies are equal.",
    ),
    t(
        "force idle",
        "force idle",
        "A sibling kept idle although it has a task, because the task's cookie does not \
       match what runs on the other thread. Seed 04 avoids creating it on wake-up.",
    ),
    t(
        "SMT",
        "SMT (hyper-threading)",
        "Two (or more) hardware threads per core, sharing its execution units and L1/L2. \
       The SMT domain is the lowest level.",
    ),
];

/// The entry for `key` (exact spelling), if any.
pub fn term(key: &str) -> Option<&'static Term> {
    TERMS.iter().find(|t| t.key == key)
}
