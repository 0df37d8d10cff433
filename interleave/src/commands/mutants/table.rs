//! The kill matrix as a markdown table, with a summary and what failed.

use super::{cell_text, Matrix, Row};
use sim::mutants::{Cell, Column};

fn plural(count: usize, word: &str) -> String {
    format!("{count} {word}{}", if count == 1 { "" } else { "s" })
}

/// The table, the summary line, and a line for each survivor, weakened detector and failure of
/// the correct build.
pub fn render(matrix: &Matrix) -> String {
    let mut out = String::from("| variant | the real bug |");
    let mut rule = String::from("| --- | --- |");
    for column in Column::ALL {
        out.push_str(&format!(" {} |", column.title()));
        rule.push_str(" --- |");
    }
    out.push('\n');
    out.push_str(&rule);
    out.push('\n');
    for row in &matrix.rows {
        out.push_str(&variant_row(row));
    }
    if !matrix.correct.is_empty() {
        out.push_str(&correct_build_row(matrix));
    }
    out.push_str(&summary(matrix));
    out
}

/// A variant's row: its cells, column by column.
fn variant_row(row: &Row) -> String {
    let mut out = format!(
        "| `{}` | {} |",
        row.variant.broken.name(),
        row.variant.models
    );
    for column in Column::ALL {
        let texts: Vec<String> = row
            .cells
            .iter()
            .filter(|(detector, _)| detector.column() == column)
            .map(|(detector, cell)| cell_text(detector, cell))
            .collect();
        let text = if texts.is_empty() {
            "-".to_string()
        } else {
            texts.join(", ")
        };
        out.push_str(&format!(" {text} |"));
    }
    out.push('\n');
    out
}

/// The correct build's row: per column, its failures out of its detectors.
fn correct_build_row(matrix: &Matrix) -> String {
    let mut out = String::from("| correct build | the same detectors |");
    for column in Column::ALL {
        let cells: Vec<&Cell> = matrix
            .correct
            .iter()
            .filter(|correct| correct.column == column)
            .map(|correct| &correct.cell)
            .collect();
        if cells.is_empty() {
            out.push_str(" - |");
            continue;
        }
        let failed = cells
            .iter()
            .filter(|cell| !matches!(cell, Cell::Survived { .. }))
            .count();
        out.push_str(&format!(
            " {} ({}) |",
            plural(failed, "failure"),
            plural(cells.len(), "detector")
        ));
    }
    out.push('\n');
    out
}

/// The summary line, then a line for each survivor, weakened detector, variant not run and
/// failure of the correct build.
fn summary(matrix: &Matrix) -> String {
    let survivors = matrix.survivors();
    let correct_build = if matrix.correct_skipped {
        "skipped".to_string()
    } else {
        format!("{} failures", matrix.correct_failures().len())
    };
    let mut out = format!(
        "\n{}, {} survived, correct build: {correct_build}; {:.0} s\n",
        plural(matrix.rows.len(), "variant"),
        survivors.len(),
        matrix.wall.as_secs_f64()
    );
    for survivor in &survivors {
        out.push_str(&format!("SURVIVED: {survivor} (a gap in the suite)\n"));
    }
    for weakened in matrix.weakened() {
        out.push_str(&format!(
            "WEAKER: {weakened} must kill its variant and did not\n"
        ));
    }
    let not_run = matrix.not_run();
    if !not_run.is_empty() {
        out.push_str(&format!(
            "not run (their detectors were skipped): {}\n",
            not_run.join(", ")
        ));
    }
    for failure in matrix.correct_failures() {
        out.push_str(&format!("CORRECT BUILD FAILED: {failure}\n"));
    }
    out
}
