//! The HTML report in a real browser: headless Chromium opens the site of `mmsim run
//! --html` from file://, and the test fails on an image that did not load, a failed
//! resource or any console error. Screenshots of the index and one graph page go to
//! `target/tmp/browser/` for a person to look at.
//!
//! Chromium is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
//! JSON messages ended by NUL on file descriptors 3 and 4), so no port and no extra crate
//! is needed. The browser is `$MMSIM_CHROMIUM`, else `chromium` or `chromium-browser` on
//! the `PATH`. Without one the test is skipped with a message, except under CI (`CI` set),
//! where it fails: `.ci/run` installs Chromium first.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Longest wait for one answer or event.
const TIMEOUT: Duration = Duration::from_secs(60);

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MMSIM_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

/// A copy of `fd` numbered 10 or more, so that moving it to 3 or 4 in the child cannot
/// overwrite the other one.
fn high_fd(fd: &impl AsRawFd) -> OwnedFd {
    let n = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
    assert!(n >= 10, "fcntl: {}", std::io::Error::last_os_error());
    unsafe { OwnedFd::from_raw_fd(n) }
}

struct Browser {
    child: Child,
    to: std::io::PipeWriter,
    from: Receiver<Value>,
    next_id: u64,
    /// Events received while waiting for answers, oldest first.
    events: Vec<Value>,
}

