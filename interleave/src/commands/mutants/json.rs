//! The kill matrix as one JSON object, for CI.

use super::{cell_text, Matrix};
use sim::mutants::Cell;

/// The matrix: a row per variant with its cells, the correct build, and the verdicts.
pub fn render(matrix: &Matrix) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = matrix
        .rows
        .iter()
        .map(|row| {
            let cells: Vec<serde_json::Value> = row
                .cells
                .iter()
                .map(|(detector, cell)| {
                    serde_json::json!({
                        "detector": detector.column().title(),
                        "result": cell_text(detector, cell),
                        "killed": cell.killed(),
                        "must_kill": detector.must_kill(),
                        "detail": match cell {
                            Cell::Killed { how, .. } => how.clone(),
                            Cell::Survived { tried, .. } => tried.clone(),
                            Cell::Error(error) => error.clone(),
                        },
                        "seeds_killing": match cell {
                            Cell::Killed { seeds_killing: Some((killing, tried)), .. } => {
                                serde_json::json!({"killing": killing, "tried": tried})
                            }
                            _ => serde_json::Value::Null,
                        },
                    })
                })
                .collect();
            serde_json::json!({
                "variant": row.variant.broken.name(),
                "models": row.variant.models,
                "cells": cells,
            })
        })
        .collect();
    let correct: Vec<serde_json::Value> = matrix
        .correct
        .iter()
        .map(|correct| {
            serde_json::json!({
                "detector": correct.key,
                "failed": !matches!(correct.cell, Cell::Survived { .. }),
            })
        })
        .collect();
    serde_json::json!({
        "version": crate::JSON_VERSION,
        "rows": rows,
        "correct_build": correct,
        "survivors": matrix.survivors(),
        "weakened": matrix.weakened(),
        "not_run": matrix.not_run(),
        "correct_failures": matrix.correct_failures(),
        "wall_s": matrix.wall.as_secs_f64(),
    })
}
