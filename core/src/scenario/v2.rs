//! The v2 link container: the same JSON wire form as [`super::v1`] (`ScenarioV1`),
//! compressed with raw deflate (RFC 1951, `miniz_oxide` at level 10) before base64url.
//! A custom machine's explicit per-CPU spec repeats itself, so deflate shrinks it by
//! an order of magnitude; short preset links shrink less. Inflating is bounded by
//! [`MAX_JSON_BYTES`], so a small link cannot expand into a huge one.

use miniz_oxide::deflate::compress_to_vec;
use miniz_oxide::inflate::{decompress_to_vec_with_limit, DecompressError, TINFLStatus};

/// The most JSON a v2 link may inflate to (a 4096-CPU explicit spec is about 0.5 MiB).
pub const MAX_JSON_BYTES: usize = 4 << 20;

/// miniz's best compression level.
const LEVEL: u8 = 10;

/// Deflates the wire form's JSON.
pub fn pack(json: &[u8]) -> Vec<u8> {
    compress_to_vec(json, LEVEL)
}

/// Inflates a v2 payload, or says why it cannot.
pub fn unpack(deflated: &[u8]) -> Result<Vec<u8>, String> {
    decompress_to_vec_with_limit(deflated, MAX_JSON_BYTES).map_err(
        |DecompressError { status, .. }| match status {
            TINFLStatus::HasMoreOutput => {
                format!("it inflates to more than {MAX_JSON_BYTES} bytes")
            }
            TINFLStatus::FailedCannotMakeProgress | TINFLStatus::NeedsMoreInput => {
                "its compressed data is cut short".to_string()
            }
            _ => "its compressed data does not inflate (a character changed when copied?)"
                .to_string(),
        },
    )
}
