//! A self-contained HTML page showing a counterexample: each client's operations on a time
//! axis, the longest linearizable prefix numbered in order, the operations that could not be
//! placed in red; or, where the model decided the history itself, why, and the operations that
//! conflict in red. No scripts, no external files.

use crate::checker::Counterexample;
use std::fmt::Write;

const WIDTH: f64 = 1100.0;
const ROW: f64 = 34.0;
const LEFT: f64 = 90.0;

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Renders `counterexample` (of partition `partition` in history `title`) as an HTML page.
pub fn render(title: &str, partition: &str, counterexample: &Counterexample) -> String {
    let operations = &counterexample.operations;
    let mut clients: Vec<u64> = operations.iter().map(|op| op.client).collect();
    clients.sort_unstable();
    clients.dedup();
    let start = operations.iter().map(|op| op.call).min().unwrap_or(0);
    let end = operations
        .iter()
        .map(|op| op.ret.unwrap_or(op.call))
        .max()
        .unwrap_or(start)
        .max(start + 1);
    let span = (end - start) as f64;
    let x = |time: u64| LEFT + (time - start) as f64 / span * (WIDTH - LEFT - 20.0);
    let mut order = vec![None; operations.len()];
    for (position, &index) in counterexample.longest_prefix.iter().enumerate() {
        order[index] = Some(position + 1);
    }
    let height = 40.0 + ROW * clients.len() as f64;

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg width="{WIDTH}" height="{height}" xmlns="http://www.w3.org/2000/svg">"#
    );
    for (row, client) in clients.iter().enumerate() {
        let y = 20.0 + ROW * row as f64;
        let _ = writeln!(
            svg,
            r#"<text x="4" y="{}" class="client">client {client}</text>"#,
            y + 18.0
        );
        let _ = writeln!(
            svg,
            r#"<line x1="{LEFT}" y1="{0}" x2="{WIDTH}" y2="{0}" class="lane"/>"#,
            y + ROW - 2.0
        );
    }
    for (index, op) in operations.iter().enumerate() {
        let row = clients.binary_search(&op.client).expect("client listed");
        let y = 22.0 + ROW * row as f64;
        let (x0, x1) = (x(op.call), op.ret.map_or(WIDTH - 4.0, x));
        let class = if counterexample.unplaced.contains(&index) {
            "unplaced"
        } else if order[index].is_some() {
            "placed"
        } else {
            "other"
        };
        let dashed = if op.ret.is_none() { " unknown" } else { "" };
        let label = match order[index] {
            Some(position) => format!("{position}. {}", op.description),
            None => op.description.clone(),
        };
        let tip = format!(
            "client {} | call {} | return {} | {}",
            op.client,
            op.call,
            op.ret.map_or("unknown".to_string(), |r| r.to_string()),
            op.description
        );
        let _ = writeln!(
            svg,
            r#"<g><title>{}</title><rect x="{x0:.1}" y="{y}" width="{:.1}" height="{}" class="{class}{dashed}"/><text x="{:.1}" y="{}" class="label">{}</text></g>"#,
            escape(&tip),
            (x1 - x0).max(3.0),
            ROW - 8.0,
            x0 + 3.0,
            y + 17.0,
            escape(&label)
        );
    }
    svg.push_str("</svg>\n");

    let mut lists = String::new();
    if let Some(why) = &counterexample.why {
        let _ = writeln!(
            lists,
            "<h2>Why</h2><p class=\"why\">{}</p><h2>The operations that conflict ({} of {})</h2><ul>",
            escape(why),
            counterexample.unplaced.len(),
            operations.len()
        );
    } else {
        let _ = writeln!(
            lists,
            "<h2>Longest linearizable prefix ({} operations)</h2><ol>",
            counterexample.longest_prefix.len()
        );
        for &index in &counterexample.longest_prefix {
            let _ = writeln!(
                lists,
                "<li>client {}: {}</li>",
                operations[index].client,
                escape(&operations[index].description)
            );
        }
        let _ = writeln!(lists, "</ol><h2>Could not be placed next</h2><ul>");
    }
    for &index in &counterexample.unplaced {
        let op = &operations[index];
        let _ = writeln!(
            lists,
            "<li class=\"bad\">client {}: {} (called {}, returned {})</li>",
            op.client,
            escape(&op.description),
            op.call,
            op.ret.map_or("never".to_string(), |r| r.to_string())
        );
    }
    lists.push_str("</ul>\n");

    let legend = if counterexample.why.is_some() {
        "Red bars are the operations that conflict (decided without a search, below); the rest \
         do not matter."
    } else {
        "Green bars are the longest linearizable prefix the search found, numbered in \
         linearization order; red bars could not be placed after it."
    };
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Not linearizable: {title}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; color: #222; }}
svg {{ border: 1px solid #ccc; background: #fcfcfc; }}
.client {{ font-size: 12px; fill: #555; }}
.lane {{ stroke: #eee; }}
.label {{ font-size: 11px; fill: #111; pointer-events: none; }}
rect {{ rx: 3; stroke-width: 1.5; }}
.placed {{ fill: #cdeccd; stroke: #3a8a3a; }}
.unplaced {{ fill: #f7c4c4; stroke: #c62828; stroke-width: 2.5; }}
.other {{ fill: #e6e6e6; stroke: #999; }}
.unknown {{ stroke-dasharray: 5 3; }}
.bad {{ color: #c62828; }}
</style></head><body>
<h1>Not linearizable: {title}</h1>
<p>Partition <b>{partition}</b>, {count} operations. Each bar runs from an operation's call to its
return (dashed: outcome unknown, may take effect any time after its call or never). {legend}
Hover a bar for its details.</p>
{svg}
{lists}
</body></html>
"#,
        title = escape(title),
        partition = escape(partition),
        count = operations.len(),
    )
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::{check, CheckOptions, Operation, Register, RegisterInput, RegisterOutput};

    #[test]
    fn the_page_shows_every_operation_and_highlights_the_unplaced_ones() {
        let history = vec![
            Operation::returned(0, RegisterInput::Write(1), RegisterOutput::Written, 0, 1),
            Operation::returned(0, RegisterInput::Write(2), RegisterOutput::Written, 2, 3),
            Operation::returned(1, RegisterInput::Read, RegisterOutput::Value(Some(1)), 4, 5),
            Operation::unknown(2, RegisterInput::Write(3), 1),
        ];
        let report = check(&Register, &history, &CheckOptions::default());
        let (partition, counterexample) = report.counterexample().expect("illegal");
        let page = render("a <test>", &partition.name, counterexample);
        assert!(page.contains("Not linearizable: a &lt;test&gt;"));
        assert!(
            page.contains(r#"class="unplaced""#),
            "the read is highlighted"
        );
        assert!(page.contains("read() -&gt; 1"));
        assert!(page.contains("unknown"), "the unknown write is dashed");
        assert!(!page.contains("<script"), "self-contained, no scripts");
    }
}
