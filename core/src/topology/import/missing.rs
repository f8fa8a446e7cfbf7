//! The notes an importer writes when the text lacks something the kernel uses, and
//! [`Missing`], which finds them again in a machine's description.

// The notes an importer writes when the text lacks something the kernel uses; each
// ends up in the machine's description, which is how [`Missing::in_description`]
// finds them again (in a link, too).
pub(crate) const NOTE_NO_CLUSTERS_ARM64: &str =
    "plain lscpu does not show clusters: assumed none, so the kernel's CLS level \
     (e.g. Kunpeng 920's 4-CPU clusters) is missing; paste `lscpu -e` or `lscpu -p` \
     with a CLUSTER column, or the sysfs topology dump, to keep it";
pub(crate) const NOTE_NO_L2_COUNT: &str = "assumed a private L2 per core (no clusters)";
pub(crate) const NOTE_NO_CACHE_IDS: &str = "no cache ids: assumed the LLC spans the package";
pub(crate) const NOTE_NO_L3_COUNT: &str = "assumed one LLC per NUMA node";
pub(crate) const NOTE_SYSFS_LLC_SPANS_PACKAGES: &str = "the cache rows' shared_cpu_list spans packages (an ACPI PPTT without cache entries does that): no valid LLC, so the LLC is package ∩ node, as arm64's cpu_coregroup_mask() falls back to";
pub(crate) const NOTE_SYSFS_NO_CACHE_ROWS: &str =
    "no cache rows: assumed the LLC is package ∩ node";
pub(crate) const NOTE_SYSFS_CPUS_WITHOUT_CACHE: &str =
    "CPUs that no cache row covers: assumed their LLC is package ∩ node";
pub(crate) const NOTE_NO_DISTANCES: &str =
    "no `numactl -H` distance table: assumed SLIT 10 local, 12 within a package, 20 across";

/// Something the kernel uses that a pasted text did not carry, so the importer
/// assumed it and said so in the machine's description. The page offers the topology
/// designer to fill it in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    /// Cluster ids (arm64's PPTT clusters, x86's L2 sharing): the CLS level.
    Clusters,
    /// The SLIT (`numactl -H`'s distance table): the NUMA levels.
    Distances,
    /// Cache sharing (the LLC): the MC level and `sd_llc`.
    Caches,
}

impl Missing {
    pub const ALL: [Missing; 3] = [Missing::Clusters, Missing::Distances, Missing::Caches];

    /// What is missing, for a sentence ("no cluster ids").
    pub fn what(self) -> &'static str {
        match self {
            Missing::Clusters => "cluster ids (the CLS level)",
            Missing::Distances => "NUMA distances (the NUMA levels)",
            Missing::Caches => "cache sharing (which CPUs share the LLC: the MC level)",
        }
    }

    fn notes(self) -> &'static [&'static str] {
        match self {
            Missing::Clusters => &[NOTE_NO_CLUSTERS_ARM64, NOTE_NO_L2_COUNT],
            Missing::Distances => &[NOTE_NO_DISTANCES],
            Missing::Caches => &[
                NOTE_NO_CACHE_IDS,
                NOTE_NO_L3_COUNT,
                NOTE_SYSFS_LLC_SPANS_PACKAGES,
                NOTE_SYSFS_NO_CACHE_ROWS,
                NOTE_SYSFS_CPUS_WITHOUT_CACHE,
            ],
        }
    }

    /// What an imported machine's description says was assumed. The description
    /// holds each note as a sentence (first letter capitalised), so the note is
    /// matched without its first character.
    pub fn in_description(description: &str) -> Vec<Missing> {
        Missing::ALL
            .into_iter()
            .filter(|m| {
                m.notes().iter().any(|note| {
                    let rest = note.get(1..).unwrap_or(note);
                    description.contains(rest)
                })
            })
            .collect()
    }
}
