//! What the page prints of numbers and of the command line: plain functions of their
//! inputs, tested on the host.

use schedlab_core::experiment::Warmup;
use schedlab_core::patch::PatchSet;
use schedlab_core::scenario::SimSetup;
use schedlab_core::workload::Workload;
use schedlab_core::CpuSelection;
use yew::{html, Html};

/// A result or axis value: four significant digits below 10, then fewer decimals,
/// millions as `M`.
pub fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.3} M", v / 1e6)
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        // Four significant digits: 0.8447 s, 0.0002120 s.
        let decimals = (3 - a.log10().floor() as i32).clamp(0, 12) as usize;
        format!("{v:.decimals$}")
    }
}

/// An axis label: [`fmt_value`] without trailing zeros (`500`, `0.25`, `2.5 M`).
pub fn fmt_tick(v: f64) -> String {
    let s = fmt_value(v);
    let (number, unit) = s.split_once(' ').unwrap_or((&s, ""));
    let number = if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    };
    if unit.is_empty() {
        number.to_string()
    } else {
        format!("{number} {unit}")
    }
}

/// Simulated milliseconds, with the digits a short run needs.
pub fn fmt_ms(ms: f64) -> String {
    if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// A wall-clock estimate as a person reads it: "about 40 seconds", "about 4 minutes",
/// "about 3 hours", "about 28 days" (a 4096-CPU link asked for 40 024 minutes).
pub fn fmt_wall_estimate(secs: f64) -> String {
    if !secs.is_finite() {
        return "a very long time".to_string();
    }
    // Each unit from one and a half of it: 90 seconds, not "about 2 minutes" for 61 s.
    let (count, unit) = if secs < 90.5 {
        (secs.ceil(), "seconds")
    } else if secs <= 90.0 * 60.0 {
        ((secs / 60.0).round(), "minutes")
    } else if secs <= 36.0 * 3600.0 {
        ((secs / 3600.0).round(), "hours")
    } else {
        ((secs / 86400.0).round(), "days")
    };
    format!("about {count:.0} {unit}")
}

/// A change in percent, signed: `+12.81%`.
pub fn fmt_pct(c: f64) -> String {
    format!("{c:+.2}%")
}

/// The label of a workload's scale parameter.
pub fn scale_label(w: &Workload) -> &'static str {
    w.scale_name()
}

/// The `schedlab` command lines that rerun `sim` natively on `machine` (a preset
/// name, or a file for a custom machine), with the page's digests: `run` once per
/// side's patch set, or one `sweep` of A (the baseline) against B (or A again).
/// The workload's own flags are core's `Workload::cli_args()`.
pub fn cli_lines(machine: &str, sim: &SimSetup, sides: &[PatchSet]) -> Vec<String> {
    let mut args = sim.workload.cli_args();
    if !sim.sweep.is_empty() {
        if let Some(i) = args.iter().position(|a| a == "--threads") {
            args[i + 1] = sim
                .sweep
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",");
        }
    }
    let mut common = format!("--machine {machine}");
    if sim.cpus != CpuSelection::All {
        common.push_str(&format!(" --cpus {}", sim.cpus));
    }
    common.push_str(&format!(
        " {} --duration-ms {} --seed {}",
        args.join(" "),
        sim.duration_ms,
        sim.seed
    ));
    // The default warm-up (a fifth) is left out, as in the link.
    if sim.warmup == Warmup::Settled && !sim.workload.runs_to_completion() {
        common.push_str(" --warmup settled");
    }
    // `sweep` has its own default count (5): say the page's always; `run` runs one
    // unless told.
    let seeds = sim.seeds.max(1);
    match sides {
        [] => Vec::new(),
        [a, rest @ ..] if !sim.sweep.is_empty() => {
            let b = rest.first().unwrap_or(a);
            vec![format!(
                "schedlab sweep {common} --seeds {seeds} --baseline {a} --patched {b}"
            )]
        }
        _ => {
            let more = if seeds > 1 {
                format!(" --seeds {seeds}")
            } else {
                String::new()
            };
            sides
                .iter()
                .map(|p| format!("schedlab run {common}{more} --patches {p}"))
                .collect()
        }
    }
}

