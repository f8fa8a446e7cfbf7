//! `byte_enum!`: a field-less enum that travels as one byte, written once.
//!
//! The event record and the wake-up's decision carry a few small enums as a byte
//! each (`WakePath`, `QueueKind`, `MigrateReason`). Each needs the same four things:
//! the enum with its discriminants (the wire values), every variant in
//! discriminant order (`ALL`, for decoding and for legends), the decoder
//! (`from_u8`) and a short name for people (`as_str`). The macro writes all four
//! from one list, so a new variant cannot be left out of `ALL` or named twice, and
//! a compile-time check holds `ALL[i] as u8 == i`: the byte decodes to the variant
//! that wrote it.
//!
//! ```text
//! byte_enum! {
//!     /// Doc.
//!     #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
//!     pub enum QueueKind {
//!         /// Doc of the variant.
//!         Local = 0 => "local",
//!         RemoteLock = 1 => "remote rq lock",
//!     }
//! }
//! ```
//!
//! The enum gets `#[repr(u8)]`; the attributes written before it (derives, serde)
//! are kept as they are.

/// Writes the enum, `ALL`, `from_u8()` and `as_str()` (see the module doc).
macro_rules! byte_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $byte:literal => $label:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr(u8)]
        $vis enum $name {
            $(
                $(#[$vmeta])*
                $variant = $byte,
            )+
        }

        impl $name {
            /// Every variant, in discriminant order (the byte is the index).
            pub const ALL: [$name; [$(stringify!($variant)),+].len()] = [$($name::$variant),+];

            /// The variant whose byte is `v` (`None` past the last).
            pub fn from_u8(v: u8) -> Option<$name> {
                $name::ALL.get(v as usize).copied()
            }

            /// A short name for people.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $label,)+
                }
            }
        }

        // `from_u8()` indexes `ALL` by the byte: each variant's byte is its index.
        const _: () = {
            let mut i = 0;
            while i < $name::ALL.len() {
                assert!($name::ALL[i] as usize == i, "byte_enum!: bytes must count up from 0");
                i += 1;
            }
        };
    };
}

pub(crate) use byte_enum;
