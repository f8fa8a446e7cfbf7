//! A domain's sched groups as one CPU walks them: the ring the CPUs of the span
//! share, entered at the CPU's own group.
//!
//! ```text
//!   ring (one per domain level and span, shared):  [g0 g1 g2 g3]
//!   CPU in g2 walks sd->groups:                        g2 g3 g0 g1
//! ```
//!
//! The kernel's CPUs share one ring of `struct sched_group` per span
//! (`build_sched_groups()` / `get_group()`) and each CPU's `sd->groups` points at its
//! own group in it; `update_sd_lb_stats()` walks from there. A rotated copy per CPU
//! would hold span × span groups: on a 4096-CPU LLC, 16.7 million, over a GB.

use std::ops::Index;
use std::sync::Arc;

use super::Group;

/// The groups of one CPU's domain, in `sd->groups` order from the CPU's own group
/// (index 0, the local group). Groups without an online CPU are left out.
#[derive(Clone, Debug)]
pub(super) struct GroupRing {
    ring: Arc<[Group]>,
    /// Where this CPU enters `ring` (below its length, or 0 when it is empty).
    first: usize,
}

impl GroupRing {
    /// `ring` entered at `first`, which is taken modulo the ring's length.
    pub(super) fn new(ring: Arc<[Group]>, first: usize) -> GroupRing {
        let first = if ring.is_empty() {
            0
        } else {
            first % ring.len()
        };
        GroupRing { ring, first }
    }

    pub(super) fn len(&self) -> usize {
        self.ring.len()
    }

    /// The groups from the local one on, as `for_each` over `sd->groups` visits them.
    pub(super) fn iter(&self) -> impl Iterator<Item = &Group> {
        self.ring[self.first..]
            .iter()
            .chain(&self.ring[..self.first])
    }
}

impl Index<usize> for GroupRing {
    type Output = Group;

    /// The `i`-th group from the local one (`i` below [`GroupRing::len`]).
    fn index(&self, i: usize) -> &Group {
        assert!(i < self.ring.len(), "group {i} of {}", self.ring.len());
        let j = self.first + i;
        &self.ring[if j >= self.ring.len() {
            j - self.ring.len()
        } else {
            j
        }]
    }
}
