//! Timestamps as Claude Code writes them: RFC 3339 in UTC with milliseconds
//! (`2026-02-16T18:47:50.590Z`). The core never reads a clock; hosts pass Unix
//! milliseconds in and the core formats them.

use alloc::format;
use alloc::string::String;

const MS_PER_DAY: i64 = 86_400_000;

/// Formats Unix milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_millis(unix_ms: i64) -> String {
    let days = unix_ms.div_euclid(MS_PER_DAY);
    let ms_of_day = unix_ms.rem_euclid(MS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let secs = ms_of_day / 1000;
    if !(0..=9999).contains(&year) {
        return format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z", secs / 3600, secs / 60 % 60, secs % 60, ms_of_day % 1000);
    }
    // Digit by digit: every append formats a timestamp, and `format!` cost more than a
    // tenth of a held append.
    let mut out = *b"0000-00-00T00:00:00.000Z";
    let fields = [
        (0, 4, year),
        (5, 2, month),
        (8, 2, day),
        (11, 2, secs / 3600),
        (14, 2, secs / 60 % 60),
        (17, 2, secs % 60),
        (20, 3, ms_of_day % 1000),
    ];
    for (at, width, mut value) in fields {
        for digit in out[at..at + width].iter_mut().rev() {
            *digit = b'0' + (value % 10) as u8;
            value /= 10;
        }
    }
    // ASCII digits and separators: always UTF-8.
    core::str::from_utf8(&out).unwrap_or_default().into()
}

/// Parses an RFC 3339 timestamp (`Z` or a numeric offset, any number of fraction
/// digits) into Unix milliseconds. Returns `None` for anything else.
pub fn parse_millis(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |range: core::ops::Range<usize>| -> Option<i64> {
        let digits = b.get(range)?;
        digits.iter().try_fold(0i64, |acc, &d| d.is_ascii_digit().then(|| acc * 10 + i64::from(d - b'0')))
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = &b[19..];
    let mut millis = 0;
    if let Some((b'.', fraction)) = rest.split_first() {
        let digits = fraction.iter().take_while(|d| d.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        for (i, d) in fraction[..digits.min(3)].iter().enumerate() {
            millis += i64::from(d - b'0') * [100, 10, 1][i];
        }
        rest = &fraction[digits..];
    }
    let offset_minutes = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] if [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit()) => {
            let hh = i64::from(h1 - b'0') * 10 + i64::from(h2 - b'0');
            let mm = i64::from(m1 - b'0') * 10 + i64::from(m2 - b'0');
            if hh > 23 || mm > 59 {
                return None;
            }
            if *sign == b'+' { hh * 60 + mm } else { -(hh * 60 + mm) }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    Some(days * MS_PER_DAY + ((hour * 60 + minute - offset_minutes) * 60 + second) * 1000 + millis)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's proleptic Gregorian day algorithms.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use proptest::prelude::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_millis(1_771_267_670_590), "2026-02-16T18:47:50.590Z");
        assert_eq!(format_millis(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(format_millis(253_402_300_799_999), "9999-12-31T23:59:59.999Z");
        assert_eq!(format_millis(253_402_300_800_000), "10000-01-01T00:00:00.000Z");
        assert_eq!(format_millis(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(format_millis(-62_167_219_200_001), "-001-12-31T23:59:59.999Z");
    }

    #[test]
    fn parses_offsets_and_fractions() {
        assert_eq!(parse_millis("2026-02-16T18:47:50.590Z"), Some(1_771_267_670_590));
        assert_eq!(parse_millis("2026-02-16T19:47:50.590123+01:00"), Some(1_771_267_670_590));
        assert_eq!(parse_millis("2026-02-16T18:47:50Z"), Some(1_771_267_670_000));
        assert_eq!(parse_millis("2024-02-29T00:00:00Z"), Some(1_709_164_800_000));
        for bad in [
            "2026-02-31T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-02-16T18:47:50+0:::0",
            "2026-02-16T18:47:50+;0:00",
        ] {
            assert_eq!(parse_millis(bad), None, "{bad}");
        }
        for bad in ["", "2026-02-16", "2026-13-01T00:00:00Z", "2026-02-16T18:47:50.Z", "2026-02-16T18:47:50.5", "x026-02-16T18:47:50Z"] {
            assert_eq!(parse_millis(bad), None, "{bad}");
        }
    }

    proptest! {
        #[test]
        fn agrees_with_humantime_and_round_trips(ms in 0i64..8_000_000_000_000) {
            let text = format_millis(ms);
            let expected = humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms as u64)).to_string();
            prop_assert_eq!(&text, &expected);
            prop_assert_eq!(parse_millis(&text), Some(ms));
        }
    }
}
