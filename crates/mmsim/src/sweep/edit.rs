//! Setting one scenario key, named by its TOML path, in a scenario document.
//!
//! A path is a list of TOML keys: `["vm", "swappiness"]`. Tables that are missing on the
//! way are made (`[vm]` in a scenario that had none). In an array of tables (`[[workload]]`,
//! `[[device]]`, `[[cgroup]]`) the next key picks an element, by its number from 0 or by its
//! name: a workload's `name`, or its default name (its type, then `dd-2`, `dd-3`...).

use toml_edit::{DocumentMut, Item, Table, TableLike, Value};

/// Why a path does not lead to a key.
#[derive(Clone, Debug, PartialEq)]
pub struct EditError {
    pub message: String,
}

/// Set `path` to `value` in `doc`.
pub fn set_path(doc: &mut DocumentMut, path: &[String], value: Value) -> Result<(), EditError> {
    let (last, parents) = path.split_last().ok_or_else(|| EditError {
        message: "an empty path".into(),
    })?;
    let mut table: &mut dyn TableLike = doc.as_table_mut();
    let mut walked = String::new();
    let mut i = 0;
    while i < parents.len() {
        let key = &parents[i];
        walked = join(&walked, key);
        if table.get(key).is_none() {
            let mut t = Table::new();
            t.set_implicit(true);
            table.insert(key, Item::Table(t));
        }
        let item = table.get_mut(key).expect("present or just made");
        table = match item {
            Item::ArrayOfTables(array) => {
                let Some(sel) = path.get(i + 1).filter(|_| i + 1 < parents.len()) else {
                    return Err(EditError {
                        message: format!(
                            "'{walked}' is an array of tables: name an element (its number \
                             from 0 or its name) before the key, as in {walked}.0.{last}"
                        ),
                    });
                };
                let names = element_names(array);
                let at = sel
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n < array.len())
                    .or_else(|| names.iter().position(|n| n == sel))
                    .ok_or_else(|| EditError {
                        message: format!(
                            "'{walked}' has no element '{sel}': its elements are {} (or their \
                             numbers 0 to {})",
                            names
                                .iter()
                                .map(|n| format!("'{n}'"))
                                .collect::<Vec<_>>()
                                .join(", "),
                            array.len().saturating_sub(1)
                        ),
                    })?;
                walked = join(&walked, sel);
                i += 1;
                array.get_mut(at).expect("an index below the length")
            }
            other => match other.as_table_like_mut() {
                Some(t) => t,
                None => {
                    return Err(EditError {
                        message: format!("'{walked}' is a value, not a table"),
                    })
                }
            },
        };
        i += 1;
    }
    if let Some(Item::Table(_) | Item::ArrayOfTables(_)) = table.get(last) {
        return Err(EditError {
            message: format!("'{}' is a table, not a value", join(&walked, last)),
        });
    }
    // Keep a value's place and its comment when it is replaced.
    match table.get_mut(last) {
        Some(Item::Value(old)) => {
            let decor = old.decor().clone();
            *old = value;
            *old.decor_mut() = decor;
        }
        _ => {
            table.insert(last, Item::Value(value));
        }
    }
    Ok(())
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}.{b}")
    }
}

/// What each element of an array of tables is called: its `name`, else (workloads) its
/// type numbered as the scenario parser numbers repeats, else its number.
fn element_names(array: &toml_edit::ArrayOfTables) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut names = Vec::new();
    for (i, t) in array.iter().enumerate() {
        let name = match (
            t.get("name").and_then(Item::as_str),
            t.get("type").and_then(Item::as_str),
        ) {
            (Some(n), _) => n.to_string(),
            (None, Some(ty)) => {
                let n = seen.iter().filter(|s| *s == ty).count();
                seen.push(ty.to_string());
                if n == 0 {
                    ty.to_string()
                } else {
                    format!("{ty}-{}", n + 1)
                }
            }
            (None, None) => i.to_string(),
        };
        names.push(name);
    }
    names
}
