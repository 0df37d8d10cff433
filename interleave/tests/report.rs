//! The run report of a failing seed: its data agrees with the trace it was drawn from, and a real
//! headless browser (Debian's `chromium`, when installed) loads it and lays out every lane.
#![cfg(not(any(loom, shuttle)))]

mod support;

use std::path::Path;

/// The JSON the page embeds.
fn run_data(page: &str) -> serde_json::Value {
    let data = page
        .split(r#"<script type="application/json" id="run-data">"#)
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .expect("the page embeds its data");
    serde_json::from_str(data).expect("the embedded data is JSON")
}

/// A failing seed's folder (vote-without-up-to-date-check fails seed 1 of the fixed mix: five
/// nodes).
fn failing_folder() -> std::path::PathBuf {
    let out = support::fresh_dir("report");
    let (code, stdout, stderr) = support::interleave(&[
        "chaos",
        "--fixed",
        "--seeds",
        "1",
        "--mutation",
        "vote-without-up-to-date-check",
        "--no-shrink",
        "--out",
        out.to_str().expect("UTF-8 path"),
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    out.join("seed-1")
}

#[test]
fn the_report_shows_what_the_trace_says() {
    let folder = failing_folder();
    let page = std::fs::read_to_string(folder.join("report.html")).expect("report.html");
    let trace = std::fs::read_to_string(folder.join("trace.log")).expect("trace.log");
    let violation = std::fs::read_to_string(folder.join("violation.txt")).expect("violation");
    let data = run_data(&page);
    let lanes = data["lanes"].as_array().expect("lanes");
    assert_eq!(lanes.len(), 5, "one lane per node");
    let spans = |role: &str| {
        lanes
            .iter()
            .flat_map(|lane| lane["roles"].as_array().unwrap())
            .filter(|span| span[2] == role)
            .count()
    };
    let lines = |needle: &str| trace.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(spans("Leader"), lines(" is Leader in t"));
    assert_eq!(spans("Candidate"), lines(" is Candidate in t"));
    let downs: usize = lanes
        .iter()
        .map(|l| l["down"].as_array().unwrap().len())
        .sum();
    assert_eq!(downs, lines("] crash n") - lines("(already down)"));
    let partitions = data["partitions"].as_array().unwrap().len();
    assert_eq!(partitions, lines("] partition ["));
    let marked = data["violation"][1]
        .as_str()
        .expect("the violation is marked");
    assert_eq!(marked, violation.lines().next().unwrap());
    // Well formed: every element the page opens is closed.
    for tag in ["svg", "text", "title", "script", "body", "html"] {
        let opened = page.matches(&format!("<{tag}")).count();
        let closed = page.matches(&format!("</{tag}>")).count();
        assert_eq!(opened, closed, "<{tag}>");
    }
    let _ = std::fs::remove_dir_all(folder.parent().unwrap());
}

#[test]
fn a_headless_browser_loads_the_report_and_lays_out_every_lane() {
    let browser = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|path| Path::new(path).exists());
    let here = browser
        .map(|_| ())
        .ok_or_else(|| "no headless chromium (Debian: apt-get install chromium)".to_string());
    let test = "a_headless_browser_loads_the_report_and_lays_out_every_lane";
    let (true, Some(browser)) = (realtools::require(test, here), browser) else {
        return;
    };
    let folder = failing_folder();
    let profile = support::fresh_dir("chromium-profile");
    let page = format!("file://{}", folder.join("report.html").display());
    // The DOM after load, as the browser built it: parsed, laid out, nothing failed to load.
    let output = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!("--user-data-dir={}", profile.display()),
            "--dump-dom",
            &page,
        ])
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        dom.contains("<svg") && dom.contains("violation at "),
        "{dom}"
    );
    for node in ["n0", "n1", "n2", "n3", "n4"] {
        assert!(
            dom.contains(&format!(r#"class="label">{node}</text>"#)),
            "{node}"
        );
    }
    let _ = std::fs::remove_dir_all(&profile);
    let _ = std::fs::remove_dir_all(folder.parent().unwrap());
}
