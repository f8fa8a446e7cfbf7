//! A hand-edited link whose JSON is wrong names the field in the scenario's terms
//! (`sim.seed`, `wake.cookies[0].cookie`, `machine.cpus[1].node`) and what it should
//! hold, never serde_json's "line 1 column N" of text the user never saw.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// A link's JSON: the teaching case with a simulation, `edit` applied to its text.
fn edited(edit: impl Fn(String) -> String) -> Result<Scenario, ScenarioError> {
    let mut s = prev_other_cluster();
    s.sim = Some(SimSetup {
        seed: 7,
        ..SimSetup::default()
    });
    let json = base64_json(&encode_v1(&s));
    assert!(with_json(&json).is_ok(), "the unedited link opens: {json}");
    with_json(&edit(json))
}

fn message(r: Result<Scenario, ScenarioError>) -> String {
    let e = r.expect_err("the edited link is refused");
    let text = e.to_string();
    assert!(
        !text.contains("line 1") && !text.contains("column"),
        "{text}"
    );
    text
}

#[test]
fn a_wrong_type_in_a_nested_field_names_its_path() {
    let text = message(edited(|j| j.replace(r#""seed":7"#, r#""seed":"abc""#)));
    assert_eq!(
        text,
        r#"this link's field `sim.seed` must be a whole number, 0 or more, found "abc""#
    );
    // The field is the last in its object too (serde reads the brace first).
    let text = message(with_json(
        r#"{"machine":"kunpeng920-6426","patches":"6.6","wake":{"prev":12,"sync":"yes"}}"#,
    ));
    assert_eq!(
        text,
        r#"this link's field `wake.sync` must be true or false, found "yes""#
    );
    // In a list: the entry's index.
    let text = message(with_json(
        r#"{"machine":"kunpeng920-6426","patches":"6.6","wake":{"cookies":[{"cpus":"0","cookie":1},{"cpus":"1","cookie":-2}]}}"#,
    ));
    assert_eq!(
        text,
        "this link's field `wake.cookies[1].cookie` must be a whole number, 0 or more, found -2"
    );
    let text = message(edited(|j| j.replace(r#""prev":12"#, r#""prev":{}"#)));
    assert!(
        text.starts_with("this link's field `wake.prev` must be a whole number from 0 to 4294967295, found an object"),
        "{text}"
    );
}

#[test]
fn a_missing_required_field_is_named() {
    let text = message(edited(|j| j.replace(r#""duration_ms":"#, r#""duration":"#)));
    // Two things are wrong; serde stops at the first, the unknown one.
    assert!(text.starts_with("this link's field `sim.duration` is not one this page knows; `sim` has one of `workload`, `cpus`, `duration_ms`"), "{text}");
    assert!(text.ends_with("; did you mean duration_ms?"), "{text}");
    let text = message(with_json(
        r#"{"machine":"kunpeng920-6426","patches":"6.6","sim":{"workload":{"kind":"tbench","clients":4}}}"#,
    ));
    assert_eq!(
        text,
        "this link's field `sim.duration_ms` is missing (it is required)"
    );
    let text = message(with_json(r#"{"machine":"kunpeng920-6426"}"#));
    assert_eq!(
        text,
        "this link's field `patches` is missing (it is required)"
    );
    // Inside a workload (serde reads its object whole before it looks at it).
    let text = message(with_json(
        r#"{"machine":"kunpeng920-6426","patches":"6.6","sim":{"workload":{"kind":"tbench"},"duration_ms":10}}"#,
    ));
    assert_eq!(
        text,
        "this link's field `sim.workload.clients` is missing (it is required)"
    );
}

/// A field written twice (a hand-edited link, two links pasted into one) is named by
/// its path, in words, not serde's "duplicate field `seed`".
#[test]
fn a_field_given_twice_is_named_by_its_path() {
    const HEAD: &str = r#"{"machine":"kunpeng920-6426","patches":"6.6""#;
    for (json, field) in [
        // At the top, and twice the same value: still refused, as serde's derive does.
        (format!(r#"{HEAD},"patches":"6.8"}}"#), "patches"),
        (format!(r#"{HEAD},"machine":"kunpeng920-6426"}}"#), "machine"),
        // Nested: serde is at the second key.
        (
            format!(r#"{HEAD},"sim":{{"workload":{{"kind":"tbench","clients":4}},"duration_ms":10,"seed":1,"seed":2}}}}"#),
            "sim.seed",
        ),
        (format!(r#"{HEAD},"wake":{{"prev":12,"sync":true,"prev":13}}}}"#), "wake.prev"),
        // In a list's entry.
        (
            format!(r#"{HEAD},"wake":{{"cookies":[{{"cpus":"0","cookie":1,"cpus":"1"}}]}}}}"#),
            "wake.cookies[0].cpus",
        ),
        // Inside a workload, which serde reads whole first: told after its brace.
        (
            format!(r#"{HEAD},"sim":{{"workload":{{"kind":"tbench","clients":4,"clients":8}},"duration_ms":10}}}}"#),
            "sim.workload.clients",
        ),
        // Inside a machine spec (read again as a spec to name its field).
        (
            r#"{"machine":{"name":"m","name":"n","arch":"x86","packages":1,"cores_per_llc":4},"patches":"6.8"}"#.to_string(),
            "machine.name",
        ),
    ] {
        let text = message(with_json(&json));
        assert_eq!(
            text,
            format!("this link's field `{field}` appears twice; a link gives each field once"),
            "{json}"
        );
    }
}

#[test]
fn an_unknown_enum_value_lists_the_known_ones() {
    let text = message(edited(|j| {
        j.replace(r#""view":"wakeup""#, r#""view":"wakey""#)
    }));
    assert!(
        text.starts_with("this link's field `view` must be one of `domains`, `dmesg`, "),
        "{text}"
    );
    assert!(
        text.ends_with(r#"found "wakey"; did you mean wakeup?"#),
        "{text}"
    );
    let text = message(edited(|j| {
        j.replace(r#""kind":"tbench""#, r#""kind":"tbench2""#)
    }));
    assert!(
        text.starts_with("this link's field `sim.workload.kind` must be one of `tbench`, "),
        "{text}"
    );
    assert!(text.ends_with("; did you mean tbench?"), "{text}");
    // Nothing near: the list alone.
    let text = message(edited(|j| {
        j.replace(r#""kind":"tbench""#, r#""kind":"fio""#)
    }));
    assert!(text.ends_with(r#"found "fio""#), "{text}");
}

/// An enum's value that is not a string at all: serde's "variant identifier" in the
/// user's words.
#[test]
fn an_enum_value_that_is_not_a_name_says_a_name_in_quotes() {
    for (from, to, field) in [
        (r#""view":"wakeup""#, r#""view":5"#, "view"),
        (r#""kind":"tbench""#, r#""kind":true"#, "sim.workload.kind"),
    ] {
        let text = message(edited(|j| j.replace(from, to)));
        assert!(
            text.starts_with(&format!(
                "this link's field `{field}` must be a name in quotes (one of the values it takes)"
            )),
            "{text}"
        );
        assert!(!text.contains("identifier"), "{text}");
    }
    let text = message(edited(|j| j.replace(r#""view":"wakeup""#, r#""view":[1]"#)));
    assert!(text.ends_with("found a list […]"), "{text}");
    let text = message(edited(|j| {
        j.replace(r#""view":"wakeup""#, r#""view":-2.5"#)
    }));
    assert!(text.ends_with("found -2.5"), "{text}");
    // Not a JSON value at all: still a syntax error.
    let text = message(edited(|j| {
        j.replace(r#""view":"wakeup""#, r#""view":wakeup"#)
    }));
    assert!(text.contains("it is not valid JSON"), "{text}");
}

#[test]
fn a_bad_machine_names_its_own_field() {
    let text = message(with_json(r#"{"machine":1,"patches":"6.6"}"#));
    assert_eq!(
        text,
        "this link's field `machine` must be a preset's name (a string) or a machine spec (an object {…}), found 1"
    );
    let text = message(with_json(
        r#"{"machine":{"name":"m","arch":"x86","cpus":[{"cpu":0,"node":0},{"cpu":1,"node":"one"}]},"patches":"6.8"}"#,
    ));
    assert!(
        text.starts_with("this link's field `machine.cpus[1].node` must be a whole number"),
        "{text}"
    );
    assert!(text.ends_with(r#"found "one""#), "{text}");
    let text = message(with_json(r#"{"machine":{"name":"m"},"patches":"6.8"}"#));
    assert_eq!(
        text,
        "this link's field `machine.arch` is missing (it is required)"
    );
    let text = message(with_json(
        r#"{"machine":{"name":"m","arch":"sparc"},"patches":"6.8"}"#,
    ));
    assert!(
        text.starts_with("this link's field `machine.arch` must be one of `"),
        "{text}"
    );
    // The machine last in the scenario: serde tells it after the scenario's brace.
    let text = message(with_json(r#"{"patches":"6.6","machine":true}"#));
    assert_eq!(
        text,
        "this link's field `machine` must be a preset's name (a string) or a machine spec (an object {…}), found true"
    );
    let text = message(with_json(
        r#"{"patches":"6.8","machine":{"name":"m","arch":"x86","cpus":[{"cpu":0,"node":"one"}]}}"#,
    ));
    assert!(
        text.starts_with("this link's field `machine.cpus[0].node` must be a whole number"),
        "{text}"
    );
}

#[test]
fn truncated_or_broken_json_says_so_and_where() {
    let text = message(edited(|j| {
        j[..j.find(r#""seed""#).expect("seed")].to_string()
    }));
    assert_eq!(
        text,
        "this link's scenario cannot be read: its text ends early after the field `sim.duration_ms` (was the link cut short when copied?)"
    );
    let text = message(edited(|j| j.replace(r#""seed":7"#, r#""seed":7 8"#)));
    assert!(
        text.starts_with("this link's scenario cannot be read: it is not valid JSON: expected `,` or `}` after the value of `sim.seed`, at the end of `"),
        "{text}"
    );
    let text = message(with_json(
        r#"{"machine":"kunpeng920-6426","patches":"6.6"} x"#,
    ));
    assert!(text.contains("trailing characters"), "{text}");
    // Not an object at all: no field to name, and no serde type name.
    for (json, found) in [("[]", "a list of 0"), ("5", "5")] {
        let text = message(with_json(json));
        assert_eq!(
            text,
            format!(
                "this link's scenario cannot be read: it must be an object {{…}}, found {found}"
            )
        );
    }
}

/// Where a syntax error is, said truly: the member being read, or the one read whole
/// just before the damage, never a key the text had gone past (before, a comma
/// missing after `wake`'s closing brace was "inside `wake`", and one missing after
/// the machine's name "inside `machine`").
#[test]
fn a_syntax_error_names_the_member_it_is_in_or_after() {
    const HEAD: &str = r#"{"machine":"kunpeng920-6426","patches":"6.6""#;
    for (json, place) in [
        // A comma missing after a top-level string value.
        (
            r#"{"machine":"kunpeng920-6426" "patches":"6.6"}"#.to_string(),
            "expected `,` or `}` after the value of `machine`",
        ),
        // ... after a nested object closed: the damage is in the scenario, not in `wake`.
        (
            format!(r#"{HEAD},"wake":{{"sync":true}} "view":"wakeup"}}"#),
            "expected `,` or `}` after the value of `wake`",
        ),
        // A key without its quotes, after a comma.
        (
            format!(r#"{HEAD},sim:{{}}}}"#),
            "key must be a string after the field `patches`",
        ),
        // ... as an object's first key.
        (
            format!(r#"{HEAD},"sim":{{seed:7}}}}"#),
            "key must be a string at the start of `sim`",
        ),
        // A colon missing after a key.
        (
            format!(r#"{HEAD},"sim":{{"seed" 7}}}}"#),
            "expected `:` after the field name `sim.seed`",
        ),
        // A broken literal inside a value.
        (
            format!(r#"{HEAD},"wake":{{"sync":tru}}}}"#),
            "expected ident in the value of `wake.sync`",
        ),
        // A trailing comma in an object, and in a list, and a comma missing in a list.
        (
            format!(r#"{HEAD},"sim":{{"seed":7,}}}}"#),
            "trailing comma after the field `sim.seed`",
        ),
        (
            format!(r#"{HEAD},"wake":{{"cookies":[{{"cpus":"0","cookie":1}},]}}}}"#),
            "trailing comma after `wake.cookies[0]`",
        ),
        (
            format!(r#"{HEAD},"wake":{{"cookies":[{{"cpus":"0","cookie":1}} {{}}]}}}}"#),
            "expected `,` or `]` after `wake.cookies[0]`",
        ),
        // Text after the scenario's end.
        (
            format!("{HEAD}}} x"),
            "trailing characters after the scenario's closing bracket",
        ),
        // A list or object closed by the wrong bracket right after a number or a
        // literal: serde read the value whole and wanted a comma or the right bracket,
        // so the damage is after the value, not in it (before: "in `sim.sweep[0]`").
        (
            format!(r#"{HEAD},"sim":{{"sweep":[1}}}}"#),
            "expected `,` or `]` after `sim.sweep[0]`",
        ),
        (
            format!(r#"{HEAD},"sim":{{"sweep":[1,4}}}}"#),
            "expected `,` or `]` after `sim.sweep[1]`",
        ),
        (
            format!(r#"{HEAD},"sim":{{"seed":7]}}"#),
            "expected `,` or `}` after the value of `sim.seed`",
        ),
        (
            format!(r#"{HEAD},"wake":{{"sync":true]}}"#),
            "expected `,` or `}` after the value of `wake.sync`",
        ),
        // A number that is itself bad is still "in" its value.
        (
            format!(r#"{HEAD},"sim":{{"sweep":[1.]}}}}"#),
            "invalid number in `sim.sweep[0]`",
        ),
    ] {
        let text = message(with_json(&json));
        let want = format!(
            "this link's scenario cannot be read: it is not valid JSON: {place}, at the end of `"
        );
        assert!(text.starts_with(&want), "{json}\n{text}\nwant {want}");
    }
    // Cut short: in a value, in a key, after an object closed.
    for (json, place) in [
        (
            r#"{"machine":"kunpe"#.to_string(),
            "in the value of `machine`",
        ),
        (format!(r#"{HEAD},"si"#), "in a field name of the scenario"),
        (
            format!(r#"{HEAD},"wake":{{"sync":true}}"#),
            "after the value of `wake`",
        ),
        (
            format!(r#"{HEAD},"wake":{{"cookies":["#),
            "at the start of the list `wake.cookies`",
        ),
    ] {
        let text = message(with_json(&json));
        assert_eq!(
            text,
            format!("this link's scenario cannot be read: its text ends early {place} (was the link cut short when copied?)"),
            "{json}"
        );
    }
}

#[test]
fn a_bad_lesson_step_is_a_field_error() {
    let text = message(with_json(
        r#"{"machine":"kunpeng920-6426","patches":"6.6","lesson":"two"}"#,
    ));
    assert_eq!(
        text,
        r#"this link's field `lesson` must be LESSON.STEP, e.g. "2.3", found "two""#
    );
}

#[test]
fn any_cut_or_damaged_link_json_is_told_without_a_panic() {
    // No panic is reachable from the page: every prefix of a link's JSON, and every
    // byte of it replaced by a character that breaks it, reads as an error that
    // names no line and column (or, rarely, as a scenario).
    let mut s = prev_other_cluster();
    s.sim = Some(SimSetup::default());
    let json = base64_json(&encode_v1(&s));
    for end in 0..json.len() {
        let _ = with_json(&json[..end]).map_err(|e| {
            assert!(!e.to_string().contains("column"), "{e}");
        });
    }
    for i in 0..json.len() {
        for c in ['"', '}', ']', '1', 'x', ',', 'é'] {
            let mut broken = json.clone();
            broken.replace_range(i..i + 1, &c.to_string());
            let _ = with_json(&broken).map_err(|e| {
                assert!(!e.to_string().contains("column"), "{broken}: {e}");
            });
        }
    }
}

#[test]
fn a_wrong_value_in_a_workload_names_its_member() {
    // serde reads a workload whole before it knows its kind, and tells the error
    // after it: the member holding the value is found in the object.
    let text = message(with_json(
        r#"{"machine":"kunpeng920-6426","patches":"6.6","sim":{"workload":{"kind":"tbench","clients":"many"},"duration_ms":10}}"#,
    ));
    assert!(
        text.starts_with("this link's field `sim.workload.clients` must be a whole number"),
        "{text}"
    );
    assert!(text.ends_with(r#"found "many""#), "{text}");
}

/// A character serde could not take that is more than one byte (`é`) is placed and
/// quoted as an ASCII one is: serde's column ends inside it, and the scan once stopped
/// a character early ("expected value after the field name `sim.seed`" with the `:`
/// read, and the quoted text without the `é`).
#[test]
fn a_multibyte_character_where_the_damage_is_is_told_as_an_ascii_one() {
    const HEAD: &str = r#"{"machine":"kunpeng920-6426","patches":"6.6""#;
    for (bad, place) in [
        (r#""seed":é"#, "expected value in the value of `sim.seed`"),
        (
            r#""seed" é"#,
            "expected `:` after the field name `sim.seed`",
        ),
        (
            r#""seed":7,é"#,
            "key must be a string after the field `sim.seed`",
        ),
    ] {
        let json = format!(r#"{HEAD},"sim":{{{bad}}}}}"#);
        let ascii = json.replace('é', "x");
        let text = message(with_json(&json));
        assert_eq!(
            text,
            message(with_json(&ascii)).replace("x`", "é`"),
            "{json}"
        );
        let want = format!(
            "this link's scenario cannot be read: it is not valid JSON: {place}, at the end of `"
        );
        assert!(text.starts_with(&want), "{json}\n{text}\nwant {want}");
        assert!(
            text.ends_with("é`"),
            "the quoted text ends at the character: {text}"
        );
    }
}

#[test]
fn a_distribution_written_as_the_command_line_does_says_what_it_takes() {
    // `"fixed:5us"` is how `--client-work` writes it; a link holds the object form.
    let text = message(with_json(
        r#"{"machine":"flat-16","patches":"6.8","view":"simulate","sim":{"workload":{"kind":"custom","pairs":2,"client_work":"fixed:5us","server_work":{"kind":"fixed","ns":5000},"sleep":{"kind":"fixed","ns":0}},"cpus":"all","duration_ms":100,"seed":1}}"#,
    ));
    assert!(
        !text.contains("DistRepr") && !text.contains("internally tagged"),
        "{text}"
    );
    assert!(
        text.ends_with(r#"must be an object {…} with its "kind", found "fixed:5us""#),
        "{text}"
    );
}

/// JSON nested past serde_json's 128 levels is said in a line: the path's first steps
/// and its last, and how deep (it was `[0]` 126 times over, and "recursion limit
/// exceeded").
#[test]
fn deeply_nested_json_names_a_short_path_and_its_depth() {
    let deep = "[".repeat(200) + &"]".repeat(200);
    for (json, path) in [
        (deep.clone(), "`[0][0][0][0][0][0][0]…[0]`"),
        (
            format!(r#"{{"machine":{deep}}}"#),
            "`machine[0][0][0][0][0][0]…[0]`",
        ),
        (
            format!(
                r#"{{"machine":"flat-16","patches":"6.8","sim":{{"workload":{{"kind":"custom","pairs":{deep}}}}}}}"#
            ),
            "`sim.workload.pairs[0][0][0][0]…[0]`",
        ),
    ] {
        let text = message(with_json(&json));
        assert!(
            text.starts_with(
                "this link's scenario cannot be read: its lists and objects are nested too deep to read at the start of the list "
            ),
            "{text}"
        );
        assert!(text.contains(path), "{text}");
        assert!(text.contains(" deep)"), "{text}");
        assert!(text.matches("[0]").count() <= 8, "{text}");
    }
}
