//! Finished points on disk: one JSON file per point key, so a sweep resumes.
//!
//! A file is written whole under a temporary name and renamed into place, so a sweep
//! killed at any moment leaves only complete results; a file that does not read back (a
//! disk that filled up) is treated as absent and its point runs again.

use super::{Cell, Record};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The directory of a sweep's finished points.
#[derive(Clone, Debug)]
pub struct Store {
    pub dir: PathBuf,
}

impl Store {
    /// Open (making it if needed) the directory.
    pub fn open(dir: &Path) -> std::io::Result<Store> {
        std::fs::create_dir_all(dir)?;
        Ok(Store {
            dir: dir.to_path_buf(),
        })
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The record kept under `key`, if there is a whole one.
    pub fn get(&self, key: &str) -> Option<Record> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        decode(&text)
    }

    /// Keep `record` under `key`.
    pub fn put(&self, key: &str, record: &Record) -> std::io::Result<()> {
        let tmp = self.dir.join(format!(".{key}.tmp"));
        std::fs::write(&tmp, encode(record))?;
        std::fs::rename(&tmp, self.path(key))
    }
}

/// `{"error": null | "...", "columns": [[name, value], ...]}`: pairs keep the column order.
pub fn encode(r: &Record) -> String {
    let columns: Vec<Value> = r
        .columns
        .iter()
        .map(|(n, c)| json!([n, c.to_json()]))
        .collect();
    json!({ "error": r.error, "columns": columns }).to_string()
}

/// The record `encode` wrote; `None` for anything else.
pub fn decode(text: &str) -> Option<Record> {
    let v: Value = serde_json::from_str(text).ok()?;
    let error = match v.get("error")? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        _ => return None,
    };
    let columns = v
        .get("columns")?
        .as_array()?
        .iter()
        .map(|pair| {
            let name = pair.get(0)?.as_str()?.to_string();
            let cell = Cell::from_json(pair.get(1)?)?;
            Some((name, cell))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Record { error, columns })
}