/// serde_json's `to_string_pretty` layout (two spaces per level, `"key": value`, `{}`
/// and `[]` when empty) for the compact JSON serde_json writes. The page writes a
/// machine's spec compactly for its links anyway; re-indenting that text gives the
/// "as JSON" views the pretty bytes without a second, pretty family of every
/// serialiser in `MachineSpec` (docs/web.md, "Three modules"). A host test checks the
/// bytes against `to_string_pretty` for every preset.
pub fn pretty_json(compact: &str) -> String {
    fn newline(out: &mut String, depth: usize) {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    }
    let mut out = String::with_capacity(compact.len() * 2);
    let (mut depth, mut in_str, mut escaped) = (0usize, false, false);
    let mut chars = compact.chars().peekable();
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                let close = if c == '{' { '}' } else { ']' };
                if chars.peek() == Some(&close) {
                    out.push(close);
                    chars.next();
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            _ => out.push(c),
        }
    }
    out
}

/// `n` and a count noun, plural unless `n` is 1: "1 wake-up", "0 moves", "2 moves".
pub fn count(n: u32, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// A piece of text laid out by [`unbroken`]: plain, kept on one line, or a place where
/// a line may break.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Whole(String),
    Break,
}

/// Units kept on a line with the number before them (longest first).
const UNITS: [&str; 6] = ["M events/s", "MB/s", "ms", "µs", "ns", "s"];

/// `s` cut where a line must not break: each C arrow after a name ("->" of
/// "sd_llc_shared->nr_idle_scan"), each range of numbers ("0-3") and each number with
/// its unit ("12 ms", "0.61 M events/s") is kept whole, and a line may break after an
/// arrow, where a column too narrow for the whole name needs it. A narrow column broke
/// them into "sd_llc_shared-" over ">nr_idle_scan", "cluster 0-" over "3", and the
/// Simulate tab's status line "12" over "ms of warm-up" (1280 × 720) and "0.61" over
/// "M events/s" (a phone). No character is added: copied text is the text.
pub fn unbroken_pieces(s: &str) -> Vec<Piece> {
    let c: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut text = String::new();
    let flush = |text: &mut String, out: &mut Vec<Piece>| {
        if !text.is_empty() {
            out.push(Piece::Text(std::mem::take(text)));
        }
    };
    let mut i = 0;
    while i < c.len() {
        if c[i] == '-' && c.get(i + 1) == Some(&'>') && i > 0 && c[i - 1] != ' ' {
            flush(&mut text, &mut out);
            out.push(Piece::Whole("->".into()));
            out.push(Piece::Break);
            i += 2;
            continue;
        }
        if c[i].is_ascii_digit() && (i == 0 || !c[i - 1].is_ascii_digit()) {
            let digits = |from: usize| {
                (from..c.len())
                    .find(|&k| !c[k].is_ascii_digit())
                    .unwrap_or(c.len())
            };
            let j = digits(i);
            if c.get(j) == Some(&'-') && c.get(j + 1).is_some_and(char::is_ascii_digit) {
                let k = digits(j + 1);
                flush(&mut text, &mut out);
                out.push(Piece::Whole(c[i..k].iter().collect()));
                i = k;
                continue;
            }
            // A number (with its decimals and thousands' commas), a space, a unit.
            let mut j = j;
            while matches!(c.get(j), Some('.' | ','))
                && c.get(j + 1).is_some_and(char::is_ascii_digit)
            {
                j = digits(j + 1);
            }
            if c.get(j) == Some(&' ') {
                let rest: String = c[j + 1..].iter().take(12).collect();
                let unit = UNITS.iter().find(|u| {
                    rest.starts_with(*u)
                        && !rest[u.len()..].starts_with(|x: char| x.is_alphanumeric())
                });
                if let Some(u) = unit {
                    let k = j + 1 + u.chars().count();
                    flush(&mut text, &mut out);
                    out.push(Piece::Whole(c[i..k].iter().collect()));
                    i = k;
                    continue;
                }
            }
        }
        text.push(c[i]);
        i += 1;
    }
    flush(&mut text, &mut out);
    out
}

