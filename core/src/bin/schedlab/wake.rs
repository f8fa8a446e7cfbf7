//! `schedlab wake --state FILE [--jsonl] [--patches SET] [--format text|json]
//! [--explain-defaults]`.
//!
//! One state file gives one decision. With `--jsonl` the input is JSON Lines, one state
//! per line: each non-blank line gets its own answer, in order, and a line that cannot
//! be read or resolved gets an error naming its line number in its place; the batch
//! goes on, and the command exits 1 at the end if any line failed.

use clap::ValueEnum;
use serde::Serialize;

use schedlab_core::wakeup::scenario::WakeScenario;
use schedlab_core::wakeup::{wake_up, Decision, Trace};

use crate::Failure;

#[derive(Clone, Copy, ValueEnum)]
pub enum WakeFormat {
    Text,
    Json,
}

#[derive(clap::Args)]
pub struct WakeArgs {
    /// The wake-up state file (schema in README.md; examples in examples/wake/; at most
    /// 4 MiB; `-` reads standard input).
    #[arg(long, short)]
    state: String,
    /// The input is JSON Lines: one state per line (blank lines skipped). Each line gets
    /// its answer (one JSON object per line with --format json, a block per state with
    /// text), a bad line an error with its line number; exit status 1 if any failed.
    #[arg(long)]
    jsonl: bool,
    /// Patch set, overriding the file's: RELEASE[+PATCH...][-PATCH...], e.g. 6.6+cluster.
    #[arg(long, short)]
    patches: Option<String>,
    #[arg(long, short, value_enum, default_value = "text")]
    format: WakeFormat,
    /// Print the state instead of deciding, with every default written out (patches,
    /// features, every CPU's fields, each LLC's derived values, prev_cpu,
    /// recent_used_cpu, allowed, last_wakee), as a state file to edit. Always JSON.
    #[arg(long)]
    explain_defaults: bool,
}

#[derive(Serialize)]
struct Output<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    patches: String,
    decision: &'a Decision,
    trace: &'a Trace,
}

#[derive(Serialize)]
struct LineError<'a> {
    line: usize,
    error: &'a str,
}

pub fn run(a: WakeArgs) -> Result<String, Failure> {
    let name = crate::input::display_name(&a.state);
    let text = crate::input::read_file(&a.state)?;
    if !a.jsonl {
        return Ok(answer(&a, &text, None).map_err(|e| format!("{name}: {e}"))?);
    }
    let mut out = String::new();
    let mut failed = Vec::new();
    let mut states = 0;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        if states > 0 && matches!(a.format, WakeFormat::Text) && !a.explain_defaults {
            out.push('\n');
        }
        states += 1;
        match answer(&a, line, Some(n)) {
            Ok(s) => out.push_str(&s),
            Err(e) => {
                failed.push(n);
                if matches!(a.format, WakeFormat::Text) && !a.explain_defaults {
                    out.push_str(&format!("line {n}: error: {e}\n"));
                } else {
                    let e = LineError { line: n, error: &e };
                    out.push_str(&(serde_json::to_string(&e).map_err(|e| e.to_string())? + "\n"));
                }
            }
        }
    }
    if failed.is_empty() {
        return Ok(out);
    }
    let lines: Vec<String> = failed.iter().map(|n| n.to_string()).collect();
    Err(Failure::Partial {
        out,
        err: format!(
            "{name}: {} of {states} states failed (line{} {})",
            failed.len(),
            if failed.len() == 1 { "" } else { "s" },
            lines.join(", ")
        ),
    })
}

