//! The HTML report (`--html DIR`): a static site that opens from disk, with no server and
//! no network. Pages use relative links only; the style is inline and there is no script.
//!
//! - `index.html`: the report's sections (text, the MMTests tables as the terminal prints
//!   them, claims with verdicts), then the graphs of each case, kernels side by side on the
//!   same axes;
//! - `<case>-<graph>.html`: one graph of one case, full size, with where its lines come
//!   from;
//! - `graphs/<case>-<graph>.<kernel>.svg`: the graphs ([`super::graphs`]);
//! - `data/<case>.<kernel>.csv`: the time series the graphs were drawn from.
//!
//! [`site`] is a pure function of its input: the same report gives the same bytes.

use super::graphs::{self, Graph};
use super::timeseries::TimeSeries;
use super::DeviceReport;
use crate::reproduce::Verdict;
use std::fmt::Write as _;
use std::path::Path;

/// One kernel's run in a case.
#[derive(Clone, Copy, Debug)]
pub struct KernelRun<'a> {
    /// The kernel label, as the tables name it.
    pub kernel: &'a str,
    pub series: &'a TimeSeries,
    pub devices: &'a [DeviceReport],
    /// Each pause of `balance_dirty_pages`, for the pause-time graph.
    pub pauses: &'a crate::mm::page_writeback::Durations,
}

/// A run of the same thing under each kernel: its graphs are drawn side by side.
#[derive(Clone, Debug)]
pub struct Case<'a> {
    /// Names the case's files: lower case, digits and `-` only.
    pub id: String,
    pub title: String,
    pub runs: Vec<KernelRun<'a>>,
}

/// A part of the index page, before the graphs.
#[derive(Clone, Debug)]
pub enum Section {
    /// A paragraph of text.
    Text(String),
    /// Preformatted text under a heading: the tables as the terminal prints them.
    Table { heading: String, text: String },
    /// Claims with their verdicts, and the closing count.
    Claims {
        verdicts: Vec<Verdict>,
        summary: String,
    },
}

/// The whole report.
#[derive(Clone, Debug)]
pub struct Report<'a> {
    pub title: String,
    pub sections: Vec<Section>,
    pub cases: Vec<Case<'a>>,
}

/// `text` with `&`, `<`, `>` and `"` escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(ch),
        }
    }
    out
}

