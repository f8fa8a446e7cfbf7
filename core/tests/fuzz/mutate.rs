//! The mutations: bytes flipped, inserted, deleted, truncated, spliced with another
//! input, numbers swapped for extremes, lists blown up; for JSON the same done to the
//! parsed tree.

use schedlab_core::rng::Rng;

/// Numbers that have broken parsers before: the integer types' edges, negative,
/// fractional and exponent forms, and the model's own limits.
const NUMBERS: &[&str] = &[
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967295",
    "4294967296",
    "2147483647",
    "65535",
    "65536",
    "4095",
    "4096",
    "4097",
    "1024",
    "1025",
    "-1",
    "0",
    "-0",
    "1e400",
    "1.5",
    "0x10",
    "99999999999999999999999999999999",
];

/// Whole CPU lists and tokens a list may become.
const LISTS: &[&str] = &[
    "0-4095",
    "0-4096",
    "0-18446744073709551615",
    "4294967295",
    "0-3:1/2",
    "0-4095:1/4096",
    "0-7:0/1",
    "5-2",
    ",",
    "-",
    "0--1",
    "all",
    "node0-65535",
    "node18446744073709551615",
];

pub(super) fn pick<'a, T>(rng: &mut Rng, xs: &'a [T]) -> &'a T {
    &xs[rng.below(xs.len() as u64) as usize]
}

