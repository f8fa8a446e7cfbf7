//! How the messages cross between the page and a worker: gloo-worker carries them
//! through [`Codec`] as JSON text, and a record's bytes are [`RecordBytes`].
//!
//! One wire format, serde_json, which the page already needs for its links and
//! exports: each message type's deserialiser is then the one the page has anyway
//! (a `RunReport`'s `Workload` is read by the same code as a link's), not a second
//! family beside it (docs/web.md, "Two modules": serde-wasm-bindgen's copies were
//! about 30 KB brotli of the page's module). u64s are JSON integers, exact past 2^53;
//! floats are written shortest-round-trip and read back exactly (the workspace's
//! serde_json has `float_roundtrip`), so the page's numbers are the worker's.

use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

/// gloo-worker's message encoding: each message (and gloo-worker's own envelope) as
/// one JSON string. (gloo-worker's default, bincode, cannot read the scenario's
/// internally tagged enums.)
pub struct Codec;

impl gloo_worker::Codec for Codec {
    fn encode<I: Serialize>(input: I) -> JsValue {
        // Every message is one of this module's types, which serialise whole.
        serde_json::to_string(&input).map_or(JsValue::UNDEFINED, |s| JsValue::from_str(&s))
    }

    fn decode<O: for<'de> Deserialize<'de>>(input: JsValue) -> O {
        // Both ends are this module, so a message always decodes; gloo-worker's codec
        // has no way to report otherwise (its own bincode codec panics too).
        let text = input.as_string().unwrap_or_default();
        serde_json::from_str(&text)
            .unwrap_or_else(|e| wasm_bindgen::throw_str(&format!("a worker message: {e}")))
    }
}

/// Bytes that cross as one base64 string in a text format (the wire's JSON: a third
/// more than the bytes, where a list of numbers would be about three and a half
/// times), as serde's bytes in a binary one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordBytes(pub Vec<u8>);

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/// Each byte's value in [`BASE64`], 255 for a byte not in it.
const BASE64_VALUE: [u8; 256] = {
    let mut t = [255u8; 256];
    let mut i = 0;
    while i < 64 {
        t[BASE64[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// `bytes` in base64 (RFC 4648's alphabet, with padding).
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = c
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for k in 0..4 {
            out.push(if k <= c.len() {
                char::from(BASE64[(n >> (18 - 6 * k) & 63) as usize])
            } else {
                '='
            });
        }
    }
    out
}

/// The bytes of [`base64_encode`]'s text; `None` for text it does not write.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let t = text.as_bytes();
    if !t.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(t.len() / 4 * 3);
    for (q, quad) in t.chunks(4).enumerate() {
        let last = (q + 1) * 4 == t.len();
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &quad[..4 - pad] {
            let v = BASE64_VALUE[usize::from(c)];
            if v == 255 {
                return None;
            }
            n = n << 6 | u32::from(v);
        }
        n <<= 6 * pad as u32;
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - pad]);
    }
    Some(out)
}

impl Serialize for RecordBytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.serialize_str(&base64_encode(&self.0))
        } else {
            s.serialize_bytes(&self.0)
        }
    }
}

impl<'de> Deserialize<'de> for RecordBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = RecordBytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("record bytes (base64)")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RecordBytes, E> {
                base64_decode(v)
                    .map(RecordBytes)
                    .ok_or_else(|| E::custom("record bytes that are not base64"))
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<RecordBytes, E> {
                Ok(RecordBytes(v.to_vec()))
            }
        }
        if d.is_human_readable() {
            d.deserialize_str(V)
        } else {
            d.deserialize_bytes(V)
        }
    }
}
