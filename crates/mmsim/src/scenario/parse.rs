//! Stage one of scenario loading: the TOML as written, checked key by key.

use super::{Scenario, ScenarioError};

/// Load and validate a scenario file.
pub fn load(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: path.display().to_string(),
        line: None,
        column: None,
        key: String::new(),
        message: format!("cannot read the file: {e}"),
        suggestion: None,
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    load_str(&text, &path.display().to_string(), &stem)
}

/// Parse and validate scenario text; `file` is used in error messages, `name` is the scenario name.
pub fn load_str(_text: &str, _file: &str, _name: &str) -> Result<Scenario, ScenarioError> {
    todo!("scenario parser")
}