/// The answer to one state: its decision (or, with `--explain-defaults`, the state
/// made explicit). `line` is set for a JSON Lines batch: the JSON is then one line.
fn answer(a: &WakeArgs, text: &str, line: Option<usize>) -> Result<String, String> {
    let scenario = WakeScenario::from_json(text).map_err(|e| {
        let e = e.to_string();
        if line.is_none() && e.contains("trailing characters") {
            format!("{e}; for one state per line (JSON Lines) add --jsonl")
        } else {
            e
        }
    })?;
    if a.explain_defaults {
        let explicit = scenario
            .explicit(a.patches.as_deref())
            .map_err(|e| e.to_string())?;
        return to_json(&explicit, line.is_some());
    }
    let r = scenario
        .resolve(a.patches.as_deref())
        .map_err(|e| e.to_string())?;
    let mut trace = Trace::default();
    let d = wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut trace);
    match a.format {
        WakeFormat::Text => Ok(format!(
            "{}{} on {}: wake task {} (prev CPU{}) from CPU{}\n{}",
            line.map_or(String::new(), |n| format!("line {n}: ")),
            r.env.patches,
            r.env.domains.machine,
            r.wakee.id.0,
            r.wakee.prev_cpu.0,
            r.waker.cpu.0,
            trace.render(&d)
        )),
        WakeFormat::Json => to_json(
            &Output {
                line,
                patches: r.env.patches.to_string(),
                decision: &d,
                trace: &trace,
            },
            line.is_some(),
        ),
    }
}

/// `v` as JSON and a newline: on one line for a JSON Lines batch, else indented.
fn to_json(v: &impl Serialize, one_line: bool) -> Result<String, String> {
    let s = if one_line {
        serde_json::to_string(v)
    } else {
        serde_json::to_string_pretty(v)
    };
    Ok(s.map_err(|e| e.to_string())? + "\n")
}

#[cfg(test)]
mod tests {
    use crate::tests::{cli, cli_full};
    use crate::Failure;

    const GOOD: &str = include_str!("../../../../examples/wake/prev-other-cluster.json");
    const COOKIE: &str = include_str!("../../../../examples/wake/smt-cookie.json");

    fn one_line(json: &str) -> String {
        serde_json::to_string(&serde_json::from_str::<serde_json::Value>(json).unwrap()).unwrap()
    }

