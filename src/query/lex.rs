//! The filter language's tokens (query.md §1), read by winnow: each token with the byte
//! offset it starts at, so that every error can point at it.

use super::QueryError;
use winnow::combinator::{alt, not, opt, preceded, repeat, terminated};
use winnow::prelude::*;
use winnow::token::{one_of, take_while};

/// One token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok<'a> {
    /// A field name or a word (`and`, `in`, `true`, …): letters, digits, `_`, dots.
    Word(&'a str),
    /// A quoted string, unescaped.
    Str(String),
    /// A number as written (`-` and a fraction allowed).
    Num(f64),
    /// A time literal, in epoch milliseconds (UTC).
    Time(f64),
    /// `( ) { } , .. == != < <= > >= && || !`
    Sym(&'static str),
}

/// A token and where it is: `at` its first byte, `len` its length in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<'a> {
    pub tok: Tok<'a>,
    pub at: usize,
    pub len: usize,
}

/// The tokens of `text`; Err names the byte where no token starts.
pub fn tokens(text: &str) -> Result<Vec<Spanned<'_>>, QueryError> {
    let mut rest = text;
    let mut out = Vec::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Ok(out);
        }
        let at = text.len() - rest.len();
        let before = rest;
        // `2026-1…`: a time or nothing (never the number 2026 and a stray `-13`).
        if looks_like_time(rest) && time.parse_next(&mut { rest }).is_err() {
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || ":.-".contains(c)))
                .unwrap_or(rest.len());
            return Err(QueryError::at(
                at,
                len,
                format!("not a time: {}", super::parse::TIME_FORMS),
            ));
        }
        match token.parse_next(&mut rest) {
            Ok(tok) => out.push(Spanned {
                tok,
                at,
                len: before.len() - rest.len(),
            }),
            Err(_) => return Err(bad_token(before, at)),
        }
    }
}

/// `rest` starts as a time literal does (`YYYY-M`).
fn looks_like_time(rest: &str) -> bool {
    let b = rest.as_bytes();
    b.len() >= 6 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[5].is_ascii_digit()
}

/// Why no token starts at `at` (`rest` is the text from there).
fn bad_token(rest: &str, at: usize) -> QueryError {
    let c = rest.chars().next().unwrap_or(' ');
    let message = match c {
        '"' => "this string is never closed, or holds an escape other than \\\" \\\\ \\n \\t \\u{…}"
            .to_string(),
        '=' => "expected == (one = is not an operator)".to_string(),
        '&' => "expected && (or and)".to_string(),
        '|' => "expected || (or or)".to_string(),
        '.' => "expected a value before .. (a range is a..b inside in {…})".to_string(),
        c if c.is_ascii_digit() => {
            "not a number or a time (times: 2026-06-06, 2026-06-06T10:02Z, 2026-06-06T10:02:00.5Z)"
                .to_string()
        }
        '\'' => "strings are written in double quotes: \"…\"".to_string(),
        ':' => "expected an operator: a test is written field == \"value\" (the old key:value terms work alone, e.g. tool:sql is:marked)".to_string(),
        c => format!("unexpected character {c:?}"),
    };
    QueryError::at(at, c.len_utf8(), message)
}

fn token<'a>(input: &mut &'a str) -> winnow::Result<Tok<'a>> {
    alt((string, time, number, word, symbol)).parse_next(input)
}

fn word<'a>(input: &mut &'a str) -> winnow::Result<Tok<'a>> {
    let part = |i: &mut &'a str| -> winnow::Result<&'a str> {
        (
            one_of(|c: char| c.is_ascii_alphabetic() || c == '_'),
            take_while(0.., |c: char| c.is_ascii_alphanumeric() || c == '_'),
        )
            .take()
            .parse_next(i)
    };
    (part, repeat::<_, _, (), _, _>(0.., preceded('.', part)))
        .take()
        .map(Tok::Word)
        .parse_next(input)
}

fn symbol<'a>(input: &mut &'a str) -> winnow::Result<Tok<'a>> {
    let two = alt(("==", "!=", "<=", ">=", "&&", "||", ".."));
    let one = alt(("(", ")", "{", "}", ",", "<", ">", "!"));
    alt((two, one))
        .map(|s: &'a str| Tok::Sym(sym(s)))
        .parse_next(input)
}

/// The static name of a symbol just read.
fn sym(s: &str) -> &'static str {
    const ALL: [&str; 15] = [
        "==", "!=", "<=", ">=", "&&", "||", "..", "(", ")", "{", "}", ",", "<", ">", "!",
    ];
    ALL.into_iter().find(|a| *a == s).unwrap_or("?")
}

fn digits<'a>(n: usize) -> impl Parser<&'a str, &'a str, winnow::error::ContextError> {
    take_while(n, |c: char| c.is_ascii_digit())
}

/// `-?digits(.digits)?`, never followed by a letter or a digit.
fn number<'a>(input: &mut &'a str) -> winnow::Result<Tok<'a>> {
    terminated(
        (
            opt('-'),
            take_while(1.., |c: char| c.is_ascii_digit()),
            opt(('.', take_while(1.., |c: char| c.is_ascii_digit()))),
        )
            .take(),
        word_ends,
    )
    .verify_map(|s: &str| s.parse::<f64>().ok().map(Tok::Num))
    .parse_next(input)
}

/// The next character does not continue a word (`12ab` is no number).
fn word_ends(input: &mut &str) -> winnow::Result<()> {
    not(one_of(|c: char| c.is_ascii_alphanumeric() || c == '_')).parse_next(input)
}

/// `YYYY-MM-DD`, `YYYY-MM-DDTHH:MMZ`, `YYYY-MM-DDTHH:MM:SS(.fff)Z`, UTC.
fn time<'a>(input: &mut &'a str) -> winnow::Result<Tok<'a>> {
    let clock = (
        'T',
        digits(2),
        ':',
        digits(2),
        opt((
            ':',
            digits(2),
            opt(('.', take_while(1.., |c: char| c.is_ascii_digit()))),
        )),
        'Z',
    );
    terminated(
        (digits(4), '-', digits(2), '-', digits(2), opt(clock)).take(),
        word_ends,
    )
    .verify_map(|s: &str| time_ms(s).map(Tok::Time))
    .parse_next(input)
}

/// Epoch milliseconds of a time literal (any of the three forms).
pub fn time_ms(s: &str) -> Option<f64> {
    let full = match s.len() {
        10 => format!("{s}T00:00:00Z"),
        17 => format!("{}:00Z", &s[..16]),
        _ => s.to_string(),
    };
    crate::model::time::parse_iso8601_ms(&full)
}

/// A double-quoted string with `\" \\ \n \t \u{…}` escapes.
fn string<'a>(input: &mut &'a str) -> winnow::Result<Tok<'a>> {
    let plain = take_while(1.., |c: char| c != '"' && c != '\\').map(str::to_string);
    let escape = preceded(
        '\\',
        alt((
            '"'.value("\"".to_string()),
            '\\'.value("\\".to_string()),
            'n'.value("\n".to_string()),
            't'.value("\t".to_string()),
            preceded(
                "u{",
                (take_while(1..=6, |c: char| c.is_ascii_hexdigit()), '}'),
            )
            .verify_map(|(hex, _): (&str, char)| {
                u32::from_str_radix(hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .map(String::from)
            }),
        )),
    );
    let body = repeat(0.., alt((plain, escape))).fold(String::new, |mut s, p: String| {
        s.push_str(&p);
        s
    });
    ('"', body, '"')
        .map(|(_, s, _)| Tok::Str(s))
        .parse_next(input)
}