fn word(rng: &mut Rng, xs: &[&'static str]) -> &'static str {
    xs[rng.below(xs.len() as u64) as usize]
}

fn char_floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One byte-level (well, char-boundary-level: every reader takes `&str`) mutation.
pub(super) fn mutate_text(rng: &mut Rng, s: &str, corpus: &[String]) -> String {
    let len = s.len();
    let at = char_floor(s, rng.below(len as u64 + 1) as usize);
    let end = char_floor(s, at + rng.below(64) as usize);
    let mut out = String::with_capacity(len + 64);
    match rng.below(10) {
        // Truncate.
        0 => out.push_str(&s[..at]),
        // Delete a span.
        1 => {
            out.push_str(&s[..at]);
            out.push_str(&s[end..]);
        }
        // Replace a char with a random printable ASCII or a structural one.
        2 => {
            out.push_str(&s[..at]);
            let c = if rng.below(2) == 0 {
                (b' ' + rng.below(95) as u8) as char
            } else {
                *pick(
                    rng,
                    &[
                        '{', '}', '[', ']', '"', ',', ':', '-', '\n', '\0', 'é', '\u{202e}',
                    ],
                )
            };
            out.push(c);
            out.extend(s[at..].chars().skip(1));
        }
        // Duplicate a span (sometimes many times).
        3 => {
            out.push_str(&s[..end]);
            let times = if rng.below(8) == 0 {
                rng.below(2000)
            } else {
                1
            };
            for _ in 0..times {
                out.push_str(&s[at..end]);
            }
            out.push_str(&s[end..]);
        }
        // Splice with another corpus input.
        4 => {
            let o = if corpus.is_empty() {
                s
            } else {
                pick(rng, corpus)
            };
            let oat = char_floor(o, rng.below(o.len() as u64 + 1) as usize);
            out.push_str(&s[..at]);
            out.push_str(&o[oat..]);
        }
        // Swap a run of digits for an extreme number.
        5 | 6 => {
            let digits: Vec<usize> = s
                .char_indices()
                .filter(|(i, c)| {
                    c.is_ascii_digit() && (*i == 0 || !s.as_bytes()[i - 1].is_ascii_digit())
                })
                .map(|(i, _)| i)
                .collect();
            if digits.is_empty() {
                out.push_str(s);
                out.push_str(word(rng, NUMBERS));
            } else {
                let d = *pick(rng, &digits);
                let e = s[d..]
                    .find(|c: char| !c.is_ascii_digit())
                    .map_or(s.len(), |k| d + k);
                out.push_str(&s[..d]);
                out.push_str(word(rng, NUMBERS));
                out.push_str(&s[e..]);
            }
        }
        // Insert a list or number token.
        7 => {
            out.push_str(&s[..at]);
            out.push_str(if rng.below(2) == 0 {
                word(rng, LISTS)
            } else {
                word(rng, NUMBERS)
            });
            out.push_str(&s[at..]);
        }
        // Flip a bit of an ASCII byte (staying ASCII so the text stays UTF-8).
        8 => {
            let mut b = s.as_bytes().to_vec();
            if let Some(i) = (0..b.len())
                .map(|_| rng.below(b.len().max(1) as u64) as usize)
                .take(4)
                .find(|&i| i < b.len() && b[i].is_ascii())
            {
                b[i] ^= 1 << rng.below(7);
            }
            out = String::from_utf8(b).unwrap_or_else(|_| s.to_string());
        }
        // Insert random bytes as text.
        _ => {
            out.push_str(&s[..at]);
            for _ in 0..rng.below(16) {
                out.push((b' ' + rng.below(95) as u8) as char);
            }
            out.push_str(&s[at..]);
        }
    }
    out
}

/// A value that breaks assumptions: extremes, wrong types, huge arrays and strings.
fn odd_value(rng: &mut Rng) -> serde_json::Value {
    use serde_json::{json, Value};
    match rng.below(12) {
        0 => json!(u64::MAX),
        1 => json!(-1),
        2 => json!(65535),
        3 => json!(4096),
        4 => json!(1.5e300),
        5 => Value::Null,
        6 => json!(true),
        7 => json!(word(rng, LISTS)),
        8 => json!(word(rng, NUMBERS)),
        9 => Value::Array(vec![json!(rng.below(5000)); rng.below(5000) as usize]),
        10 => json!("x".repeat(rng.below(100_000) as usize)),
        _ => json!({}),
    }
}

/// Mutates a JSON tree: a random node replaced, a key dropped or added, an array
/// element repeated many times.
fn mutate_json(rng: &mut Rng, v: &mut serde_json::Value, depth: u32) {
    use serde_json::{json, Value};
    // Go down a random path first, most of the time.
    if depth < 8 && rng.below(4) != 0 {
        match v {
            Value::Object(m) if !m.is_empty() => {
                let k = m
                    .keys()
                    .nth(rng.below(m.len() as u64) as usize)
                    .cloned()
                    .unwrap();
                return mutate_json(rng, m.get_mut(&k).unwrap(), depth + 1);
            }
            Value::Array(a) if !a.is_empty() => {
                let i = rng.below(a.len() as u64) as usize;
                return mutate_json(rng, &mut a[i], depth + 1);
            }
            _ => {}
        }
    }
    // Mostly keep the node's type (so the reader gets past its schema and meets the
    // value), sometimes break it.
    if rng.below(4) == 0 {
        *v = odd_value(rng);
        return;
    }
    match v {
        Value::Number(n) => {
            let x = n.as_u64().unwrap_or(1);
            *v = match rng.below(3) {
                0 => json!(rng.below(x.saturating_mul(2).saturating_add(3))),
                1 => json!(*pick(
                    rng,
                    &[
                        0u64,
                        1,
                        2,
                        63,
                        64,
                        65,
                        1023,
                        1024,
                        1025,
                        4095,
                        4096,
                        65535,
                        65536,
                        u32::MAX as u64,
                        u32::MAX as u64 + 1,
                        i64::MAX as u64,
                        u64::MAX
                    ]
                )),
                _ => json!(-(rng.below(3) as i64) - 1),
            };
        }
        Value::String(t) => {
            *t = if rng.below(3) == 0 {
                word(rng, LISTS).to_string()
            } else {
                mutate_text(rng, t, &[])
            };
        }
        Value::Bool(b) => *b = !*b,
        Value::Array(a) if !a.is_empty() => {
            let i = rng.below(a.len() as u64) as usize;
            match rng.below(3) {
                0 => {
                    a.remove(i);
                }
                1 => {
                    let e = a[i].clone();
                    let n = if rng.below(4) == 0 {
                        rng.below(3000)
                    } else {
                        1
                    } as usize;
                    a.extend(std::iter::repeat_n(e, n));
                }
                _ => {
                    let j = rng.below(a.len() as u64) as usize;
                    a.swap(i, j)
                }
            }
        }
        Value::Object(m) if !m.is_empty() && rng.below(2) == 0 => {
            let k = m
                .keys()
                .nth(rng.below(m.len() as u64) as usize)
                .cloned()
                .unwrap();
            m.remove(&k);
        }
        Value::Object(m) => {
            let k = if rng.below(2) == 0 {
                "unknown"
            } else {
                word(
                    rng,
                    &[
                        "cpus",
                        "nr_running",
                        "sweep",
                        "packages",
                        "threads_per_core",
                        "cores_per_llc",
                        "numa_distance",
                        "allowed",
                        "busy",
                        "workload",
                        "recent",
                        "vcpu_preempted",
                        "cpu",
                    ],
                )
            };
            m.insert(k.to_string(), odd_value(rng));
        }
        n => *n = odd_value(rng),
    }
}

/// A JSON input mutated either as a tree or as text.
pub(super) fn mutate_json_text(rng: &mut Rng, corpus: &[String]) -> String {
    let s = pick(rng, corpus);
    let mut out = s.clone();
    let rounds = if rng.below(2) == 0 {
        1
    } else {
        2 + rng.below(3)
    };
    for _ in 0..rounds {
        out = match (
            rng.below(5),
            serde_json::from_str::<serde_json::Value>(&out),
        ) {
            (1.., Ok(mut v)) => {
                mutate_json(rng, &mut v, 0);
                serde_json::to_string(&v).unwrap()
            }
            _ => mutate_text(rng, &out, corpus),
        };
    }
    out
}
