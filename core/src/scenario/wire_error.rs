//! A link's JSON that does not read as a scenario, said in the scenario's own terms:
//! the field (`sim.seed`, `wake.cookies[1].cpus`) and what it should hold. serde_json
//! says "at line 1 column 212" of a text the user never saw (the link's JSON is one
//! line inside base64), so [`describe`] turns that position back into a field path.
//!
//! ```text
//!  {"machine":"m","patches":"6.8","sim":{"workload":{…},"duration_ms":50,"seed":"abc"}}
//!                                                                                ▲ column 82
//!  scan the text up to there: the objects and lists open, and their current keys
//!      [ {key "sim"}, {key "seed"} ]  ─▶  `sim.seed`
//!  "invalid type: string \"abc\", expected u64"
//!      ─▶ this link's field `sim.seed` must be a whole number, found "abc"
//! ```
//!
//! A second serde instantiation that tracks paths (`serde_path_to_error`) would cost
//! the page's module its size in every visit; this scan runs only on a link that
//! failed. Where serde reports an error only after it has read the enclosing object's
//! closing brace (a custom check on the object's last field) the path names that
//! object, one level short; a machine that is neither a preset's name nor a valid
//! spec is read again as a spec, so its own field is named (`machine.cpus[3].node`).

use serde_json::error::Category;

use super::ScenarioError;
use crate::json_words::{
    between, char_before, expected_text, found_text, offset, one_of, serde_names, shorten,
    value_not_a_name, VARIANT,
};
use crate::near::did_you_mean;
use crate::topology::MachineSpec;

/// What is wrong with `json` (a link's scenario text) given serde_json's error `e`.
pub(super) fn describe(json: &str, e: &serde_json::Error) -> ScenarioError {
    describe_in(json, e, "")
}

fn describe_in(json: &str, e: &serde_json::Error, prefix: &str) -> ScenarioError {
    let end = offset(json, e.line(), e.column());
    let at = Scan::to(json, end);
    let path = at.path(prefix);
    let msg = e.to_string();
    // serde_json appends " at line L column C"; the path says where instead.
    let msg = match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => &msg[..],
    };
    match e.classify() {
        Category::Eof => {
            return ScenarioError::Json(format!(
                "its text ends early{} (was the link cut short when copied?)",
                Scan::to(json, end).place(prefix)
            ))
        }
        Category::Syntax | Category::Io => {
            // serde_json's position is just past the character it could not take: the
            // structure open before that character is where the damage is.
            let before = char_before(json, end);
            // serde_json's enums (`deserialize_enum()`) take only a string or an
            // object and call any other value "expected value", a syntax error: where
            // a valid JSON value stands, the value is of the wrong kind.
            if let Some(found) = value_not_a_name(msg, &json[before..]) {
                let path = Scan::to(json, before).path(prefix);
                if !path.is_empty() {
                    return ScenarioError::Field {
                        path,
                        problem: format!("must be {}, found {found}", expected_text(VARIANT)),
                    };
                }
            }
            let mut at = Scan::to(json, before);
            // serde_json asks for a comma or the closing bracket only once it has read
            // the value before whole: a number or literal the scan saw no end of (`[1}`)
            // ended there, and the damage is after it, not in it.
            if msg.starts_with("expected `,` or ") {
                at.value_read();
            }
            if msg == "recursion limit exceeded" {
                return ScenarioError::Json(format!(
                    "its lists and objects are nested too deep to read{}; a scenario nests a few levels",
                    at.place(prefix)
                ));
            }
            return ScenarioError::Json(format!(
                "it is not valid JSON: {msg}{}, at the end of `{}`",
                at.place(prefix),
                tail(json, end)
            ));
        }
        Category::Data => {}
    }
    let field = |path: String, problem: String| {
        if path.is_empty() {
            // The text is not an object at all: there is no field to name.
            ScenarioError::Json(format!("it {problem}"))
        } else {
            ScenarioError::Field { path, problem }
        }
    };
    if let Some(name) = between(msg, "missing field `", "`") {
        return field(join(&path, name), "is missing (it is required)".to_string());
    }
    if let Some(name) = between(msg, "duplicate field `", "`") {
        // Positioned at the second key; or, read from a buffered object (a workload),
        // after the object's brace.
        let path = if at.key() == Some(name) {
            path
        } else {
            join(&path, name)
        };
        return field(
            path,
            "appears twice; a link gives each field once".to_string(),
        );
    }
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        let name = rest.split('`').next().unwrap_or(rest);
        let known = rest
            .split_once("`, expected ")
            .map_or("no fields", |(_, k)| k);
        // Positioned at the key; or, read from a buffered object (a workload), after it.
        let (path, parent) = if at.key() == Some(name) {
            (path, at.parent_path(prefix))
        } else {
            (join(&path, name), path)
        };
        let whose = if parent.is_empty() {
            "a scenario".to_string()
        } else {
            format!("`{parent}`")
        };
        return field(
            path,
            format!(
                "is not one this page knows; {whose} has {}{}",
                one_of(known),
                did_you_mean(name, serde_names(known))
            ),
        );
    }
    if let Some(rest) = msg.strip_prefix("unknown variant `") {
        if let Some((found, known)) = rest.split_once("`, expected ") {
            return field(
                path,
                format!(
                    "must be {}, found {:?}{}",
                    one_of(known.trim_start_matches("one of ")),
                    shorten(found),
                    did_you_mean(found, serde_names(known))
                ),
            );
        }
    }
    if msg.starts_with("data did not match any variant of untagged enum MachineChoice") {
        return machine_error(json, &at, prefix, path);
    }
    for kind in ["invalid type: ", "invalid value: "] {
        if let Some((found, expected)) = msg
            .strip_prefix(kind)
            .and_then(|rest| rest.rsplit_once(", expected "))
        {
            let found = found_text(found);
            // Told only after an object was read whole (a workload, which serde buffers
            // to find its kind): the member of that object holding the value.
            let path = match at
                .closed_here(json)
                .and_then(|obj| member_with(obj, &found))
            {
                Some(key) => join(&path, &key),
                None => path,
            };
            return field(
                path,
                format!("must be {}, found {found}", expected_text(expected)),
            );
        }
    }
    if let Some((n, expected)) = msg
        .strip_prefix("invalid length ")
        .and_then(|rest| rest.split_once(", expected "))
    {
        return field(
            path,
            format!("must be {}, found a list of {n}", expected_text(expected)),
        );
    }
    if path.is_empty() {
        ScenarioError::Json(msg.to_string())
    } else {
        field(path, format!("is not valid: {msg}"))
    }
}

