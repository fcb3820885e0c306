//! Epoch milliseconds ⇄ ISO-8601 UTC, for lease files and display.

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM)` into epoch milliseconds.
pub fn parse_iso8601_ms(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac_ms = 0.0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let digits = text.get(start..i)?;
        if digits.is_empty() {
            return None;
        }
        frac_ms = format!("0.{digits}").parse::<f64>().ok()? * 1000.0;
    }
    let offset_min = match text.get(i..)? {
        "Z" | "z" => 0,
        rest if rest.len() == 6 && matches!(&rest[..1], "+" | "-") && &rest[3..4] == ":" => {
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (num(i + 1..i + 3)? * 60 + num(i + 4..i + 6)?)
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset_min * 60;
    Some(secs as f64 * 1000.0 + frac_ms)
}

/// The value of a `*_ms` member holding an epoch time (after 1973) as a reviewer reads
/// it: ISO-8601 UTC, and the raw number as written. `None` for anything else.
pub fn epoch_member(name: &str, value: &super::json::Json) -> Option<(String, String)> {
    match value {
        super::json::Json::Number(n) if name.ends_with("_ms") && n.value.abs() > 1e11 => {
            Some((format_ms(n.value), n.raw.to_string()))
        }
        _ => None,
    }
}

/// Formats epoch milliseconds as `YYYY-MM-DDTHH:MM:SS.sssZ` (UTC); non-finite values and
/// years outside 0–9999 are shown as the raw number.
pub fn format_ms(ms: f64) -> String {
    if !ms.is_finite() || !(-62_167_219_200_000.0..253_402_300_800_000.0).contains(&ms) {
        return format!("{ms} ms");
    }
    let total = ms.floor() as i64;
    let (secs, milli) = (total.div_euclid(1000), total.rem_euclid(1000));
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

/// A duration in milliseconds as a short human string (`850ms`, `12.5s`, `3m20s`, `2h05m`).
pub fn format_duration_ms(ms: f64) -> String {
    let sign = if ms < 0.0 { "-" } else { "" };
    let ms = ms.abs();
    if ms < 1000.0 {
        format!("{sign}{}ms", ms.round())
    } else if ms < 60_000.0 {
        format!("{sign}{:.1}s", ms / 1000.0)
    } else if ms < 3_600_000.0 {
        let s = (ms / 1000.0).round() as i64;
        format!("{sign}{}m{:02}s", s / 60, s % 60)
    } else if ms < 86_400_000.0 * 2.0 {
        let m = (ms / 60_000.0).round() as i64;
        format!("{sign}{}h{:02}m", m / 60, m % 60)
    } else {
        format!("{sign}{:.1}d", ms / 86_400_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_offsets() {
        let ms = parse_iso8601_ms("2026-03-14T09:26:58.600Z").unwrap();
        assert_eq!(ms, 1_773_480_418_600.0);
        assert_eq!(format_ms(ms), "2026-03-14T09:26:58.600Z");
        assert_eq!(parse_iso8601_ms("1970-01-01T01:00:00+01:00"), Some(0.0));
        assert_eq!(format_ms(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_ms(-1.0), "1969-12-31T23:59:59.999Z");
        for bad in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-03-14 09:26",
            "2026-03-14T09:26:58.Z",
        ] {
            assert_eq!(parse_iso8601_ms(bad), None, "{bad}");
        }
        assert_eq!(format_ms(f64::NAN), "NaN ms");
        assert_eq!(format_duration_ms(125_000.0), "2m05s");
    }
}
