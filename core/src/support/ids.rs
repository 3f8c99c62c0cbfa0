//! Ids the core derives itself, since it has no randomness: from what a line is and
//! where it goes, or from an id the host supplied.

use alloc::string::String;

/// FNV-1a over the seed strings (each ended by a 0 byte) and `extra`.
fn hash(seed: &[&str], extra: &[u8], basis: u64) -> u64 {
    let mut hash = basis;
    for byte in seed.iter().flat_map(|s| s.bytes().chain([0])).chain(extra.iter().copied()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

const BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// A 16-hex-digit id for a line the host gave none for.
pub(crate) fn derived_id(seed: &[&str], now_ms: i64) -> String {
    let mut id = String::with_capacity(16);
    push_hex(&mut id, hash(seed, &now_ms.to_le_bytes(), BASIS), 16);
    id
}

/// Sixteen hex digits of a hash of `text`: a version of what a text says, kept beside
/// what was derived from it (a memory's vector) to tell when it is out of date, and the
/// end of the session id an agent SDK's name maps to (`keys::session_id_of`): sessions
/// on disk are named by it, so it never changes.
pub(crate) fn fingerprint(text: &str) -> String {
    let mut id = String::with_capacity(16);
    push_hex(&mut id, hash(&[text], &[], BASIS), 16);
    id
}

/// Eight hex digits of a hash of `seed`: an id of pi's length for a seed whose own
/// start is not random.
pub(crate) fn short_id(seed: &str) -> String {
    let mut id = String::with_capacity(8);
    push_hex(&mut id, hash(&[seed], &[], BASIS) >> 32, 8);
    id
}

/// The `n`th id of a record whose first id the host supplied: `base` itself for 0,
/// else a UUID-shaped (version 4 layout) id derived from `base` and `n`, so every line
/// of a turn has an id of the form Claude Code writes.
pub(crate) fn nth_uuid(base: &str, n: u32) -> String {
    if n == 0 {
        return base.into();
    }
    let high = hash(&[base], &n.to_le_bytes(), BASIS);
    let low = hash(&[base], &n.to_le_bytes(), BASIS ^ 0x5bd1_e995_5bd1_e995);
    let mut id = String::with_capacity(36);
    push_hex(&mut id, high >> 32, 8);
    id.push('-');
    push_hex(&mut id, high >> 16, 4);
    id.push_str("-4");
    push_hex(&mut id, high, 3);
    id.push('-');
    push_hex(&mut id, 0x8000 | ((low >> 48) & 0x3fff), 4);
    id.push('-');
    push_hex(&mut id, low, 12);
    id
}

/// The low `digits` hex digits of `value`, in lowercase, zero-padded: what
/// `format!("{:0digits$x}")` writes of a value that fits, without the formatter's
/// machinery (a turn of ten lines takes nine ids; formatted, they cost a tenth of it).
fn push_hex(out: &mut String, value: u64, digits: u32) {
    for shift in (0..digits).rev() {
        let digit = ((value >> (shift * 4)) & 0xf) as u8;
        out.push(char::from(if digit < 10 { b'0' + digit } else { b'a' + digit - 10 }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    /// The ids are the ones the formatter wrote before (sessions already on disk hold
    /// them, and a retried write must derive the same): every digit of every width.
    #[test]
    fn ids_are_written_as_the_formatter_wrote_them() {
        for base in ["", "turn-1", "0f3e2d1c-aaaa-4bbb-8ccc-1234567890ab", "é"] {
            for n in [1, 2, 9, 1000, u32::MAX] {
                let high = hash(&[base], &n.to_le_bytes(), BASIS);
                let low = hash(&[base], &n.to_le_bytes(), BASIS ^ 0x5bd1_e995_5bd1_e995);
                let formatted = format!(
                    "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
                    high >> 32,
                    (high >> 16) & 0xffff,
                    high & 0xfff,
                    0x8000 | ((low >> 48) & 0x3fff),
                    low & 0xffff_ffff_ffff
                );
                assert_eq!(nth_uuid(base, n), formatted, "{base} {n}");
            }
            assert_eq!(nth_uuid(base, 0), base);
            assert_eq!(short_id(base), format!("{:08x}", hash(&[base], &[], BASIS) >> 32));
            for now in [0, -1, 1_900_000_000_000, i64::MAX] {
                assert_eq!(derived_id(&[base, "x"], now), format!("{:016x}", hash(&[base, "x"], &now.to_le_bytes(), BASIS)));
            }
        }
        for value in [0, 9, 10, 15, 0x0123_4567_89ab_cdef, u64::MAX] {
            for digits in [1, 3, 4, 8, 12, 16] {
                let mut written = String::new();
                push_hex(&mut written, value, digits);
                let mask = if digits == 16 { u64::MAX } else { (1 << (digits * 4)) - 1 };
                assert_eq!(written, format!("{:0width$x}", value & mask, width = digits as usize), "{value:x} {digits}");
            }
        }
    }
}
