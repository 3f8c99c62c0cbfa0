//! Ids the core derives itself, since it has no randomness: from what a line is and
//! where it goes, or from an id the host supplied.

use alloc::format;
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
    format!("{:016x}", hash(seed, &now_ms.to_le_bytes(), BASIS))
}

/// Eight hex digits of a hash of `seed`: an id of pi's length for a seed whose own
/// start is not random.
pub(crate) fn short_id(seed: &str) -> String {
    format!("{:08x}", hash(&[seed], &[], BASIS) >> 32)
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
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0xfff,
        0x8000 | ((low >> 48) & 0x3fff),
        low & 0xffff_ffff_ffff
    )
}
