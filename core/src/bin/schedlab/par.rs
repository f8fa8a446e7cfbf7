//! Independent simulations on all cores, longest first.
//!
//! Each item is one single-threaded deterministic run, so the order in which they
//! run changes nothing but the wall time. Workers take the next item from a shared
//! list sorted by estimated cost, most expensive first (LPT): the runs that finish
//! last are then short ones, and no core sits idle while another still has a long
//! run ahead of it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f` over `items` on rayon's threads, longest `cost` first; results in item order.
pub fn map_longest_first<T: Sync, R: Send>(
    items: &[T],
    cost: impl Fn(&T) -> u64,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    // Stable: equal costs keep their item order.
    order.sort_by_key(|&i| std::cmp::Reverse(cost(&items[i])));
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = rayon::current_num_threads().min(items.len()).max(1);
    rayon::scope(|s| {
        for _ in 0..workers {
            s.spawn(|_| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                let r = f(&items[i]);
                *slots[i].lock().expect("no worker panics") = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|m| {
            m.into_inner()
                .expect("no worker panics")
                .expect("every item ran")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_item_order_whatever_the_cost() {
        let items: Vec<u64> = (0..50).map(|i| (i * 37) % 11).collect();
        let got = map_longest_first(&items, |&c| c, |&x| x * 2);
        assert_eq!(got, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        assert!(map_longest_first(&[] as &[u64], |&c| c, |&x| x).is_empty());
    }

    #[test]
    fn one_worker_runs_the_most_expensive_first() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let seen = Mutex::new(Vec::new());
        pool.install(|| {
            map_longest_first(
                &[3u64, 9, 1, 9, 5],
                |&c| c,
                |&x| seen.lock().unwrap().push(x),
            )
        });
        assert_eq!(seen.into_inner().unwrap(), vec![9, 9, 5, 3, 1]);
    }
}
