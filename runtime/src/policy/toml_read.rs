//! Reading values out of a parsed TOML document while keeping track of
//! where they were written: the line of each key, tables written either
//! way (`[[x]]` or inline), and TOML values as the JSON a call's arguments
//! are.

use std::ops::Range;

use serde_json::Value as Json;
use toml_edit::{Item, TableLike, Value};

use super::error::Problems;

/// A rules file being read: its lines, and the problems found so far.
pub(crate) struct Reader {
    /// The byte offset where each line starts.
    line_starts: Vec<usize>,
    /// Every problem found.
    pub(crate) problems: Problems,
}

impl Reader {
    /// Ready to read `text`, whose problems are reported as in `file`.
    pub(crate) fn new(text: &str, file: &str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(at, _)| at + 1))
            .collect();
        Reader {
            line_starts,
            problems: Problems::new(file),
        }
    }

    /// The line (1-based) of a span's start; `fallback` when there is no
    /// span (a table made implicitly by a dotted key has none).
    pub(crate) fn line(&self, span: Option<Range<usize>>, fallback: usize) -> usize {
        match span {
            Some(span) => self
                .line_starts
                .partition_point(|&start| start <= span.start),
            None => fallback,
        }
    }

    /// The line of `key` in `table`, or `fallback`.
    pub(crate) fn key_line(&self, table: &dyn TableLike, key: &str, fallback: usize) -> usize {
        let span = table.get_key_value(key).and_then(|(key, _)| key.span());
        self.line(span, fallback)
    }

    /// Notes a problem on `line` of the rule labelled `rule`.
    pub(crate) fn problem(&mut self, line: usize, rule: Option<&str>, message: String) {
        self.problems.add(Some(line), rule, message);
    }
}

/// The tables of an array of tables, written either as `[[name]]` headers
/// or as an inline array of inline tables, each with its span; `Err` with
/// the 1-based position of an element that is not a table.
pub(crate) fn tables_in(item: &Item) -> Option<Result<Vec<TableAt<'_>>, usize>> {
    if let Some(tables) = item.as_array_of_tables() {
        return Some(Ok(tables
            .iter()
            .map(|table| TableAt {
                table: table as &dyn TableLike,
                span: table.span(),
            })
            .collect()));
    }
    let array = item.as_array()?;
    Some(
        array
            .iter()
            .enumerate()
            .map(|(index, value)| match value.as_inline_table() {
                Some(table) => Ok(TableAt {
                    table: table as &dyn TableLike,
                    span: value.span(),
                }),
                None => Err(index + 1),
            })
            .collect(),
    )
}

/// A table and where it was written.
pub(crate) struct TableAt<'a> {
    /// The table.
    pub(crate) table: &'a dyn TableLike,
    /// Its span, when the parser kept one.
    pub(crate) span: Option<Range<usize>>,
}

/// A TOML item as JSON: tables as objects, arrays as arrays. Dates have
/// no JSON form and are refused, as are floats that are not finite.
pub(crate) fn item_to_json(item: &Item) -> Result<Json, String> {
    match item {
        Item::Value(value) => value_to_json(value),
        Item::Table(table) => table_to_json(table),
        Item::ArrayOfTables(tables) => tables
            .iter()
            .map(|table| table_to_json(table))
            .collect::<Result<_, _>>()
            .map(Json::Array),
        Item::None => Ok(Json::Null),
    }
}

fn table_to_json(table: &dyn TableLike) -> Result<Json, String> {
    table
        .iter()
        .map(|(key, item)| Ok((key.to_owned(), item_to_json(item)?)))
        .collect::<Result<_, String>>()
        .map(Json::Object)
}

/// A TOML value as JSON.
pub(crate) fn value_to_json(value: &Value) -> Result<Json, String> {
    match value {
        Value::String(text) => Ok(Json::String(text.value().clone())),
        Value::Integer(number) => Ok(Json::from(*number.value())),
        Value::Float(number) => serde_json::Number::from_f64(*number.value())
            .map(Json::Number)
            .ok_or_else(|| format!("{} is not a finite number", number.value())),
        Value::Boolean(flag) => Ok(Json::Bool(*flag.value())),
        Value::Datetime(date) => Err(format!(
            "{} is a TOML date, which a call's arguments never are; write it as a string",
            date.value()
        )),
        Value::Array(items) => items
            .iter()
            .map(value_to_json)
            .collect::<Result<_, _>>()
            .map(Json::Array),
        Value::InlineTable(table) => table_to_json(table),
    }
}

/// What kind of TOML value an item is, for messages ("a string").
pub(crate) fn kind_of(item: &Item) -> &'static str {
    match item {
        Item::Value(Value::String(_)) => "a string",
        Item::Value(Value::Integer(_)) => "an integer",
        Item::Value(Value::Float(_)) => "a float",
        Item::Value(Value::Boolean(_)) => "a boolean",
        Item::Value(Value::Datetime(_)) => "a date",
        Item::Value(Value::Array(_)) | Item::ArrayOfTables(_) => "an array",
        Item::Value(Value::InlineTable(_)) | Item::Table(_) => "a table",
        Item::None => "nothing",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_json() {
        let text = "a = 1\n\n[t]\nb = [1, 2.5, \"x\", true]\nc = { d = 'e' }\nwhen = 1979-05-27\n";
        let doc = toml_edit::Document::parse(text).unwrap();
        let reader = Reader::new(text, "f");
        let root = doc.as_table();
        assert_eq!(reader.key_line(root, "a", 0), 1);
        let table = root["t"].as_table().unwrap();
        assert_eq!(reader.key_line(table, "b", 0), 4);
        assert_eq!(reader.key_line(table, "missing", 42), 42);
        assert_eq!(
            item_to_json(&root["t"]["b"]).unwrap(),
            serde_json::json!([1, 2.5, "x", true])
        );
        assert_eq!(
            item_to_json(&root["t"]["c"]).unwrap(),
            serde_json::json!({"d": "e"})
        );
        let date = item_to_json(&root["t"]["when"]).unwrap_err();
        assert!(date.contains("write it as a string"), "{date}");
        assert_eq!(kind_of(&root["t"]["b"]), "an array");
        assert!(tables_in(&root["a"]).is_none());
    }
}
