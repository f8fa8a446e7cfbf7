//! The link: a [`Scenario`] as the fragment after '#' and back. [`encode`] writes
//! `v2:` + base64url(deflate(JSON)) ([`super::v2`]), [`encode_v1`] the uncompressed
//! `v1:` form, and [`decode`] reads either (past a leading byte-order mark, which
//! Windows tools write): the version, base64url (leniently, naming a
//! bad character's position), the inflate with its limit, the JSON into [`super::v1`]'s
//! wire structs (a wrong field named by its path, `wire_error.rs`), and their parse
//! into a typed scenario.

use base64::alphabet::URL_SAFE;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;

use super::{v1, v2, Scenario, ScenarioError};

/// The version this build writes; [`decode`] reads it and every older one.
pub const VERSION: u32 = 2;

/// Links longer than this are refused before decoding (a machine spec with an explicit
/// CPU list for 4096 CPUs stays well below it).
pub const MAX_FRAGMENT_BYTES: usize = 1 << 20;
/// RFC 4648 §5 base64url: written without padding; read with or without it, and with
/// any trailing bits (links written before this crate read them so).
pub(super) const LINK_BASE64: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// The link fragment (without '#') for a scenario.
pub fn encode(s: &Scenario) -> String {
    format!(
        "v{VERSION}:{}",
        LINK_BASE64.encode(v2::pack(wire_json(s).as_bytes()))
    )
}

/// The scenario's JSON wire form (v1's, which v2 deflates).
pub fn wire_json(s: &Scenario) -> String {
    // Serialising plain structs of strings, numbers and options cannot fail.
    serde_json::to_string(&v1::ScenarioV1::from(s)).unwrap_or_default()
}

/// The v1 form of a scenario's link (uncompressed), which every schedlab since v1
/// opens: for tests and for tools that read the JSON by eye.
pub fn encode_v1(s: &Scenario) -> String {
    format!("v1:{}", LINK_BASE64.encode(wire_json(s).as_bytes()))
}

/// The byte-order mark Windows tools (Notepad, PowerShell's `Out-File`) write at the
/// start of a text file: a link copied from such a file, or written by such a tool,
/// starts with it. It is never part of a link or of its JSON (RFC 8259 §8.1 lets a
/// JSON reader ignore it), so [`decode`] skips one at the start of either.
const BOM: char = '\u{feff}';
/// [`BOM`] as an address bar writes it in `location.hash` (UTF-8, percent-encoded).
const BOM_PERCENT: &str = "%EF%BB%BF";

/// Reads a link fragment (with or without the leading '#') into a typed scenario.
pub fn decode(fragment: &str) -> Result<Scenario, ScenarioError> {
    let f = fragment.trim_matches(|c: char| c.is_whitespace() || c == BOM);
    let f = f.strip_prefix('#').unwrap_or(f);
    let f = match f.get(..BOM_PERCENT.len()) {
        Some(head) if head.eq_ignore_ascii_case(BOM_PERCENT) => &f[BOM_PERCENT.len()..],
        _ => f.strip_prefix(BOM).unwrap_or(f),
    };
    if f.len() > MAX_FRAGMENT_BYTES {
        return Err(ScenarioError::TooLong { bytes: f.len() });
    }
    let Some((version, body)) = f.split_once(':') else {
        return Err(ScenarioError::NotAScenario(shorten(f)));
    };
    let Some(number) = version.strip_prefix('v') else {
        return Err(ScenarioError::NotAScenario(shorten(f)));
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ScenarioError::NotAScenario(shorten(f)));
    }
    let deflated = match number {
        "1" => false,
        "2" => true,
        _ => return Err(ScenarioError::UnknownVersion(version.to_string())),
    };
    let bytes = base64url_decode(body).map_err(ScenarioError::Base64)?;
    let bytes = if deflated {
        v2::unpack(&bytes).map_err(ScenarioError::Base64)?
    } else {
        bytes
    };
    let json = String::from_utf8(bytes)
        .map_err(|_| ScenarioError::Base64("its text is not UTF-8".to_string()))?;
    let json = json.strip_prefix(BOM).unwrap_or(&json);
    // serde_json's "line 1 column N" is of text the user never saw: name the field.
    let s: v1::ScenarioV1 =
        serde_json::from_str(json).map_err(|e| super::wire_error::describe(json, &e))?;
    s.parse()
}

fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}
/// RFC 4648 §5 base64url without padding, read leniently: padding is tolerated (some
/// tools add it back), and a bad character is named with its position, so a damaged
/// link says where.
pub(super) fn base64url_decode(text: &str) -> Result<Vec<u8>, String> {
    let text = text.trim_end_matches('=');
    if let Some((i, c)) = text
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    {
        return Err(format!("character {c:?} at position {i} is not base64url"));
    }
    if text.len() % 4 == 1 {
        return Err(format!(
            "{} characters of base64 cannot be whole bytes (was the link cut short when copied?)",
            text.len()
        ));
    }
    LINK_BASE64
        .decode(text)
        .map_err(|e| format!("it is not base64url: {e}"))
}
