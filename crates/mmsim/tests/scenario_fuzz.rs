//! Fuzzing the scenario loader, and the kept fuzz corpus in `tests/scenario_corpus/`.
//!
//! Corpus files named `ok-*.toml` must load; `bad-*.toml` must be rejected. A bad file may
//! start with `# expect-key: <key path>` to pin the key the error must name.
//!
//! The properties: `load_str` never panics, every error has a non-empty message, and every
//! error except "no [machine] table" (which has nowhere in the file to point) has a line and
//! column inside the text.

use std::path::{Path, PathBuf};

use mmsim::scenario::{load, load_str, Scenario, ScenarioError};
use proptest::prelude::*;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenario_corpus")
}

fn corpus_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("the corpus folder exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// The texts of the valid corpus files: the seeds for mutation.
fn valid_seeds() -> Vec<String> {
    corpus_files()
        .into_iter()
        .filter(|p| file_name(p).starts_with("ok-"))
        .map(|p| std::fs::read_to_string(&p).expect("ok-* files are UTF-8"))
        .collect()
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The properties every load result must have.
#[allow(clippy::result_large_err)]
fn check(text: &str) -> Result<(), TestCaseError> {
    let first = load_str(text, "fuzz.toml", "fuzz");
    let again = load_str(text, "fuzz.toml", "fuzz");
    prop_assert_eq!(&first, &again, "loading is deterministic");
    if let Err(e) = first {
        check_error(text, &e)?;
    }
    Ok(())
}

fn check_error(text: &str, e: &ScenarioError) -> Result<(), TestCaseError> {
    prop_assert!(!e.message.trim().is_empty(), "empty message: {:?}", e);
    prop_assert_eq!(&e.file, "fuzz.toml");
    prop_assert!(!e.to_string().is_empty());
    let no_machine = e.key == "machine" && e.message.contains("missing required table");
    if no_machine {
        return Ok(());
    }
    let (Some(line), Some(col)) = (e.line, e.column) else {
        return Err(TestCaseError::fail(format!(
            "error without a position: {e:?}"
        )));
    };
    let lines = text.split('\n').count();
    prop_assert!(
        line >= 1 && line <= lines,
        "line {} of {}: {:?}",
        line,
        lines,
        e
    );
    prop_assert!(col >= 1, "column {}: {:?}", col, e);
    if let Some(s) = &e.suggestion {
        prop_assert!(!s.is_empty());
    }
    Ok(())
}

/// Values to put where a valid one was.
const REPLACEMENTS: &[&str] = &[
    "-1",
    "0",
    "1",
    "-9223372036854775808",
    "9223372036854775807",
    "1.5",
    "-0.0",
    "nan",
    "inf",
    "true",
    "\"\"",
    "\" \"",
    "\"4Q\"",
    "\"-4G\"",
    "\"1.5\"",
    "\"99999999999999T\"",
    "\"4096\"",
    "\"64M\"",
    "\"5T\"",
    "\"0%\"",
    "\"101%\"",
    "\"-5%\"",
    "\"99999999999999999999999%\"",
    "\"%\"",
    "\"200\"",
    "\"1e3s\"",
    "\"5 days\"",
    "\"0s\"",
    "\"-1ms\"",
    "\"1.5ns\"",
    "\"999999999999h\"",
    "\"hold\"",
    "\"retouch\"",
    "\"retuch\"",
    "\"memcachetest\"",
    "\"mem_eater\"",
    "\"memcache\"",
    "\"mmap\"",
    "\"fsync\"",
    "\"write\"",
    "[]",
    "[1, 2, 3]",
    "[1, -2, 3]",
    "[[1]]",
    "{}",
    "{ a = 1 }",
    "1979-05-27T07:32:00Z",
    "07:32:00",
];

/// A line-oriented mutation of a valid scenario.
#[derive(Clone, Debug)]
enum Mutation {
    /// Remove line `n` (mod the line count).
    DeleteLine(usize),
    /// Replace the value on line `n` with `REPLACEMENTS[r]` (or `text` if `r` is past the end).
    ReplaceValue(usize, usize, String),
    /// Xor byte `n` (mod the length) with `mask`.
    FlipByte(usize, u8),
    /// Duplicate line `n`.
    DuplicateLine(usize),
    /// Insert `text` at byte `n` (at a char boundary).
    Insert(usize, String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        (any::<usize>(), 0..REPLACEMENTS.len() + 4, "[ -~]{0,12}")
            .prop_map(|(n, r, t)| Mutation::ReplaceValue(n, r, t)),
        (any::<usize>(), 1..=255u8).prop_map(|(n, m)| Mutation::FlipByte(n, m)),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (
            any::<usize>(),
            prop_oneof![
                Just("[".to_string()),
                Just("]]".to_string()),
                Just("\"".to_string()),
                Just("\n[[workload]]\n".to_string()),
                Just("\n[swap]\n".to_string()),
                Just("=".to_string()),
                Just("é".to_string()),
                "[ -~\n]{0,8}",
            ]
        )
            .prop_map(|(n, t)| Mutation::Insert(n, t)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    match m {
        Mutation::DeleteLine(n) => {
            if !lines.is_empty() {
                let i = n % lines.len();
                lines.remove(i);
            }
            lines.join("\n")
        }
        Mutation::DuplicateLine(n) => {
            if !lines.is_empty() {
                let i = n % lines.len();
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            lines.join("\n")
        }
        Mutation::ReplaceValue(n, r, t) => {
            let with_eq: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i].contains('='))
                .collect();
            if !with_eq.is_empty() {
                let i = with_eq[n % with_eq.len()];
                let key = lines[i].split('=').next().unwrap_or("").to_owned();
                let value = REPLACEMENTS.get(*r).copied().unwrap_or(t.as_str());
                lines[i] = format!("{key}= {value}");
            }
            lines.join("\n")
        }
        Mutation::FlipByte(n, mask) => {
            let mut bytes = text.as_bytes().to_vec();
            if !bytes.is_empty() {
                let i = n % bytes.len();
                bytes[i] ^= mask;
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
        Mutation::Insert(n, t) => {
            let mut s = text.to_owned();
            let mut i = if s.is_empty() { 0 } else { n % (s.len() + 1) };
            while !s.is_char_boundary(i) {
                i -= 1;
            }
            s.insert_str(i, t);
            s
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_strings_never_panic(s in any::<String>()) {
        check(&s)?;
    }

    #[test]
    fn toml_looking_strings_never_panic(
        s in "([\\[\\]a-z_.=\"0-9 %\n#{},-]|machine|ram|workload|type|mem_eater|swap|size|\"4G\"){0,40}"
    ) {
        check(&s)?;
    }

    #[test]
    fn mutated_valid_scenarios_never_panic(
        seed in any::<prop::sample::Index>(),
        muts in prop::collection::vec(mutation(), 1..4),
    ) {
        let seeds = valid_seeds();
        prop_assume!(!seeds.is_empty());
        let mut text = seed.get(&seeds).clone();
        for m in &muts {
            text = apply(&text, m);
        }
        check(&text)?;
    }

    /// Sweep files over a valid base: loading never panics, and an error that has a
    /// position points inside the sweep text.
    #[test]
    fn sweep_looking_strings_never_panic(
        headed in any::<bool>(),
        tail in "(\\[sweep\\]\n|\\[axes\\]\n|\\[\\[point\\]\\]\n|scenario = \"base.toml\"\n|kernels = |seeds = |\
               vm\\.|swappiness|machine\\.|ram|workload\\.|0\\.|mem_eater\\.|size|kernel\\.|\
               switches\\.|preset|run\\.|seed| = |\\[|\\]|, |\"4G\"|\"1\\.\\.3\"|\"3\\.9\"|60|-1|true|\n|\\{|\\}|\"){0,40}"
    ) {
        // Half of them start as a valid sweep, so the axes' checks are reached.
        let s = if headed {
            format!("[sweep]\nscenario = \"base.toml\"\n[axes]\n{tail}")
        } else {
            tail
        };
        let dir = sweep_dir();
        let first = mmsim::scenario::load_sweep_str(&s, "fuzz.toml", &dir);
        let again = mmsim::scenario::load_sweep_str(&s, "fuzz.toml", &dir);
        prop_assert_eq!(first.is_ok(), again.is_ok());
        match first {
            Ok(sw) => {
                prop_assert!(!sw.points.is_empty());
                for p in &sw.points {
                    prop_assert_eq!(p.axes.len(), sw.axes.len());
                }
            }
            Err(e) => {
                prop_assert!(!e.message.trim().is_empty(), "empty message: {:?}", e);
                prop_assert_eq!(&e.file, "fuzz.toml");
                if let Some(line) = e.line {
                    prop_assert!(line >= 1 && line <= s.split('\n').count(), "{:?}", e);
                }
            }
        }
    }
}

/// A directory holding `base.toml`, a valid scenario, for the sweep fuzz.
fn sweep_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mmsim-sweep-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    std::fs::write(
        dir.join("base.toml"),
        "[machine]\nram = \"256M\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"10M\"\n",
    )
    .expect("writable");
    dir
}

#[test]
fn mutation_seeds_are_all_valid() {
    let seeds = valid_seeds();
    assert!(seeds.len() >= 5, "expected several ok-* corpus files");
    for s in &seeds {
        let r: Result<Scenario, ScenarioError> = load_str(s, "seed.toml", "seed");
        assert!(r.is_ok(), "seed does not load: {:?}", r.err());
    }
}

#[test]
fn kept_corpus_loads_as_named() {
    let files = corpus_files();
    assert!(
        files.len() >= 10 && files.len() < 60,
        "corpus size {}",
        files.len()
    );
    for path in files {
        let name = file_name(&path);
        let result = load(&path);
        if name.starts_with("ok-") {
            match result {
                Ok(s) => assert_eq!(
                    Some(s.name.as_str()),
                    path.file_stem().and_then(|s| s.to_str())
                ),
                Err(e) => panic!("{name} should load: {e}"),
            }
        } else if name.starts_with("bad-") {
            let Err(e) = result else {
                panic!("{name} should be rejected");
            };
            assert!(!e.message.is_empty(), "{name}: empty message");
            let bytes = std::fs::read(&path).expect("readable");
            let first = String::from_utf8_lossy(&bytes);
            if let Some(rest) = first
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("# expect-key:"))
            {
                assert_eq!(e.key, rest.trim(), "{name}: {e}");
            }
            if let Ok(text) = std::str::from_utf8(&bytes) {
                let e2 = load_str(text, "fuzz.toml", "fuzz").expect_err("rejected as a string too");
                check_error(text, &e2).unwrap_or_else(|f| panic!("{name}: {f}"));
            }
        } else {
            panic!("corpus file {name} must be named ok-*.toml or bad-*.toml");
        }
    }
}
