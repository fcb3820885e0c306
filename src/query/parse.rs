//! Parsing and type-checking an expression (query.md §1, §4, §5): the tokens of
//! [`super::lex`] into an [`Expr`] whose every test names a field by its place in
//! [`FIELDS`] and holds literals of that field's type.

use super::QueryError;
use super::fields::{FIELDS, SEVERITIES, Type, closest, field};
use super::lex::{Spanned, Tok, tokens};

/// A checked expression.
#[derive(Clone, Debug)]
pub enum Expr {
    /// The empty expression: every action.
    All,
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Test(Test),
}

/// `field op value`, checked against the field's type.
#[derive(Clone, Debug)]
pub struct Test {
    /// Index into [`FIELDS`].
    pub field: usize,
    pub op: Op,
}

/// What a test asks of the field's value.
#[derive(Clone, Debug)]
pub enum Op {
    /// A bool field alone: true.
    IsTrue,
    Cmp(Cmp, Lit),
    In(Vec<Item>),
    Contains(String),
    Matches(regex::Regex),
    Exists,
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// One member of `in {…}`.
#[derive(Clone, Debug)]
pub enum Item {
    One(Lit),
    /// `a..b`, closed on both ends.
    Range(Lit, Lit),
}

/// A literal of its field's type: a time is epoch milliseconds, a severity its rank
/// (1 info … 4 high).
#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    Null,
    Str(String),
    Num(f64),
    Bool(bool),
}

/// An expression, parsed and checked: what `f`, `query` and `--where` take.
#[derive(Clone, Debug)]
pub struct Query {
    text: String,
    pub(super) expr: Expr,
}

impl Query {
    /// Parses and type-checks `text` (empty or blank: every action).
    pub fn parse(text: &str) -> Result<Query, QueryError> {
        let toks = tokens(text)?;
        let mut p = Parser {
            toks: &toks,
            next: 0,
        };
        let expr = if toks.is_empty() {
            Expr::All
        } else {
            let e = p.or()?;
            if let Some(t) = p.peek() {
                return Err(QueryError::at(
                    t.at,
                    t.len,
                    format!("expected and, or, or the end, found {}", shown(t)),
                ));
            }
            e
        };
        Ok(Query {
            text: text.to_string(),
            expr,
        })
    }

    /// The expression as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// True for the empty expression (every action matches).
    pub fn is_all(&self) -> bool {
        matches!(self.expr, Expr::All)
    }

    /// The fields the expression reads (indices into [`FIELDS`]).
    pub fn fields(&self) -> Vec<usize> {
        fn walk(e: &Expr, out: &mut Vec<usize>) {
            match e {
                Expr::All => {}
                Expr::And(a, b) | Expr::Or(a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Expr::Not(a) => walk(a, out),
                Expr::Test(t) => out.push(t.field),
            }
        }
        let mut out = Vec::new();
        walk(&self.expr, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// A token as a message names it.
fn shown(t: &Spanned<'_>) -> String {
    match &t.tok {
        Tok::Word(w) => format!("{w:?}"),
        Tok::Str(s) => format!("the string {s:?}"),
        Tok::Num(_) => "a number".into(),
        Tok::Time(_) => "a time".into(),
        Tok::Sym(s) => (*s).to_string(),
    }
}

const KEYWORDS: [&str; 10] = [
    "and", "or", "not", "in", "contains", "matches", "exists", "true", "false", "null",
];

const OPERATORS: &str = "== != < <= > >= in contains matches exists";

/// The time literal forms, for messages.
pub(super) const TIME_FORMS: &str = "a time is written 2026-06-06, 2026-06-06T10:02Z or 2026-06-06T10:02:00.5Z (UTC, no quotes), or as epoch milliseconds";

struct Parser<'t, 'a> {
    toks: &'t [Spanned<'a>],
    next: usize,
}

impl<'a> Parser<'_, 'a> {
    fn peek(&self) -> Option<&Spanned<'a>> {
        self.toks.get(self.next)
    }

    /// The last token read (what an error at the end points at).
    fn last(&self) -> &Spanned<'a> {
        &self.toks[self.next.saturating_sub(1).min(self.toks.len() - 1)]
    }

