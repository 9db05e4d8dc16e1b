//! Reading the tree: where a key or value is, as a file, line and column; tables with
//! their key paths; and the errors, with "did you mean" for a misspelt key.

use std::ops::Range;

use super::tree::{Entry, Node, Val};
use crate::scenario::ScenarioError;

/// Errors travel boxed inside the module: `ScenarioError` is large.
pub(super) type Res<T> = Result<T, Box<ScenarioError>>;

/// The file being read: its name for errors, its text for positions.
pub(super) struct Cx<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
}

impl Cx<'_> {
    /// 1-based line and column (in characters) of a byte offset.
    fn position(&self, offset: usize) -> (usize, usize) {
        let mut off = offset.min(self.text.len());
        while !self.text.is_char_boundary(off) {
            off -= 1;
        }
        let before = &self.text[..off];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        (line, column)
    }

    pub(super) fn error(
        &self,
        span: Option<&Range<usize>>,
        key: &str,
        message: impl Into<String>,
    ) -> ScenarioError {
        let (line, column) = match span {
            Some(r) => {
                let (l, c) = self.position(r.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        ScenarioError {
            file: self.file.to_owned(),
            line,
            column,
            key: key.to_owned(),
            message: message.into(),
            suggestion: None,
        }
    }

    pub(super) fn fail(
        &self,
        span: Option<&Range<usize>>,
        key: &str,
        message: impl Into<String>,
    ) -> Box<ScenarioError> {
        Box::new(self.error(span, key, message))
    }
}

pub(super) fn with_suggestion(mut e: Box<ScenarioError>, s: Option<&str>) -> Box<ScenarioError> {
    e.suggestion = s.map(str::to_owned);
    e
}

/// The candidate nearest to `word`, if it is reasonably close.
pub(super) fn nearest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    let mut best: Option<(f64, &'a str)> = None;
    for &c in candidates {
        let lev = strsim::normalized_damerau_levenshtein(&w, c);
        let jw = strsim::jaro_winkler(&w, c);
        let close = lev >= 0.5 || jw >= 0.88;
        let score = lev.max(jw);
        if close && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, c));
        }
    }
    best.map(|(_, c)| c)
}

/// How a value reads in an error message.
pub(super) fn describe(v: &Val) -> String {
    match v {
        Val::Str(s) => {
            let shown: String = s.chars().take(40).collect();
            if shown.len() < s.len() {
                format!("the string \"{shown}...\"")
            } else {
                format!("the string \"{s}\"")
            }
        }
        Val::Int(i) => format!("the integer {i}"),
        Val::Float(f) => format!("the float {f}"),
        Val::Bool(b) => format!("the boolean {b}"),
        Val::Datetime(d) => format!("the date-time {d}"),
        Val::Array(_) => "an array".to_string(),
        Val::Table(_) => "a table".to_string(),
    }
}

/// `"a", "b" or "c"`.
pub(super) fn quoted_list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A value with its key path, for checking.
pub(super) struct Item<'a> {
    pub(super) path: String,
    pub(super) node: &'a Node,
    pub(super) key_span: Option<&'a Range<usize>>,
}

impl<'a> Item<'a> {
    /// Where the value is; its key when the value has no span.
    pub(super) fn span(&self) -> Option<&'a Range<usize>> {
        self.node.span.as_ref().or(self.key_span)
    }

    pub(super) fn fail(&self, cx: &Cx<'_>, message: impl Into<String>) -> Box<ScenarioError> {
        cx.fail(self.span(), &self.path, message)
    }

    pub(super) fn expected(&self, cx: &Cx<'_>, what: &str) -> Box<ScenarioError> {
        self.fail(
            cx,
            format!("expected {what}, found {}", describe(&self.node.val)),
        )
    }
}

/// A table being checked: its path prefix, entries and where it is.
pub(super) struct Table<'a> {
    pub(super) path: String,
    pub(super) entries: &'a [Entry],
    pub(super) span: Option<&'a Range<usize>>,
}

impl<'a> Table<'a> {
    pub(super) fn key_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The first key not in `allowed` (checked in file order), as an error with a suggestion.
    pub(super) fn check_keys(&self, cx: &Cx<'_>, allowed: &[&str], what: &str) -> Res<()> {
        for e in self.entries {
            if !allowed.contains(&e.key.as_str()) {
                return Err(unknown_key(cx, self, e, allowed, what));
            }
        }
        Ok(())
    }

    /// Each key and its value, in file order.
    pub(super) fn items(&self) -> impl Iterator<Item = (&'a str, Item<'a>)> + '_ {
        self.entries.iter().map(|e| (e.key.as_str(), self.item(e)))
    }

    fn item(&self, e: &'a Entry) -> Item<'a> {
        Item {
            path: self.key_path(&e.key),
            node: &e.node,
            key_span: e.key_span.as_ref(),
        }
    }

    /// The value under `key`, which must be there: `what` says what it should be.
    pub(super) fn required(&self, cx: &Cx<'_>, key: &str, what: &str) -> Res<Item<'a>> {
        opt(self, key).ok_or_else(|| self.missing(cx, key, what))
    }

    fn missing(&self, cx: &Cx<'_>, key: &str, what: &str) -> Box<ScenarioError> {
        let where_ = if self.path.is_empty() {
            "the file".to_string()
        } else if self.path.ends_with(']') {
            self.path.clone()
        } else {
            format!("[{}]", self.path)
        };
        cx.fail(
            self.span,
            &self.key_path(key),
            format!("missing required key '{key}' in {where_}: expected {what}"),
        )
    }
}

pub(super) fn unknown_key(
    cx: &Cx<'_>,
    t: &Table<'_>,
    e: &Entry,
    allowed: &[&str],
    what: &str,
) -> Box<ScenarioError> {
    let path = t.key_path(&e.key);
    let span = e.key_span.as_ref().or(e.node.span.as_ref());
    let err = cx.fail(
        span,
        &path,
        format!(
            "unknown key '{}' in {what}; expected one of: {}",
            e.key,
            allowed.join(", ")
        ),
    );
    with_suggestion(err, nearest(&e.key, allowed))
}

/// The value under `key`, if present.
pub(super) fn opt<'a>(t: &Table<'a>, key: &str) -> Option<Item<'a>> {
    t.entries.iter().find(|e| e.key == key).map(|e| t.item(e))
}

pub(super) fn sub_table<'a>(cx: &Cx<'_>, item: &Item<'a>, what: &str) -> Res<Table<'a>> {
    match &item.node.val {
        Val::Table(entries) => Ok(Table {
            path: item.path.to_owned(),
            entries,
            span: item.key_span.or(item.node.span.as_ref()),
        }),
        _ => Err(item.expected(cx, what)),
    }
}

/// The tables of `[[name]]`, in file order, each with its path `name[i]` and where its
/// header is; one that is not a table is an error when its turn comes.
pub(super) fn array_of_tables<'a, 'c>(
    cx: &'c Cx<'_>,
    item: &Item<'a>,
    name: &'c str,
) -> Res<impl Iterator<Item = Res<Table<'a>>> + 'c>
where
    'a: 'c,
{
    let Val::Array(nodes) = &item.node.val else {
        return Err(item.expected(cx, &format!("an array of tables, written [[{name}]]")));
    };
    let key_span = item.key_span;
    Ok(nodes.iter().enumerate().map(move |(i, node)| {
        let it = Item {
            path: format!("{name}[{i}]"),
            node,
            key_span,
        };
        let t = sub_table(cx, &it, &format!("a table, written [[{name}]]"))?;
        Ok(Table {
            span: node.span.as_ref().or(key_span),
            ..t
        })
    }))
}