/// The machine is neither a preset's name nor a spec: read it again as a spec to
/// name its own field, if it is an object.
fn machine_error(json: &str, at: &Scan, prefix: &str, path: String) -> ScenarioError {
    // Told after the scenario's closing brace when the machine is its last member: the
    // path is one level short.
    let path = if path.is_empty() {
        join(prefix, "machine")
    } else {
        path
    };
    // The machine's value ends where serde stopped: an object closed there (the
    // machine's own, or the scenario's, whose last member it is), or else the text
    // since its key's ':'.
    let before = &json[..at.offset];
    let value = match at.closed {
        Some((start, end)) if before[end..].trim().is_empty() => {
            if json[..start].trim_end().ends_with(':') {
                &json[start..end]
            } else {
                last_member(&json[start..end]).unwrap_or("")
            }
        }
        _ => before.rsplit_once(':').map_or("", |(_, v)| v.trim()),
    };
    if value.starts_with('{') {
        if let Err(e) = serde_json::from_str::<MachineSpec>(value) {
            return describe_in(value, &e, &path);
        }
    }
    let found = shorten(value);
    ScenarioError::Field {
        path,
        problem: format!(
            "must be a preset's name (a string) or a machine spec (an object {{…}}), found {found}"
        ),
    }
}

/// The most steps a path names whole: the first ones and the last one are kept of
/// a longer one. The scenario's own fields nest 5 deep (`machine.cpus[3].node`).
const MAX_PATH_STEPS: usize = 8;

/// The objects and lists open at a point of the JSON text, and their current keys and
/// indexes. Bounded by the text: one pass, one frame per open bracket.
struct Scan {
    frames: Vec<Frame>,
    /// The span of the last object or list closed before the point.
    closed: Option<(usize, usize)>,
    offset: usize,
    /// The point is inside a string (a key, or a value) not yet closed.
    in_string: bool,
}

struct Frame {
    /// `None` in a list (then `index` counts its entries).
    key: Option<String>,
    /// The key before the last comma, in an object.
    prev_key: Option<String>,
    list: bool,
    index: usize,
    expect_key: bool,
    start: usize,
    /// How far the current member (or entry) has been read.
    pos: Pos,
}

