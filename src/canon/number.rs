//! ECMAScript `Number::toString` and the F-NUMBER-PRECISION test (verification.md §a.3, §a.6).

/// Writes a double as JavaScript's `JSON.stringify` does: shortest round-trip digits in
/// the ECMAScript layout, `-0` as `0`, NaN and ±Infinity as `null`.
pub fn format_number(value: f64, out: &mut Vec<u8>) {
    if !value.is_finite() {
        out.extend_from_slice(b"null");
    } else if value == 0.0 {
        out.push(b'0');
    } else {
        let mut buf = ryu_js::Buffer::new();
        out.extend_from_slice(buf.format_finite(value).as_bytes());
    }
}

/// How the signed value of a number token differs from its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrecisionLoss {
    /// The token names a value no double holds; the signature covers a rounded value.
    Rounded,
    /// The token overflows a double: JavaScript reads ±Infinity and signs `null`.
    Overflow,
}

/// Compares the decimal value of `raw` with the double `value` read from it.
/// A respelling of the same value (`0.300`, `1E0`) is no loss.
pub fn precision_loss(raw: &str, value: f64) -> Option<PrecisionLoss> {
    if !value.is_finite() {
        return Some(PrecisionLoss::Overflow);
    }
    let mut shortest = Vec::new();
    format_number(value, &mut shortest);
    let shortest = std::str::from_utf8(&shortest).unwrap_or("0");
    if decimal(raw) == decimal(shortest) {
        None
    } else {
        Some(PrecisionLoss::Rounded)
    }
}

/// A decimal number as (negative, significant digits, exponent) with value
/// `0.d1d2… × 10^exponent`; zero is `(false, "", 0)`.
fn decimal(text: &str) -> (bool, String, i64) {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], parse_exp(&rest[i + 1..])),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = int.chars().chain(frac.chars()).collect();
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all
        .trim_start_matches('0')
        .trim_end_matches('0')
        .to_string();
    if digits.is_empty() {
        return (false, String::new(), 0);
    }
    let point = int.len() as i64 - leading as i64;
    (negative, digits, point.saturating_add(exp))
}

fn parse_exp(s: &str) -> i64 {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for c in digits.bytes() {
        v = v.saturating_mul(10).saturating_add(i64::from(c - b'0'));
    }
    if neg { -v } else { v }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(token: &str) -> String {
        let mut out = Vec::new();
        format_number(token.parse().unwrap(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ecmascript_layout_matches_node() {
        let table = [
            ("1.0", "1"),
            ("1e0", "1"),
            ("100.0e-2", "1"),
            ("0.1e1", "1"),
            ("-0", "0"),
            ("0.0", "0"),
            ("-0.0", "0"),
            ("12.50", "12.5"),
            ("2.5E+3", "2500"),
            ("1e-6", "0.000001"),
            ("0.000001", "0.000001"),
            ("0.0000012", "0.0000012"),
            ("123e-20", "1.23e-18"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("123456789012345678901", "123456789012345680000"),
            ("9007199254740993", "9007199254740992"),
            ("1e-7", "1e-7"),
            ("1.5e-7", "1.5e-7"),
            ("0.30000000000000004", "0.30000000000000004"),
            ("5e-324", "5e-324"),
            ("1E400", "null"),
            ("-1E400", "null"),
            ("1e-400", "0"),
            ("1773480455589.25", "1773480455589.25"),
            ("-0.0000725", "-0.0000725"),
            ("2e-323", "2e-323"),
            ("999999999999999900000", "999999999999999900000"),
        ];
        for (input, expected) in table {
            assert_eq!(js(input), expected, "input {input}");
        }
    }

    #[test]
    fn precision_loss_is_about_value_not_spelling() {
        for same in [
            "0.300",
            "1E0",
            "10e-1",
            "-0",
            "0.1",
            "1.773480453688E+12",
            "7.0000e0",
            "20e-324",
        ] {
            assert_eq!(precision_loss(same, same.parse().unwrap()), None, "{same}");
        }
        for lossy in [
            "1.00000000000000001",
            "9007199254740993",
            "123456789012345678901",
            "1e-400",
        ] {
            assert_eq!(
                precision_loss(lossy, lossy.parse().unwrap()),
                Some(PrecisionLoss::Rounded),
                "{lossy}"
            );
        }
        assert_eq!(
            precision_loss("1e400", f64::INFINITY),
            Some(PrecisionLoss::Overflow)
        );
    }
}
