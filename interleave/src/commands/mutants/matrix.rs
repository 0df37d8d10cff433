//! The kill matrix as data: a row per variant, the correct build's detectors, and the judgement
//! (survivors, weakened detectors, failures of the correct build), as text cells and as JUnit
//! cases.

use sim::mutants::{Cell, Column, Detector, Variant};

/// One variant's row: each detector that ran and what it did.
pub struct Row {
    /// The variant.
    pub variant: Variant,
    /// Each detector that ran, with its cell.
    pub cells: Vec<(Detector, Cell)>,
}

/// One detector of the correct build's row.
pub struct CorrectCell {
    /// The detector's column.
    pub column: Column,
    /// Its name in the row.
    pub key: String,
    /// What it did (anything but a survival is a failure).
    pub cell: Cell,
}

/// The kill matrix: every variant against its detectors, and the correct build.
pub struct Matrix {
    /// One row per variant.
    pub rows: Vec<Row>,
    /// The correct build's detectors (empty when skipped).
    pub correct: Vec<CorrectCell>,
    /// Whether the correct build was skipped.
    pub correct_skipped: bool,
    /// Wall time of the whole matrix.
    pub wall: std::time::Duration,
}

impl Matrix {
    /// Variants that some detector ran on and none killed: gaps in the suite.
    pub fn survivors(&self) -> Vec<&str> {
        self.rows
            .iter()
            .filter(|row| !row.cells.is_empty() && !row.cells.iter().any(|(_, cell)| cell.killed()))
            .map(|row| row.variant.broken.name())
            .collect()
    }

    /// Detectors the catalogue says must kill their variant that did not, or that killed it
    /// with a failure that is not the variant's (its signature): a detector grown weaker, even
    /// if another one still kills the variant. (Loom and shuttle tests check their own reason.)
    pub fn weakened(&self) -> Vec<String> {
        let mut weakened = Vec::new();
        for row in &self.rows {
            for (detector, cell) in &row.cells {
                let name = format!(
                    "{} ({})",
                    row.variant.broken.name(),
                    detector.column().title()
                );
                match cell {
                    Cell::Killed { how, .. }
                        if !matches!(detector.column(), Column::Loom | Column::Shuttle)
                            && !row.variant.recognises(how) =>
                    {
                        weakened.push(format!("{name}: killed by a different failure: {how}"))
                    }
                    Cell::Killed { .. } => {}
                    _ if detector.must_kill() => weakened.push(name),
                    _ => {}
                }
            }
        }
        weakened
    }

    /// Variants none of whose detectors ran (their columns were skipped): not judged.
    pub fn not_run(&self) -> Vec<&str> {
        self.rows
            .iter()
            .filter(|row| row.cells.is_empty())
            .map(|row| row.variant.broken.name())
            .collect()
    }

    /// The correct build's detectors that failed.
    pub fn correct_failures(&self) -> Vec<&str> {
        self.correct
            .iter()
            .filter(|correct| !matches!(correct.cell, Cell::Survived { .. }))
            .map(|correct| correct.key.as_str())
            .collect()
    }

    /// Every variant killed by every detector that must kill it, and the correct build clean.
    pub fn passed(&self) -> bool {
        self.survivors().is_empty()
            && self.weakened().is_empty()
            && self.correct_failures().is_empty()
    }
}

/// A cell as the matrix shows it: a chaos run the catalogue expects to miss says so.
pub fn cell_text(detector: &Detector, cell: &Cell) -> String {
    match cell {
        Cell::Survived { .. } if !detector.must_kill() => "missed (expected)".to_string(),
        _ => cell.short(),
    }
}

/// The matrix as JUnit test cases: a variant a detector must kill and did not is a failure, as
/// is a detector that could not run or one that failed the correct build.
pub(super) fn junit_cases(matrix: &Matrix) -> Vec<crate::junit::Case> {
    let wall = |cell: &Cell| match cell {
        Cell::Killed { wall, .. } | Cell::Survived { wall, .. } => Some(*wall),
        Cell::Error(_) => None,
    };
    let mut cases = Vec::new();
    for row in &matrix.rows {
        for (detector, cell) in &row.cells {
            let text = cell_text(detector, cell);
            let failed = match cell {
                Cell::Killed { .. } => false,
                Cell::Survived { .. } => detector.must_kill(),
                Cell::Error(_) => true,
            };
            cases.push(crate::junit::Case {
                name: format!(
                    "{} / {}",
                    row.variant.broken.name(),
                    detector.column().title()
                ),
                classname: "mutants".to_string(),
                failure: failed.then(|| {
                    (
                        format!("not killed: {text}"),
                        row.variant.models.to_string(),
                    )
                }),
                time: wall(cell),
            });
        }
    }
    for correct in &matrix.correct {
        let failed = !matches!(correct.cell, Cell::Survived { .. });
        cases.push(crate::junit::Case {
            name: format!("correct build / {}", correct.key),
            classname: "mutants correct build".to_string(),
            failure: failed.then(|| ("the correct build failed".to_string(), correct.cell.short())),
            time: wall(&correct.cell),
        });
    }
    cases
}
