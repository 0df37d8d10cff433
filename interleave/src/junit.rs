//! JUnit XML reports (`--junit FILE`), the format CI dashboards read: one test case per seed for
//! `chaos`, one per variant and detector for `mutants`. Written with `quick-junit` (nextest's
//! own serializer), whole or not at all.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One test case of a report.
#[derive(Clone, Debug)]
pub struct Case {
    /// The case's name (`seed 17`, `forget-vote / chaos (deterministic)`).
    pub name: String,
    /// What it belongs to (the workload, the variant).
    pub classname: String,
    /// `None` when it passed; else the one-line message and the full text.
    pub failure: Option<(String, String)>,
    /// How long it ran, if known.
    pub time: Option<Duration>,
}

/// Why a report cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Its folder does not exist.
    #[error("cannot write {what} {}: {} is not a folder", .path.display(), .folder.display())]
    NoFolder {
        /// Which report.
        what: String,
        /// Its path.
        path: PathBuf,
        /// The folder that is missing.
        folder: PathBuf,
    },
    /// Its path is a folder.
    #[error("{what} {} is a folder", .path.display())]
    IsAFolder {
        /// Which report.
        what: String,
        /// Its path.
        path: PathBuf,
    },
    /// The XML cannot be rendered.
    #[error("cannot render the JUnit report: {0}")]
    Render(quick_junit::SerializeError),
    /// The file cannot be written, or replaced.
    #[error(transparent)]
    Write(#[from] userfiles::WriteError),
}

/// Refuses a report path whose folder does not exist, before a run that would end unable to
/// write it.
pub fn check_path(path: &Path) -> Result<(), ReportError> {
    check_report_path(path, "the JUnit report")
}

/// [`check_path`] for any report a run writes at its end, named `what` in the error.
pub fn check_report_path(path: &Path, what: &str) -> Result<(), ReportError> {
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        return Err(ReportError::NoFolder {
            what: what.to_string(),
            path: path.to_path_buf(),
            folder: folder.to_path_buf(),
        });
    }
    if path.is_dir() {
        return Err(ReportError::IsAFolder {
            what: what.to_string(),
            path: path.to_path_buf(),
        });
    }
    Ok(userfiles::check_replaceable(path)?)
}

/// Writes a report holding one suite named `suite` with `cases` to `path`.
pub fn write(path: &Path, suite: &str, cases: &[Case], time: Duration) -> Result<(), ReportError> {
    let mut report = Report::new("interleave");
    report.set_time(time);
    let mut test_suite = TestSuite::new(suite);
    test_suite.set_time(time);
    for case in cases {
        let status = match &case.failure {
            None => TestCaseStatus::success(),
            Some((message, text)) => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(message.as_str());
                status.set_description(text.as_str());
                status
            }
        };
        let mut test_case = TestCase::new(case.name.as_str(), status);
        test_case.set_classname(case.classname.as_str());
        if let Some(time) = case.time {
            test_case.set_time(time);
        }
        test_suite.add_test_case(test_case);
    }
    report.add_test_suite(test_suite);
    let xml = report.to_string().map_err(ReportError::Render)?;
    Ok(userfiles::write_whole(path, xml)?)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_report_counts_its_failures_and_escapes_what_it_quotes() {
        let dir = std::env::temp_dir().join(format!("interleave-junit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("report.xml");
        let cases = [
            Case {
                name: "seed 1".into(),
                classname: "chaos raft".into(),
                failure: None,
                time: Some(Duration::from_millis(1500)),
            },
            Case {
                name: "seed 2".into(),
                classname: "chaos raft".into(),
                failure: Some(("n1 <and> n2 lead t3".into(), "replay: x & y".into())),
                time: None,
            },
        ];
        write(&file, "chaos", &cases, Duration::from_secs(2)).unwrap();
        let xml = std::fs::read_to_string(&file).unwrap();
        assert!(xml.contains(r#"tests="2" failures="1""#), "{xml}");
        assert!(xml.contains("n1 &lt;and&gt; n2 lead t3"), "{xml}");
        assert!(xml.contains("replay: x &amp; y"), "{xml}");
        assert!(!dir.join("report.xml.partial").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
