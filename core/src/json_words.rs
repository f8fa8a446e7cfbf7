//! serde_json's refusals in words for someone editing JSON by hand: what a field must
//! hold and what it holds. A link's JSON (`scenario`'s `wire_error.rs`, which finds the
//! field's path itself) and a JSON machine file (`topology::import`'s `json.rs`, which
//! has it from `serde_path_to_error`) say their errors the same way:
//!
//! ```text
//!  invalid type: string "2", expected u32
//!      ─▶ must be a whole number from 0 to 4294967295, found "2"
//!  unknown variant `sparc`, expected `arm64` or `x86`
//!      ─▶ must be one of `arm64`, `x86`, found "sparc"
//! ```
//!
//! A name not in the list gets the names it may have meant (`crate::near`).

use crate::near::did_you_mean;

/// What serde says of a value it refused (its message, " at line L column C" cut).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum DataError<'a> {
    /// "missing field `name`": the object lacks the field `name`.
    Missing(&'a str),
    /// "duplicate field `arch`": the object gives the field `arch` twice.
    Duplicate(&'a str),
    /// "unknown field `nod`, expected one of …": `known` as "one of `cpu`, `node`".
    Unknown { name: &'a str, known: String },
    /// A value of the wrong kind, variant or length: "must be …, found …".
    Wrong(String),
}

/// `msg` read as one of the refusals serde's derives make, or `None` for another
/// (a custom check's own words, a syntax error).
pub(crate) fn data_error(msg: &str) -> Option<DataError<'_>> {
    if let Some(name) = between(msg, "missing field `", "`") {
        return Some(DataError::Missing(name));
    }
    if let Some(name) = between(msg, "duplicate field `", "`") {
        return Some(DataError::Duplicate(name));
    }
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        let name = rest.split('`').next().unwrap_or(rest);
        let known = rest
            .split_once("`, expected ")
            .map_or("no fields", |(_, k)| k);
        return Some(DataError::Unknown {
            name,
            known: format!(
                "{}{}",
                one_of(known),
                did_you_mean(name, serde_names(known))
            ),
        });
    }
    if let Some((found, known)) = msg
        .strip_prefix("unknown variant `")
        .and_then(|rest| rest.split_once("`, expected "))
    {
        return Some(DataError::Wrong(format!(
            "must be {}, found {:?}{}",
            one_of(known.trim_start_matches("one of ")),
            shorten(found),
            did_you_mean(found, serde_names(known))
        )));
    }
    if let Some((found, expected)) = wrong_value(msg) {
        return Some(DataError::Wrong(format!(
            "must be {expected}, found {found}"
        )));
    }
    if let Some((n, expected)) = msg
        .strip_prefix("invalid length ")
        .and_then(|rest| rest.split_once(", expected "))
    {
        return Some(DataError::Wrong(format!(
            "must be {}, found a list of {n}",
            expected_text(expected)
        )));
    }
    None
}

/// "invalid type: …" or "invalid value: …" as (what was found, what was expected),
/// both in words.
pub(crate) fn wrong_value(msg: &str) -> Option<(String, String)> {
    ["invalid type: ", "invalid value: "]
        .iter()
        .find_map(|kind| {
            let (found, expected) = msg.strip_prefix(kind)?.rsplit_once(", expected ")?;
            Some((found_text(found), expected_text(expected)))
        })
}

pub(crate) fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<&'a str> {
    s.strip_prefix(open)?.split(close).next()
}

/// The names in serde's list (`` one of `a`, `b` `` or `` `a` or `b` ``), for
/// [`did_you_mean`].
pub(crate) fn serde_names(known: &str) -> impl Iterator<Item = &str> {
    known
        .trim_start_matches("one of ")
        .split(", ")
        .flat_map(|s| s.split(" or "))
        .map(|s| s.trim_matches('`'))
}

/// serde's list of names (`` `a`, `b` `` or `` `a` or `b` ``) as "one of `a`, `b`".
pub(crate) fn one_of(known: &str) -> String {
    let known = known.trim_start_matches("one of ");
    if known.contains(',') || known.contains(" or ") {
        format!("one of {}", known.replace(" or ", ", "))
    } else {
        known.to_string()
    }
}

/// serde's name for an enum's value (a unit variant's name).
pub(crate) const VARIANT: &str = "variant identifier";

/// serde's name of what it expected, for someone editing JSON by hand.
pub(crate) fn expected_text(expected: &str) -> String {
    match expected {
        VARIANT => "a name in quotes (one of the values it takes)".to_string(),
        "u8" => "a whole number from 0 to 255".to_string(),
        "u16" => "a whole number from 0 to 65535".to_string(),
        "u32" => "a whole number from 0 to 4294967295".to_string(),
        "u64" | "usize" => "a whole number, 0 or more".to_string(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a boolean" => "true or false".to_string(),
        "a sequence" => "a list […]".to_string(),
        "a map" => "an object {…}".to_string(),
        e if e.starts_with("struct ") => "an object {…}".to_string(),
        // serde's name for a `#[serde(tag = "kind")]` enum read whole (a distribution).
        e if e.starts_with("internally tagged enum ") => {
            r#"an object {…} with its "kind""#.to_string()
        }
        e => e.to_string(),
    }
}

/// `Some(the value)` when serde_json said "expected value" where `rest` starts with a
/// JSON number, `true`, `false`, `null` or a list: valid JSON that an enum refused.
pub(crate) fn value_not_a_name(msg: &str, rest: &str) -> Option<String> {
    if msg != "expected value" {
        return None;
    }
    let first = rest.chars().next()?;
    if first == '[' {
        return Some("a list […]".to_string());
    }
    let token: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.'))
        .collect();
    let number = first == '-' || first.is_ascii_digit();
    let literal = matches!(token.as_str(), "true" | "false" | "null");
    (number || literal).then(|| shorten(&token))
}

/// serde's `Unexpected` as the JSON text holds it (`string "abc"` is `"abc"`).
pub(crate) fn found_text(found: &str) -> String {
    let quoted = |s: &str| s.trim_matches('`').to_string();
    if let Some(s) = found.strip_prefix("string ") {
        shorten(s)
    } else if let Some(n) = found
        .strip_prefix("integer ")
        .or_else(|| found.strip_prefix("floating point "))
        .or_else(|| found.strip_prefix("boolean "))
    {
        quoted(n)
    } else {
        match found {
            "map" => "an object {…}".to_string(),
            "sequence" => "a list […]".to_string(),
            "unit value" | "null" => "null".to_string(),
            other => other.to_string(),
        }
    }
}

/// The first 40 characters of `s`, and `…` if there were more.
pub(crate) fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

/// The byte offset of serde_json's (1-based line, column) in `text`: its column counts
/// the bytes of the line read before the error. A column inside a character (serde
/// read its first byte, `é`'s) stands for the whole character: the offset is past it.
pub(crate) fn offset(text: &str, line: usize, column: usize) -> usize {
    let start = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum::<usize>();
    let mut at = (start + column).min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// Where the character before byte `end` starts: serde_json's position is just past
/// the character it could not take.
pub(crate) fn char_before(text: &str, end: usize) -> usize {
    let mut before = end.min(text.len()).saturating_sub(1);
    while !text.is_char_boundary(before) {
        before -= 1;
    }
    before
}
