//! The TOML of a scenario file as a tree that keeps the byte span of every key and value.
//!
//! `toml_edit` parses the text (it is the parser `toml` 0.8 runs, so syntax errors read as
//! they always have) and its document keeps where each key and value stands; the tree
//! copies what the checks need, in file order. A table made implicitly (`[kernel]` of a
//! lone `[kernel.switches]`) has no span of its own; its key has.

use std::ops::Range;

use toml_edit::{ImDocument, Item, TableLike, TomlError, Value};

#[derive(Clone, Debug)]
pub(super) struct Node {
    pub(super) span: Option<Range<usize>>,
    pub(super) val: Val,
}

#[derive(Clone, Debug)]
pub(super) enum Val {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Datetime(String),
    Array(Vec<Node>),
    Table(Vec<Entry>),
}

#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) key: String,
    pub(super) key_span: Option<Range<usize>>,
    pub(super) node: Node,
}

/// The root table's entries.
pub(super) fn parse_tree(text: &str) -> Result<Vec<Entry>, TomlError> {
    Ok(entries(ImDocument::parse(text)?.as_table()))
}

fn entries(t: &dyn TableLike) -> Vec<Entry> {
    t.iter()
        .map(|(key, item)| Entry {
            key: key.to_owned(),
            key_span: t.get_key_value(key).and_then(|(k, _)| k.span()),
            node: item_node(item),
        })
        .collect()
}

fn item_node(item: &Item) -> Node {
    let val = match item {
        Item::Value(v) => return value_node(v),
        Item::Table(t) => Val::Table(entries(t)),
        Item::ArrayOfTables(a) => Val::Array(
            a.iter()
                .map(|t| Node {
                    span: t.span(),
                    val: Val::Table(entries(t)),
                })
                .collect(),
        ),
        // An absent value: the parser makes none.
        Item::None => Val::Table(Vec::new()),
    };
    Node {
        span: item.span(),
        val,
    }
}

fn value_node(v: &Value) -> Node {
    let val = match v {
        Value::String(s) => Val::Str(s.value().clone()),
        Value::Integer(i) => Val::Int(*i.value()),
        Value::Float(f) => Val::Float(*f.value()),
        Value::Boolean(b) => Val::Bool(*b.value()),
        Value::Datetime(d) => Val::Datetime(d.value().to_string()),
        Value::Array(a) => Val::Array(a.iter().map(value_node).collect()),
        Value::InlineTable(t) => Val::Table(entries(t)),
    };
    Node {
        span: v.span(),
        val,
    }
}