impl Browser {
    fn launch(exe: &Path, profile: &Path) -> Browser {
        let (cmd_read, cmd_write) = std::io::pipe().unwrap();
        let (ev_read, ev_write) = std::io::pipe().unwrap();
        let (r, w) = (high_fd(&cmd_read), high_fd(&ev_write));
        let (r_fd, w_fd): (RawFd, RawFd) = (r.as_raw_fd(), w.as_raw_fd());
        let mut cmd = Command::new(exe);
        // The flags that keep it off the network and quiet (a closed network refuses
        // Chromium's background connections); root needs --no-sandbox.
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--remote-debugging-pipe",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        // SAFETY: dup2 is async-signal-safe; the child only renumbers two descriptors.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(r_fd, 3) < 0 || libc::dup2(w_fd, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("starting chromium");
        drop((r, w, cmd_read, ev_write));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(ev_read);
            let mut buf = Vec::new();
            while reader.read_until(0, &mut buf).unwrap_or(0) > 0 {
                buf.pop_if(|b| *b == 0);
                if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
                buf.clear();
            }
        });
        Browser {
            child,
            to: cmd_write,
            from: rx,
            next_id: 0,
            events: Vec::new(),
        }
    }

    fn recv(&mut self, what: &str, deadline: Instant) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.from.recv_timeout(left) {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => panic!("chromium: no {what} in {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("chromium exited waiting for {what}"),
        }
    }

    /// Send a command (to a page's session, if given) and wait for its answer.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).expect("writing to chromium");
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let v = self.recv(method, deadline);
            if v["id"] == json!(id) {
                if let Some(e) = v.get("error") {
                    panic!("chromium: {method}: {e}");
                }
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    /// Wait for the event `method`, keeping the others.
    fn wait_for(&mut self, method: &str) {
        if let Some(i) = self.events.iter().position(|e| e["method"] == method) {
            self.events.remove(i);
            return;
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let v = self.recv(method, deadline);
            if v["method"] == method {
                return;
            }
            self.events.push(v);
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What went wrong in the events since the page was opened: console errors, uncaught
/// exceptions, failed loads.
fn problems(events: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for e in events {
        let p = &e["params"];
        match e["method"].as_str().unwrap_or("") {
            "Runtime.exceptionThrown" => out.push(format!("exception: {}", p["exceptionDetails"])),
            "Runtime.consoleAPICalled"
                if matches!(p["type"].as_str(), Some("error" | "assert")) =>
            {
                out.push(format!("console.{}: {}", p["type"], p["args"]))
            }
            "Log.entryAdded" if p["entry"]["level"] == "error" => out.push(format!(
                "console error: {} ({})",
                p["entry"]["text"], p["entry"]["url"]
            )),
            "Network.loadingFailed" => out.push(format!("failed to load: {p}")),
            _ => {}
        }
    }
    out
}

/// Standard base64, as CDP sends screenshots.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &d)| n | (d as u32) << (18 - 6 * i));
        out.extend(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

/// Open `url` in a fresh tab, wait for it to load, screenshot the whole page to `shot`,
/// and return what went wrong (nothing for a good page) and how many images it has.
fn check_page(b: &mut Browser, url: &str, shot: &Path) -> (Vec<String>, u64) {
    let target = b.call(None, "Target.createTarget", json!({"url": "about:blank"}));
    let session = b.call(
        None,
        "Target.attachToTarget",
        json!({"targetId": target["targetId"], "flatten": true}),
    )["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let s = Some(session.as_str());
    for domain in ["Page", "Runtime", "Log", "Network"] {
        b.call(s, &format!("{domain}.enable"), json!({}));
    }
    b.call(
        s,
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
    );
    b.events.clear();
    b.call(s, "Page.navigate", json!({"url": url}));
    b.wait_for("Page.loadEventFired");
    let check = b.call(
        s,
        "Runtime.evaluate",
        json!({
            "expression": "JSON.stringify({images: document.images.length, \
                 broken: Array.from(document.images).filter(i => !i.complete || \
                 i.naturalWidth === 0).map(i => i.getAttribute('src'))})",
            "returnByValue": true
        }),
    );
    let found: Value = serde_json::from_str(check["result"]["value"].as_str().unwrap()).unwrap();
    let mut bad: Vec<String> = found["broken"]
        .as_array()
        .unwrap()
        .iter()
        .map(|src| format!("image did not load: {src}"))
        .collect();
    let size = b.call(s, "Page.getLayoutMetrics", json!({}))["cssContentSize"].clone();
    let png = b.call(
        s,
        "Page.captureScreenshot",
        json!({"format": "png", "captureBeyondViewport": true, "clip": {
            "x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}}),
    );
    std::fs::write(shot, base64_decode(png["data"].as_str().unwrap())).unwrap();
    // Events that came with the answers above belong to this page too.
    bad.extend(problems(&b.events));
    b.call(
        None,
        "Target.closeTarget",
        json!({"targetId": target["targetId"]}),
    );
    (bad, found["images"].as_u64().unwrap())
}

#[test]
fn the_html_report_loads_in_chromium_with_every_image_and_no_console_error() {
    let Some(exe) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs chromium for the browser test: .ci/run installs it"
        );
        eprintln!(
            "skipping the browser test: no chromium on PATH (apt-get install chromium, or \
             set MMSIM_CHROMIUM to a Chromium binary)"
        );
        return;
    };
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let site = out.join("site");
    let run = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(["run", "examples/parallelio-step.toml", "--kernel", "3.9"])
        .args(["--kernel", "lessdisrupt-v7r10", "--html"])
        .arg(&site)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // A page with a missing image, to show the check catches one.
    std::fs::write(
        site.join("broken.html"),
        "<!DOCTYPE html><title>broken</title><img src=\"graphs/none.svg\">",
    )
    .unwrap();
    let url = |page: &str| format!("file://{}", site.join(page).display());

    let mut b = Browser::launch(&exe, &out.join("profile"));
    let (bad, images) = check_page(&mut b, &url("index.html"), &out.join("index.png"));
    assert!(bad.is_empty(), "index.html: {bad:#?}");
    assert!(images >= 20, "index.html shows {images} graphs");
    let (bad, images) = check_page(&mut b, &url("run-dirty.html"), &out.join("dirty.png"));
    assert!(bad.is_empty(), "run-dirty.html: {bad:#?}");
    assert_eq!(images, 2, "one graph per kernel");
    let (bad, _) = check_page(&mut b, &url("broken.html"), &out.join("broken.png"));
    assert!(
        bad.iter().any(|p| p.contains("graphs/none.svg")),
        "a missing image goes unnoticed: {bad:#?}"
    );
    eprintln!("screenshots in {}", out.display());
}

#[test]
fn base64_decodes_padded_and_unpadded_text() {
    assert_eq!(base64_decode("aGVsbG8="), b"hello");
    assert_eq!(base64_decode("aGk"), b"hi");
    assert_eq!(base64_decode("YWJj"), b"abc");
}