    fn temp(name: &str, text: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("schedlab-{name}-{}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Issue 16 item 9: one state per process was all `wake` took. JSON Lines: one
    /// answer per non-blank line, a bad line's error in its place with its line
    /// number, the batch goes on, and the command fails at the end.
    #[test]
    fn json_lines_answer_each_state_and_report_bad_lines_by_number() {
        let text = format!(
            "{}\n\n{{\"machine\": \"nope\", \"wakee\": {{\"id\": 1}}, \"waker\": {{\"cpu\": 0}}}}\nnot json\n{}\n",
            one_line(GOOD),
            one_line(COOKIE)
        );
        let p = temp("batch.jsonl", &text);
        let path = p.to_str().unwrap();
        let json = cli_full(&["wake", "-s", path, "--jsonl", "-f", "json"]);
        let text_out = cli_full(&["wake", "-s", path, "--jsonl"]);
        std::fs::remove_file(&p).unwrap();
        let Err(Failure::Partial { out, err }) = json else {
            panic!("a batch with bad lines must fail at the end");
        };
        assert!(err.contains("2 of 4 states failed (lines 3, 4)"), "{err}");
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4);
        let nums: Vec<u64> = lines.iter().map(|l| l["line"].as_u64().unwrap()).collect();
        assert_eq!(nums, vec![1, 3, 4, 5]);
        assert_eq!(lines[0]["decision"]["cpu"], 12);
        assert_eq!(lines[3]["decision"]["cpu"], 6);
        assert!(lines[1]["error"].as_str().unwrap().contains("nope"));
        assert!(lines[2]["error"].as_str().is_some());
        assert!(lines[1].get("decision").is_none());
        // Text: a block per state, separated by a blank line, each naming its line.
        let Err(Failure::Partial { out, .. }) = text_out else {
            panic!("text batch must fail too");
        };
        let blocks: Vec<&str> = out.split("\n\n").collect();
        assert_eq!(blocks.len(), 4, "{out}");
        assert!(blocks[0].starts_with("line 1: 6.6 on kunpeng920-6426"));
        assert!(blocks[1].starts_with("line 3: error: "), "{}", blocks[1]);
        assert!(blocks[2].starts_with("line 4: error: "));
        assert!(blocks[3].starts_with("line 5: "));
        assert!(blocks[3].trim_end().ends_with("sd_llc_shared reads"));
    }

    #[test]
    fn a_clean_batch_succeeds_and_a_multi_state_file_without_jsonl_says_so() {
        let text = format!("{}\n{}\n", one_line(GOOD), one_line(GOOD));
        let p = temp("clean.jsonl", &text);
        let path = p.to_str().unwrap();
        let ok = cli(&["wake", "-s", path, "--jsonl", "-f", "json"]);
        let without = cli(&["wake", "-s", path]);
        std::fs::remove_file(&p).unwrap();
        assert_eq!(ok.unwrap().lines().count(), 2);
        let e = without.unwrap_err();
        assert!(e.contains("--jsonl"), "{e}");
    }

    /// Issue 16 items 2-4 as the JSON output shows them: CPUs of fast-path checks as
    /// a field, the fast-path checks counted apart from cpus_probed, and `queue`
    /// always an object.
    #[test]
    fn json_output_has_structured_cpus_costs_and_queue() {
        let p = temp("one.json", GOOD);
        let out = cli(&["wake", "-s", p.to_str().unwrap(), "-f", "json"]);
        std::fs::remove_file(&p).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out.unwrap()).unwrap();
        assert_eq!(
            v["decision"]["queue"],
            serde_json::json!({ "path": "wakelist", "ipi": true })
        );
        assert_eq!(v["decision"]["costs"]["fast_path_checks"], 2);
        assert_eq!(v["decision"]["costs"]["cpus_probed"], 0);
        let sis: Vec<_> = v["trace"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["kind"] == "check" && s["func"] == "select_idle_sibling")
            .map(|s| (s["cpu"].as_u64(), s["outcome"].as_bool()))
            .collect();
        assert_eq!(sis, vec![(Some(0), Some(false)), (Some(12), Some(true))]);
        let q = v["trace"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["kind"] == "queue")
            .unwrap();
        assert_eq!(
            q["path"],
            serde_json::json!({ "path": "wakelist", "ipi": true })
        );
    }

    /// Issue 16 item 6: missing `last_wakee` and `prev_cpu` had silent meanings.
    /// `--explain-defaults` writes every default out, as a file that decides the same.
    #[test]
    fn explain_defaults_prints_an_editable_state_that_decides_the_same() {
        let p = temp("defaults.json", COOKIE);
        let path = p.to_str().unwrap();
        let explicit = cli(&["wake", "-s", path, "--explain-defaults", "-p", "6.6"]).unwrap();
        let before = cli(&["wake", "-s", path, "-p", "6.6", "-f", "json"]).unwrap();
        let q = temp("explicit.json", &explicit);
        let after = cli(&["wake", "-s", q.to_str().unwrap(), "-f", "json"]).unwrap();
        let batch = temp("explicit.jsonl", &format!("{}\n", one_line(COOKIE)));
        let lines = cli(&[
            "wake",
            "-s",
            batch.to_str().unwrap(),
            "--jsonl",
            "--explain-defaults",
        ])
        .unwrap();
        for f in [&p, &q, &batch] {
            std::fs::remove_file(f).unwrap();
        }
        assert_eq!(before, after);
        let v: serde_json::Value = serde_json::from_str(&explicit).unwrap();
        assert_eq!(v["patches"], "6.6");
        assert_eq!(v["wakee"]["prev_cpu"], 0);
        assert_eq!(v["wakee"]["last_wakee"], serde_json::Value::Null);
        assert_eq!(v["waker"]["task"]["recent_used_cpu"], 0);
        assert_eq!(v["cpus"][0]["vcpu_preempted"], false);
        // In a batch, one explicit state per line.
        assert_eq!(lines.lines().count(), 1);
        assert!(lines.starts_with("{\"machine\":\"xeon-smt-8\""), "{lines}");
    }
}