/// [`unbroken_pieces`] as the page draws them: a whole piece in a `nobr` span
/// (`white-space: nowrap`), a break as `<wbr>`.
pub fn unbroken(s: &str) -> Html {
    html! {
        <>{ for unbroken_pieces(s).into_iter().map(|p| match p {
            Piece::Text(t) => html! { { t } },
            Piece::Whole(t) => html! { <span class="nobr">{ t }</span> },
            Piece::Break => html! { <wbr /> },
        }) }</>
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn arrows_and_ranges_are_whole_other_hyphens_not() {
        use super::unbroken_pieces;
        use super::Piece::{Break, Text, Whole};
        let t = |s: &str| Text(s.into());
        let w = |s: &str| Whole(s.into());
        assert_eq!(
            unbroken_pieces("SIS_UTIL: sd_llc_shared->nr_idle_scan"),
            [
                t("SIS_UTIL: sd_llc_shared"),
                w("->"),
                Break,
                t("nr_idle_scan")
            ]
        );
        assert_eq!(
            unbroken_pieces("cluster 0-3 first, CPUs 12-15"),
            [t("cluster "), w("0-3"), t(" first, CPUs "), w("12-15")]
        );
        assert_eq!(
            unbroken_pieces("prev_cpu=-1 a-b -> x"),
            [t("prev_cpu=-1 a-b -> x")]
        );
        assert_eq!(unbroken_pieces("7-"), [t("7-")]);
        assert_eq!(
            unbroken_pieces("at 100 ms and 12.5 ms, 278,055 events, 0.61 M events/s, 4 seeds, 2 s"),
            [
                t("at "),
                w("100 ms"),
                t(" and "),
                w("12.5 ms"),
                t(", 278,055 events, "),
                w("0.61 M events/s"),
                t(", 4 seeds, "),
                w("2 s")
            ]
        );
        assert_eq!(unbroken_pieces(""), []);
        // Nothing is added: the pieces put back together are the text.
        for s in [
            "a->b->c 1-2-3",
            "x->",
            "->y",
            "0-3",
            "1.5 µs",
            "3 msx 4 s",
            "9 M",
        ] {
            let joined: String = unbroken_pieces(s)
                .into_iter()
                .map(|p| match p {
                    Text(x) | Whole(x) => x,
                    Break => String::new(),
                })
                .collect();
            assert_eq!(joined, s);
        }
    }

    #[test]
    fn a_count_of_one_is_singular() {
        use super::count;
        assert_eq!(
            [count(0, "move"), count(1, "move"), count(2, "wake-up")],
            ["0 moves", "1 move", "2 wake-ups"]
        );
    }

    #[test]
    fn pretty_json_is_serde_jsons_pretty_layout() {
        use schedlab_core::topology::import::machine_to_spec;
        use schedlab_core::topology::presets::PRESETS;
        for p in PRESETS {
            for spec in [p.spec(), machine_to_spec(&p.machine())] {
                let compact = serde_json::to_string(&spec).unwrap();
                let want = serde_json::to_string_pretty(&spec).unwrap();
                assert_eq!(super::pretty_json(&compact), want, "{}", p.name);
            }
        }
        let odd = serde_json::json!({
            "a{b": "x:y,\"z\"\\", "e": [], "o": {}, "n": [[1, 2], {"k": [null, true, -1.5e-7]}],
        });
        let compact = serde_json::to_string(&odd).unwrap();
        assert_eq!(
            super::pretty_json(&compact),
            serde_json::to_string_pretty(&odd).unwrap()
        );
    }

    use super::*;
    use schedlab_core::topology::NodeId;

    #[test]
    fn values_keep_four_significant_digits() {
        let shown: Vec<String> = [0.0, 0.000212, 0.8447, 258.46, 11656.6, 2.5e6]
            .map(fmt_value)
            .into();
        assert_eq!(
            shown,
            ["0", "0.0002120", "0.8447", "258.5", "11657", "2.500 M"]
        );
        assert_eq!(fmt_value(f64::INFINITY), "–");
        assert_eq!(
            (fmt_ms(0.212), fmt_ms(60.4)),
            ("0.21 ms".to_string(), "60 ms".to_string())
        );
        assert_eq!(fmt_pct(12.8061), "+12.81%");
        let ticks = [0.0, 500.0, 1500.0, 0.25, 2.5e6].map(fmt_tick);
        assert_eq!(ticks, ["0", "500", "1500", "0.25", "2.5 M"]);
    }

    #[test]
    fn wall_estimates_use_the_unit_a_person_would() {
        let said = [
            31.2,
            75.0,
            89.6,
            240.0,
            5400.0,
            7200.0,
            2.0 * 86400.0,
            40024.0 * 60.0,
        ]
        .map(fmt_wall_estimate);
        assert_eq!(
            said,
            [
                "about 32 seconds",
                "about 75 seconds",
                "about 90 seconds",
                "about 4 minutes",
                "about 90 minutes",
                "about 2 hours",
                "about 2 days",
                "about 28 days",
            ]
        );
        assert_eq!(
            fmt_wall_estimate(60.0),
            "about 60 seconds",
            "never 'about 1 minutes'"
        );
        assert_eq!(fmt_wall_estimate(f64::INFINITY), "a very long time");
    }

    #[test]
    fn command_lines_are_run_per_side_or_one_sweep() {
        let a: PatchSet = "6.6".parse().unwrap();
        let b: PatchSet = "6.6+cluster".parse().unwrap();
        let mut sim = SimSetup {
            warmup: Default::default(),
            workload: Workload::Tbench { clients: 4 },
            cpus: CpuSelection::Nodes {
                first: NodeId(0),
                last: NodeId(0),
            },
            duration_ms: 60,
            seed: 1,
            seeds: 1,
            sweep: Vec::new(),
        };
        assert_eq!(
            cli_lines("kunpeng920-6426", &sim, &[a, b]),
            [
                "schedlab run --machine kunpeng920-6426 --cpus node0 --workload tbench \
                 --threads 4 --duration-ms 60 --seed 1 --patches 6.6",
                "schedlab run --machine kunpeng920-6426 --cpus node0 --workload tbench \
                 --threads 4 --duration-ms 60 --seed 1 --patches 6.6+cluster",
            ]
        );
        sim.sweep = vec![1, 4, 8];
        assert_eq!(
            cli_lines("FILE.json", &sim, &[a]),
            [
                "schedlab sweep --machine FILE.json --cpus node0 --workload tbench \
              --threads 1,4,8 --duration-ms 60 --seed 1 --seeds 1 --baseline 6.6 --patched 6.6"
            ]
        );
        sim.sweep = Vec::new();
        sim.seeds = 3;
        assert_eq!(
            cli_lines("flat-16", &sim, &[a]),
            [
                "schedlab run --machine flat-16 --cpus node0 --workload tbench \
              --threads 4 --duration-ms 60 --seed 1 --seeds 3 --patches 6.6"
            ]
        );
        sim.warmup = Warmup::Settled;
        assert_eq!(
            cli_lines("flat-16", &sim, &[a]),
            [
                "schedlab run --machine flat-16 --cpus node0 --workload tbench \
              --threads 4 --duration-ms 60 --seed 1 --warmup settled --seeds 3 --patches 6.6"
            ]
        );
    }
}