    fn eat(&mut self, words: &[&str]) -> bool {
        let hit = self.peek().is_some_and(|t| match t.tok {
            Tok::Word(w) | Tok::Sym(w) => words.contains(&w),
            _ => false,
        });
        if hit {
            self.next += 1;
        }
        hit
    }

    fn or(&mut self) -> Result<Expr, QueryError> {
        let mut e = self.and()?;
        while self.eat(&["or", "||"]) {
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr, QueryError> {
        let mut e = self.not()?;
        while self.eat(&["and", "&&"]) {
            e = Expr::And(Box::new(e), Box::new(self.not()?));
        }
        Ok(e)
    }

    fn not(&mut self) -> Result<Expr, QueryError> {
        if self.eat(&["not", "!"]) {
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, QueryError> {
        let Some(t) = self.peek().cloned() else {
            let last = self.last();
            return Err(QueryError::at(
                last.at,
                last.len,
                format!("expected a field or ( after {}", shown(last)),
            ));
        };
        if t.tok == Tok::Sym("(") {
            self.next += 1;
            let e = self.or()?;
            if !self.eat(&[")"]) {
                return Err(match self.peek() {
                    Some(u) => QueryError::at(
                        u.at,
                        u.len,
                        format!("expected ) or and/or, found {}", shown(u)),
                    ),
                    None => QueryError::at(t.at, 1, "this ( is never closed"),
                });
            }
            return Ok(e);
        }
        self.test(&t)
    }

    fn test(&mut self, t: &Spanned<'a>) -> Result<Expr, QueryError> {
        let name = match t.tok {
            Tok::Word(w) if !KEYWORDS.contains(&w) => w,
            _ => {
                return Err(QueryError::at(
                    t.at,
                    t.len,
                    format!("expected a field, found {}", shown(t)),
                ));
            }
        };
        self.next += 1;
        let Some(f) = field(name) else {
            let hint = match closest(name, FIELDS.iter().map(|f| f.name)) {
                Some(c) => format!(" — did you mean {c:?}?"),
                None => " (`aeplens query --fields` lists every field)".into(),
            };
            return Err(QueryError::at(
                t.at,
                t.len,
                format!("unknown field {name:?}{hint}"),
            ));
        };
        let ty = FIELDS[f].ty;
        let op_tok = self.peek().cloned();
        let op = match op_tok.as_ref().map(|o| &o.tok) {
            None | Some(Tok::Sym(")" | "&&" | "||") | Tok::Word("and" | "or")) => {
                if ty != Type::Bool {
                    return Err(QueryError::at(
                        t.at,
                        t.len,
                        format!(
                            "{name} is {}: a test needs an operator ({OPERATORS}){}",
                            ty.article(),
                            example(name, ty)
                        ),
                    ));
                }
                Op::IsTrue
            }
            Some(Tok::Sym(s @ ("==" | "!=" | "<" | "<=" | ">" | ">="))) => {
                let o = op_tok.clone().unwrap_or_else(|| t.clone());
                self.next += 1;
                let cmp = match *s {
                    "==" => Cmp::Eq,
                    "!=" => Cmp::Ne,
                    "<" => Cmp::Lt,
                    "<=" => Cmp::Le,
                    ">" => Cmp::Gt,
                    _ => Cmp::Ge,
                };
                if !matches!(cmp, Cmp::Eq | Cmp::Ne) && !ty.orders() {
                    return Err(QueryError::at(
                        o.at,
                        o.len,
                        format!(
                            "{name} is {}, which does not order: {s} takes a time, an int or a severity",
                            ty.article()
                        ),
                    ));
                }
                let lit = self.value(f, &o)?;
                if lit == Lit::Null && !matches!(cmp, Cmp::Eq | Cmp::Ne) {
                    return Err(QueryError::at(
                        o.at,
                        o.len,
                        format!("null does not order: use {name} == null or {name} exists"),
                    ));
                }
                Op::Cmp(cmp, lit)
            }
            Some(Tok::Word("in")) => {
                let o = op_tok.clone().unwrap_or_else(|| t.clone());
                self.next += 1;
                Op::In(self.items(f, &o)?)
            }
            Some(Tok::Word(w @ ("contains" | "matches"))) => {
                let o = op_tok.clone().unwrap_or_else(|| t.clone());
                self.next += 1;
                if !matches!(ty, Type::Str | Type::Set) {
                    return Err(QueryError::at(
                        o.at,
                        o.len,
                        format!("{name} is {}: {w} takes a string field", ty.article()),
                    ));
                }
                let Some(v) = self.peek().cloned() else {
                    return Err(QueryError::at(
                        o.at,
                        o.len,
                        format!("expected a quoted string after {w}"),
                    ));
                };
                let Tok::Str(text) = &v.tok else {
                    return Err(QueryError::at(
                        v.at,
                        v.len,
                        format!("expected a quoted string after {w}, found {}", shown(&v)),
                    ));
                };
                self.next += 1;
                if *w == "contains" {
                    Op::Contains(text.clone())
                } else {
                    let re = regex::Regex::new(text).map_err(|e| {
                        let why = e.to_string();
                        let last = why.lines().last().unwrap_or("").trim();
                        QueryError::at(
                            v.at,
                            v.len,
                            format!(
                                "not a regular expression: {}",
                                last.trim_start_matches("error: ")
                            ),
                        )
                    })?;
                    Op::Matches(re)
                }
            }
            Some(Tok::Word("exists")) => {
                self.next += 1;
                Op::Exists
            }
            Some(_) => {
                let o = op_tok.unwrap_or_else(|| t.clone());
                return Err(QueryError::at(
                    o.at,
                    o.len,
                    format!(
                        "expected an operator after {name} ({OPERATORS}), found {}",
                        shown(&o)
                    ),
                ));
            }
        };
        Ok(Expr::Test(Test { field: f, op }))
    }

    /// `{ item, … }` after `in` (`o`).
    fn items(&mut self, f: usize, o: &Spanned<'a>) -> Result<Vec<Item>, QueryError> {
        let field = &FIELDS[f];
        if !self.eat(&["{"]) {
            let at = self.peek().unwrap_or(o);
            return Err(QueryError::at(
                at.at,
                at.len,
                "expected { after in: in {\"a\", \"b\"}",
            ));
        }
        let mut items = Vec::new();
        loop {
            if items.is_empty() && self.eat(&["}"]) {
                let last = self.last();
                return Err(QueryError::at(
                    last.at,
                    last.len,
                    "an empty set matches nothing: name at least one value",
                ));
            }
            let before = self.peek().cloned().unwrap_or_else(|| o.clone());
            let prev = self.last().clone();
            let a = self.value(f, &prev)?;
            if self.eat(&[".."]) {
                let dots = self.last().clone();
                if !field.ty.orders() {
                    return Err(QueryError::at(
                        dots.at,
                        dots.len,
                        format!(
                            "{} is {}: a range a..b takes a time, an int or a severity",
                            field.name,
                            field.ty.article()
                        ),
                    ));
                }
                let b = self.value(f, &dots)?;
                if a == Lit::Null || b == Lit::Null {
                    return Err(QueryError::at(
                        before.at,
                        before.len,
                        "a range cannot end at null",
                    ));
                }
                items.push(Item::Range(a, b));
            } else {
                items.push(Item::One(a));
            }
            if self.eat(&["}"]) {
                return Ok(items);
            }
            if !self.eat(&[","]) {
                return Err(match self.peek() {
                    Some(u) => QueryError::at(
                        u.at,
                        u.len,
                        format!("expected , or }} in the set, found {}", shown(u)),
                    ),
                    None => QueryError::at(o.at, o.len, "this set is never closed: expected }"),
                });
            }
        }
    }

    /// The value after `o`, checked against field `f`'s type.
    fn value(&mut self, f: usize, o: &Spanned<'a>) -> Result<Lit, QueryError> {
        let field = &FIELDS[f];
        let Some(v) = self.peek().cloned() else {
            return Err(QueryError::at(
                o.at,
                o.len,
                format!(
                    "expected a value after {}{}",
                    shown(o),
                    example(field.name, field.ty)
                ),
            ));
        };
        self.next += 1;
        let wrong = |what: &str| {
            QueryError::at(
                v.at,
                v.len,
                format!(
                    "{} is {}: {what}{}",
                    field.name,
                    field.ty.article(),
                    example(field.name, field.ty)
                ),
            )
        };
        let lit = match (&v.tok, field.ty) {
            (Tok::Word("null"), _) => Lit::Null,
            (Tok::Word(w @ ("true" | "false")), Type::Bool) => Lit::Bool(*w == "true"),
            (Tok::Word(w), _)
                if !KEYWORDS.contains(w)
                    && matches!(field.ty, Type::Str | Type::Set | Type::Severity) =>
            {
                return Err(QueryError::at(
                    v.at,
                    v.len,
                    format!(
                        "expected a value, found {w:?} — strings are written in double quotes: \"{w}\""
                    ),
                ));
            }
            (Tok::Str(s), Type::Str | Type::Set) => {
                known(field, s, &v)?;
                Lit::Str(s.clone())
            }
            (Tok::Str(s), Type::Severity) => match SEVERITIES.iter().position(|x| x == s) {
                Some(i) => Lit::Num((i + 1) as f64),
                None => {
                    return Err(wrong(&format!(
                        "{s:?} is not a severity (info, low, medium, high)"
                    )));
                }
            },
            (Tok::Num(n), Type::Int | Type::Time) => Lit::Num(*n),
            (Tok::Time(ms), Type::Time) => Lit::Num(*ms),
            (Tok::Str(_), Type::Time) => {
                return Err(QueryError::at(
                    v.at,
                    v.len,
                    format!("{} is a time, not a string: {TIME_FORMS}", field.name),
                ));
            }
            (Tok::Time(_), _) => return Err(wrong("a time literal compares only with time")),
            (Tok::Str(_), _) => return Err(wrong("not a quoted string")),
            (Tok::Num(_), _) => return Err(wrong("not a number")),
            (Tok::Word(w), Type::Bool) if !KEYWORDS.contains(w) => {
                return Err(wrong("true, false or null"));
            }
            _ => {
                return Err(QueryError::at(
                    v.at,
                    v.len,
                    format!("expected a value after {}, found {}", shown(o), shown(&v)),
                ));
            }
        };
        Ok(lit)
    }
}

/// A field's own example, for messages: ` (tool == "sql_exec")`.
fn example(name: &str, ty: Type) -> String {
    let value = match ty {
        Type::Str | Type::Set => "\"…\"",
        Type::Int => "2",
        Type::Time => "2026-06-06T10:02Z",
        Type::Bool => "true",
        Type::Severity => "\"medium\"",
    };
    let op = if ty.orders() { ">=" } else { "==" };
    format!(" (e.g. {name} {op} {value})")
}

/// Err when a closed field is compared with a value it never takes.
fn known(field: &super::Field, s: &str, v: &Spanned<'_>) -> Result<(), QueryError> {
    if field.values.is_empty() || field.values.contains(&s) {
        return Ok(());
    }
    let hint = match closest(s, field.values.iter().copied()) {
        Some(c) => format!(" — did you mean {c:?}?"),
        None => format!(" ({})", field.values.join(", ")),
    };
    Err(QueryError::at(
        v.at,
        v.len,
        format!("{} is never {s:?}{hint}", field.name),
    ))
}