/// Where in a member an object or list is: what the JSON grammar expects next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pos {
    /// Just opened: its first key (an object) or first entry (a list).
    Start,
    /// After a comma: the next key (an object) or entry (a list).
    Next,
    /// A key read, its `:` not yet.
    Name,
    /// After the `:`: the value.
    Value,
    /// Inside a number, `true`, `false` or `null`.
    Scalar,
    /// The value read whole: a `,` or the closing bracket.
    Done,
}

impl Scan {
    fn to(json: &str, offset: usize) -> Scan {
        let text = &json[..offset];
        let mut frames: Vec<Frame> = Vec::new();
        let mut closed = None;
        let mut in_string = false;
        let mut chars = text.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' | '[' => frames.push(Frame {
                    key: None,
                    prev_key: None,
                    list: c == '[',
                    index: 0,
                    expect_key: c == '{',
                    start: i,
                    pos: Pos::Start,
                }),
                '}' | ']' => {
                    closed = frames.pop().map(|f| (f.start, i + 1));
                    if let Some(f) = frames.last_mut() {
                        f.pos = Pos::Done;
                    }
                }
                ',' => {
                    if let Some(f) = frames.last_mut() {
                        f.pos = Pos::Next;
                        if f.list {
                            f.index += 1;
                        } else {
                            f.expect_key = true;
                            f.prev_key = f.key.take();
                        }
                    }
                }
                ':' => {
                    if let Some(f) = frames.last_mut() {
                        f.expect_key = false;
                        f.pos = Pos::Value;
                    }
                }
                '"' => {
                    let mut s = String::new();
                    in_string = true;
                    while let Some((_, d)) = chars.next() {
                        match d {
                            '\\' => {
                                if let Some((_, e)) = chars.next() {
                                    s.push(e);
                                }
                            }
                            '"' => {
                                in_string = false;
                                break;
                            }
                            d => s.push(d),
                        }
                    }
                    if let Some(f) = frames.last_mut() {
                        if in_string {
                            // Cut inside it: a key, or the value under way.
                        } else if f.expect_key {
                            f.key = Some(s);
                            f.pos = Pos::Name;
                        } else {
                            f.pos = Pos::Done;
                        }
                    }
                }
                c if c.is_whitespace() => {
                    if let Some(f) = frames.last_mut().filter(|f| f.pos == Pos::Scalar) {
                        f.pos = Pos::Done;
                    }
                }
                _ => {
                    if let Some(f) = frames.last_mut() {
                        f.pos = Pos::Scalar;
                    }
                }
            }
        }
        Scan {
            frames,
            closed,
            offset,
            in_string,
        }
    }

    /// Where the point is in the scenario's terms, for a syntax error or a cut: the
    /// member being read, or the one just read whole (" after the value of
    /// `sim.seed`"), never a key the text had already gone past.
    fn place(&self, prefix: &str) -> String {
        let place = self.place_in(prefix);
        format!("{place}{}", self.depth())
    }

    fn place_in(&self, prefix: &str) -> String {
        let Some(f) = self.frames.last() else {
            return match self.closed {
                Some(_) => " after the scenario's closing bracket".to_string(),
                None => String::new(),
            };
        };
        let outer = self.parent_path(prefix);
        let whole = if outer.is_empty() {
            "the scenario".to_string()
        } else {
            format!("`{outer}`")
        };
        if f.list {
            let entry = |i: usize| format!("`{outer}[{i}]`");
            return match f.pos {
                Pos::Start if self.in_string => format!(" in {}", entry(0)),
                Pos::Start => format!(" at the start of the list {whole}"),
                Pos::Next if self.in_string => format!(" in {}", entry(f.index)),
                Pos::Next => format!(" after {}", entry(f.index.saturating_sub(1))),
                Pos::Value | Pos::Name | Pos::Scalar => format!(" in {}", entry(f.index)),
                Pos::Done => format!(" after {}", entry(f.index)),
            };
        }
        let member = |k: &str| format!("`{}`", join(&outer, k));
        match (f.pos, &f.key, &f.prev_key) {
            (Pos::Start | Pos::Next, _, _) if self.in_string => {
                format!(" in a field name of {whole}")
            }
            (Pos::Next, _, Some(prev)) => format!(" after the field {}", member(prev)),
            (Pos::Start | Pos::Next, _, _) => format!(" at the start of {whole}"),
            (Pos::Name, Some(k), _) => format!(" after the field name {}", member(k)),
            (Pos::Value | Pos::Scalar, Some(k), _) => format!(" in the value of {}", member(k)),
            (Pos::Done, Some(k), _) => format!(" after the value of {}", member(k)),
            _ => format!(" in {whole}"),
        }
    }

    /// The value under way (a number, `true`, `false` or `null`) was read whole.
    fn value_read(&mut self) {
        if let Some(f) = self.frames.last_mut().filter(|f| f.pos == Pos::Scalar) {
            f.pos = Pos::Done;
        }
    }

    /// The object closed right where serde stopped, if one was.
    fn closed_here<'a>(&self, json: &'a str) -> Option<&'a str> {
        let (start, end) = self.closed?;
        let obj = &json[start..end];
        (obj.starts_with('{') && json[end..self.offset].trim().is_empty()).then_some(obj)
    }

    /// The key the innermost open object is at.
    fn key(&self) -> Option<&str> {
        self.frames.last().and_then(|f| f.key.as_deref())
    }

    /// `sim.workload`, `wake.cookies[1]`, under `prefix`.
    fn path(&self, prefix: &str) -> String {
        self.path_of(&self.frames, prefix)
    }

    /// The path of the object holding the last key.
    fn parent_path(&self, prefix: &str) -> String {
        let n = self.frames.len().saturating_sub(1);
        self.path_of(&self.frames[..n], prefix)
    }

    /// The path through `frames`, its middle cut out past [`MAX_PATH_STEPS`] steps
    /// (`machine[0][0][0][0][0]…[0]`): JSON nested 128 deep is a path no one reads.
    fn path_of(&self, frames: &[Frame], prefix: &str) -> String {
        let steps: Vec<String> = frames
            .iter()
            .filter_map(|f| match (&f.key, f.list) {
                (_, true) => Some(format!("[{}]", f.index)),
                (Some(key), false) => Some(format!(".{key}")),
                (None, false) => None,
            })
            .collect();
        let mut path = prefix.to_string();
        let n = steps.len();
        for (i, step) in steps.iter().enumerate() {
            if n > MAX_PATH_STEPS && i == MAX_PATH_STEPS - 1 {
                path.push('…');
            }
            if n > MAX_PATH_STEPS && (MAX_PATH_STEPS - 1..n - 1).contains(&i) {
                continue;
            }
            match step.strip_prefix('.') {
                Some(key) => path = join(&path, key),
                None => path.push_str(step),
            }
        }
        path
    }

    /// " (nested 128 deep)" where [`Scan::path_of`] cut the path short.
    fn depth(&self) -> String {
        if self.frames.len() > MAX_PATH_STEPS {
            format!(" (nested {} deep)", self.frames.len())
        } else {
            String::new()
        }
    }
}

