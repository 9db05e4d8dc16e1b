//! `MMSIM_MODEL_HASH`: SHA-256 over the model's source (every file under `src/`, by path
//! in sorted order), so that a sweep's stored points are keyed by the model that ran them,
//! not only by the version number (`sweep::point_key`).

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).expect("src/ is readable");
    for e in entries {
        let path = e.expect("a directory entry").path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    println!("cargo:rerun-if-changed=src");
    let mut paths = Vec::new();
    files(&src, &mut paths);
    paths.sort();
    let mut h = Sha256::new();
    for p in &paths {
        let rel = p.strip_prefix(root).expect("under the crate");
        // Separators as '/', so the hash is the same on every host.
        let name: Vec<_> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect();
        h.update(name.join("/").as_bytes());
        h.update(b"\0");
        h.update(std::fs::read(p).expect("a source file is readable"));
        h.update(b"\0");
    }
    let hex: String = h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=MMSIM_MODEL_HASH={hex}");
}