const STYLE: &str = "\
body{font-family:sans-serif;margin:1.5em auto;max-width:min(96vw,2300px);color:#222}
h1{font-size:1.5em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}
pre{background:#f6f6f6;padding:.8em;overflow-x:auto;font-size:13px;line-height:1.3}
table.claims{border-collapse:collapse}
table.claims td,table.claims th{border:1px solid #ccc;padding:.3em .5em;vertical-align:top;text-align:left}
.holds{color:#06602a;font-weight:bold}.FAILS{color:#b00020;font-weight:bold}.not-judged{color:#666}
.kernels{display:grid;gap:10px}
.kernels img{width:100%;height:auto;border:1px solid #ddd}
figure{margin:1.2em 0}figcaption{font-weight:bold;margin-bottom:.3em}
nav a{margin-right:1em}
";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

/// The file name of `kernel`'s copy of a case's graph.
fn svg_path(case: &str, graph: &str, kernel: &str) -> String {
    format!("graphs/{case}-{graph}.{}.svg", graphs::file_safe(kernel))
}

fn detail_path(case: &str, graph: &str) -> String {
    format!("{case}-{graph}.html")
}

/// One graph of a case under every kernel, on shared axes; kernels without it (a graph
/// only some runs have) get none.
struct Row<'a> {
    id: String,
    per_kernel: Vec<Option<&'a Graph>>,
}

/// The graphs of a case by id in first-seen order, and the ids of those with no data in any
/// kernel.
fn rows<'a>(per_kernel: &'a [Vec<Graph>]) -> (Vec<Row<'a>>, Vec<&'a Graph>) {
    let mut ids: Vec<&str> = Vec::new();
    for g in per_kernel.iter().flatten() {
        if !ids.contains(&g.id.as_str()) {
            ids.push(&g.id);
        }
    }
    let mut drawn = Vec::new();
    let mut empty = Vec::new();
    for id in ids {
        let row: Vec<Option<&Graph>> = per_kernel
            .iter()
            .map(|gs| gs.iter().find(|g| g.id == id))
            .collect();
        if row.iter().flatten().any(|g| g.has_data()) {
            drawn.push(Row {
                id: id.to_string(),
                per_kernel: row,
            });
        } else if let Some(g) = row.iter().flatten().next() {
            empty.push(*g);
        }
    }
    (drawn, empty)
}

fn images(case: &Case, row: &Row, link: bool) -> String {
    let mut out = format!(
        "<div class=\"kernels\" style=\"grid-template-columns:repeat({},minmax(0,1fr))\">\n",
        case.runs.len()
    );
    for (run, g) in case.runs.iter().zip(&row.per_kernel) {
        let Some(g) = g else {
            out.push_str("<p>(not in this run)</p>\n");
            continue;
        };
        let img = format!(
            "<img src=\"{}\" width=\"{}\" height=\"{}\" alt=\"{} ({})\">",
            escape(&svg_path(&case.id, &row.id, run.kernel)),
            graphs::WIDTH,
            graphs::HEIGHT,
            escape(&g.title),
            escape(run.kernel)
        );
        if link {
            let _ = writeln!(
                out,
                "<a href=\"{}\">{img}</a>",
                escape(&detail_path(&case.id, &row.id))
            );
        } else {
            out.push_str(&img);
            out.push('\n');
        }
    }
    out.push_str("</div>\n");
    out
}

fn claims_table(verdicts: &[Verdict], summary: &str) -> String {
    let mut out = String::from(
        "<table class=\"claims\">\n<tr><th>claim</th><th>verdict</th><th>what it says</th>\
         <th>judged on</th></tr>\n",
    );
    for v in verdicts {
        let values: Vec<String> = v
            .values
            .iter()
            .map(|(what, x)| {
                format!(
                    "{} = {}",
                    escape(what),
                    crate::reproduce::verdict_number(*x)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(v.id),
            v.outcome().replace(' ', "-"),
            escape(v.outcome()),
            escape(&v.claim),
            values.join("<br>")
        );
    }
    let _ = writeln!(out, "</table>\n<p><b>{}</b></p>", escape(summary));
    out
}

/// Every file of the site: (path relative to the site's directory, contents), the index
/// first. Paths use `/`.
pub fn site(report: &Report) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut body = format!("<h1>{}</h1>\n", escape(&report.title));
    let mut nav = String::from("<nav>");
    let mut sections = String::new();
    for s in &report.sections {
        match s {
            Section::Text(t) => {
                let _ = writeln!(sections, "<p>{}</p>", escape(t));
            }
            Section::Table { heading, text } => {
                let anchor = graphs::file_safe(&heading.to_lowercase());
                let _ = write!(nav, "<a href=\"#{anchor}\">{}</a>", escape(heading));
                let _ = write!(
                    sections,
                    "<h2 id=\"{anchor}\">{}</h2>\n<pre>{}</pre>\n",
                    escape(heading),
                    escape(text)
                );
            }
            Section::Claims { verdicts, summary } => {
                nav.push_str("<a href=\"#claims\">Claims</a>");
                sections.push_str("<h2 id=\"claims\">Claims</h2>\n");
                sections.push_str(&claims_table(verdicts, summary));
            }
        }
    }
    if !report.cases.is_empty() {
        nav.push_str("<a href=\"#graphs\">Graphs</a>");
    }
    nav.push_str("</nav>\n");
    body.push_str(&nav);
    body.push_str(&sections);
    if !report.cases.is_empty() {
        body.push_str(
            "<h2 id=\"graphs\">Graphs</h2>\n<p>Each row is one graph, kernels side by side on \
             the same axes. Counters are per sample interval; dashed lines are thresholds. \
             Click a graph for its page.</p>\n",
        );
    }
    for case in &report.cases {
        let per_kernel: Vec<Vec<Graph>> = case
            .runs
            .iter()
            .map(|r| {
                let mut g = graphs::graphs(r.series, r.devices);
                g.extend(graphs::pause_graph(r.pauses));
                g
            })
            .collect();
        let (drawn, empty) = rows(&per_kernel);
        let _ = writeln!(body, "<h3 id=\"{}\">{}</h3>", case.id, escape(&case.title));
        let data: Vec<String> = case
            .runs
            .iter()
            .map(|r| {
                let path = format!("data/{}.{}.csv", case.id, graphs::file_safe(r.kernel));
                files.push((path.clone(), r.series.to_csv()));
                format!("<a href=\"{}\">{}</a>", escape(&path), escape(r.kernel))
            })
            .collect();
        let _ = writeln!(body, "<p>Time series (CSV): {}</p>", data.join(", "));
        for (i, row) in drawn.iter().enumerate() {
            let present: Vec<&Graph> = row.per_kernel.iter().flatten().copied().collect();
            let (x, y) = graphs::shared_axes(&present);
            for (run, g) in case.runs.iter().zip(&row.per_kernel) {
                if let Some(g) = g {
                    files.push((
                        svg_path(&case.id, &row.id, run.kernel),
                        graphs::render(g, run.kernel, x.clone(), y.clone()),
                    ));
                }
            }
            let title = &present[0].title;
            let _ = write!(
                body,
                "<figure id=\"{}-{}\">\n<figcaption><a href=\"{}\">{}</a></figcaption>\n{}</figure>\n",
                case.id,
                row.id,
                escape(&detail_path(&case.id, &row.id)),
                escape(title),
                images(case, row, true)
            );
            files.push((
                detail_path(&case.id, &row.id),
                detail(report, case, &drawn, i),
            ));
        }
        if !empty.is_empty() {
            let names: Vec<String> = empty.iter().map(|g| escape(&g.title)).collect();
            let _ = writeln!(
                body,
                "<p>Not drawn, every value 0 in every kernel: {}.</p>",
                names.join("; ")
            );
        }
    }
    files.insert(0, ("index.html".into(), page(&report.title, &body)));
    files
}

/// The page of graph `i` of a case.
fn detail(report: &Report, case: &Case, rows: &[Row], i: usize) -> String {
    let row = &rows[i];
    let g = row
        .per_kernel
        .iter()
        .flatten()
        .next()
        .expect("a drawn graph");
    let link = |j: usize, what: &str| {
        format!(
            "<a href=\"{}\">{what}: {}</a>",
            escape(&detail_path(&case.id, &rows[j].id)),
            escape(
                &rows[j]
                    .per_kernel
                    .iter()
                    .flatten()
                    .next()
                    .expect("drawn")
                    .title
            )
        )
    };
    let mut nav = format!(
        "<nav><a href=\"index.html#{}-{}\">Index</a>",
        case.id, row.id
    );
    if i > 0 {
        nav.push_str(&link(i - 1, "Previous"));
    }
    if i + 1 < rows.len() {
        nav.push_str(&link(i + 1, "Next"));
    }
    nav.push_str("</nav>\n");
    let title = format!("{}: {}", case.title, g.title);
    let body = format!(
        "{nav}<h1>{}</h1>\n<p>{}</p>\n<p>{}</p>\n{}",
        escape(&title),
        escape(&report.title),
        escape(&g.about),
        images(case, row, false)
    );
    page(&title, &body)
}

/// Write the site's files under `dir`, creating it and its folders.
pub fn write(dir: &Path, files: &[(String, String)]) -> std::io::Result<()> {
    for (path, text) in files {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
    }
}
