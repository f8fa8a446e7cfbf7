//! JSON that is not a machine file but another schedlab file with a `machine` in it:
//! a `schedlab wake --state` file or the page's scenario (a share link's JSON). A
//! machine-file reader given one says what it is and which command reads it, instead
//! of serde's "unknown field `machine`".

use serde_json::Value;

/// What `text` is, when it is a wake-up state file or a page scenario rather than a
/// machine file: the sentence the error shows. `None` for anything else (a machine
/// file with a mistake in it keeps its own error).
pub(super) fn other_schedlab_file(text: &str) -> Option<String> {
    let Ok(Value::Object(top)) = serde_json::from_str::<Value>(text) else {
        return None;
    };
    let machine = top.get("machine")?;
    let has = |k: &str| top.contains_key(k);
    let what = if has("wakee") || has("waker") {
        "a wake-up state file (`schedlab wake --state FILE` reads it)"
    } else if has("patches")
        && ["wake", "view", "ui", "lesson", "sim", "cpu"]
            .iter()
            .any(|k| has(k))
    {
        "the page's scenario (the JSON of a share link; the page reads it)"
    } else {
        return None;
    };
    Some(format!(
        "this is {what}, not a machine file; {}",
        its_machine(machine)
    ))
}

/// Where the file's own machine is, for `-m`.
fn its_machine(machine: &Value) -> String {
    match machine {
        Value::String(name) => format!("its machine is the preset {name:?}"),
        Value::Object(_) => {
            "its `machine` object is a machine description: save that object alone as the machine file".to_string()
        }
        _ => "its `machine` field names the machine".to_string(),
    }
}