/// The one member of the object `obj` (its JSON text) whose value is written `value`.
fn member_with(obj: &str, value: &str) -> Option<String> {
    let (mut depth, mut key, mut value_start) = (0u32, String::new(), None);
    let mut found = Vec::new();
    let mut chars = obj.char_indices();
    while let Some((i, c)) = chars.next() {
        // A member of `obj` ends at a comma or brace of its own level.
        let ends = matches!(c, ',' | '}' | ']') && depth == 1;
        if ends {
            if let Some(start) = value_start.take() {
                if obj[start..i].trim() == value {
                    found.push(key.clone());
                }
            }
        }
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            ':' if depth == 1 => value_start = Some(i + 1),
            '"' => {
                let mut s = String::new();
                while let Some((_, d)) = chars.next() {
                    match d {
                        '\\' => s.extend(chars.next().map(|(_, e)| e)),
                        '"' => break,
                        d => s.push(d),
                    }
                }
                if depth == 1 && value_start.is_none() {
                    key = s;
                }
            }
            _ => {}
        }
    }
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The value of the last member of the object `obj` (its JSON text).
fn last_member(obj: &str) -> Option<&str> {
    let (mut depth, mut value_start) = (0u32, None);
    let mut chars = obj.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return value_start.map(|s| obj[s..i].trim());
                }
            }
            ':' if depth == 1 => value_start = Some(i + 1),
            ',' if depth == 1 => value_start = None,
            '"' => {
                while let Some((_, d)) = chars.next() {
                    match d {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    None
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The text just before `offset` (up to 24 characters), to say where in it.
fn tail(json: &str, offset: usize) -> String {
    let before = &json[..offset.min(json.len())];
    let n = before.chars().count();
    let skip = n.saturating_sub(24);
    let mut out: String = before.chars().skip(skip).collect();
    if skip > 0 {
        out.insert(0, '…');
    }
    out
}
