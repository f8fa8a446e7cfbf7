//! How the messages cross between the page and a worker: gloo-worker carries them
//! through [`Codec`], and a record's bytes are [`RecordBytes`].

use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

/// gloo-worker's message encoding: serde-wasm-bindgen, so messages cross as
/// structured clones. (gloo-worker's default, bincode, cannot read the scenario's
/// internally tagged enums.) u64s cross as BigInts: a seed may exceed 2^53.
pub struct Codec;

impl gloo_worker::Codec for Codec {
    fn encode<I: Serialize>(input: I) -> JsValue {
        let s = serde_wasm_bindgen::Serializer::new().serialize_large_number_types_as_bigints(true);
        // Every message is one of this module's types, which serialise whole.
        input.serialize(&s).unwrap_or(JsValue::UNDEFINED)
    }

    fn decode<O: for<'de> Deserialize<'de>>(input: JsValue) -> O {
        // Both ends are this module, so a message always decodes; gloo-worker's codec
        // has no way to report otherwise (its own bincode codec panics too).
        serde_wasm_bindgen::from_value(input)
            .unwrap_or_else(|e| wasm_bindgen::throw_str(&format!("a worker message: {e}")))
    }
}

/// Bytes that cross to the page as one `Uint8Array` (serde's bytes, which
/// serde-wasm-bindgen writes as a typed array), not as an array of numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordBytes(pub Vec<u8>);

impl Serialize for RecordBytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for RecordBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RecordBytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("record bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<RecordBytes, E> {
                Ok(RecordBytes(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<RecordBytes, E> {
                Ok(RecordBytes(v))
            }
            // Text formats (the host tests' JSON) write bytes as a list of numbers.
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<RecordBytes, A::Error> {
                let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
                while let Some(b) = seq.next_element()? {
                    v.push(b);
                }
                Ok(RecordBytes(v))
            }
        }
        d.deserialize_byte_buf(V)
    }
}
