//! The run report as one self-contained HTML page: an SVG with one lane per node (role and term
//! over simulated time, down and paused stretches, commits), a network lane (partitions, cuts),
//! a commits lane (the stretches in which the cluster committed nothing, as bands),
//! for the key-value workload a lane of client operations, and the violation marked across all of
//! them. Every shape has a tooltip; the data drawn is embedded as JSON (`run-data`) so a test or a
//! script can check it against the trace. No script runs and nothing is fetched.

use super::picture::{Lane, Mark, Picture};
use std::fmt::Write;

/// What the page says about the run besides its picture.
#[derive(Clone, Debug, Default)]
pub struct Header {
    /// The title (`seed 9: commit-old-term`).
    pub title: String,
    /// Lines shown under the title (violation, replay line, engine).
    pub lines: Vec<String>,
    /// A page beside this one to link to (`history.html`).
    pub history_page: Option<String>,
}

/// Client operations for the clients' lane: (call, return or `None` if unknown), microseconds.
pub type Operations = [(u64, Option<u64>)];

const LEFT: f64 = 90.0;
const WIDTH: f64 = 1100.0;
const LANE: f64 = 26.0;
const GAP: f64 = 8.0;

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

fn seconds(us: u64) -> String {
    format!("{:.6}s", us as f64 / 1e6)
}

fn role_colour(role: &str) -> &'static str {
    match role {
        "Leader" => "#2e9d4f",
        "Candidate" => "#f0a030",
        "PreCandidate" => "#f5d78a",
        _ => "#c9ced6",
    }
}

/// The distance between time ticks, in microseconds, for a run of `end` microseconds: 1, 2 or 5
/// times a power of ten, so that there are from 5 to 10 ticks.
fn tick_step(end: f64) -> f64 {
    let rough = (end / 10.0).max(1.0);
    let power = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|step| *step >= rough)
        .unwrap_or(10.0 * power)
}

/// Renders the page.
pub fn render(header: &Header, picture: &Picture, operations: Option<&Operations>) -> String {
    let mut canvas = Canvas::new(picture.end);
    canvas.network_lane(picture);
    canvas.commits_lane(picture);
    for lane in &picture.lanes {
        canvas.node_lane(lane);
    }
    if let Some(operations) = operations {
        canvas.clients_lane(operations);
    }
    canvas.time_axis();
    if let Some(violation) = &picture.violation {
        canvas.violation(violation);
    }
    let (svg, y) = (canvas.svg, canvas.y);
    let height = y + 24.0;
    let data = picture.to_json().to_string().replace("</", "<\\/");
    let mut lines = String::new();
    for line in &header.lines {
        let _ = write!(lines, "<p>{}</p>", escape(line));
    }
    if let Some(page) = &header.history_page {
        let _ = write!(
            lines,
            r#"<p>Client history and the checker's counterexample: <a href="{0}">{0}</a></p>"#,
            escape(page)
        );
    }
    let legend = ["Follower", "PreCandidate", "Candidate", "Leader"]
        .iter()
        .map(|role| {
            format!(
                r#"<span class="key" style="background:{}"></span>{role}"#,
                role_colour(role)
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 20px; color: #222; }}
h1 {{ font-size: 18px; }} p {{ margin: 4px 0; font-family: ui-monospace, monospace; font-size: 12px; }}
.legend {{ margin: 10px 0; }} .key {{ display: inline-block; width: 14px; height: 10px; margin: 0 4px 0 12px; }}
svg {{ display: block; margin-top: 10px; }}
.lane {{ fill: #f7f8fa; stroke: #e1e4e8; }} .label {{ text-anchor: end; font-size: 12px; }}
.term {{ fill: #fff; font-size: 11px; font-weight: bold; pointer-events: none; }}
.down {{ fill: url(#hatch); stroke: #333; stroke-width: 0.5; }} .paused {{ fill: none; stroke: #3060d0; stroke-width: 2; }}
.commit {{ stroke: #124d24; stroke-width: 1; }} .partition {{ fill: #d9c2f0; stroke: #8e63c0; stroke-width: 0.5; }}
.stall {{ fill: #f3b0a0; stroke: #c0503a; stroke-width: 0.5; }} .cut {{ fill: #8e63c0; }} .ops {{ fill: #6a8fc7; }} .note {{ font-size: 11px; fill: #555; }}
.grid {{ stroke: #eee; }} .tick {{ font-size: 10px; fill: #666; text-anchor: middle; }}
.violation {{ stroke: #d0021b; stroke-width: 2; }} .violation-label {{ fill: #d0021b; font-size: 11px; }}
</style>
</head>
<body>
<h1>{title}</h1>
{lines}
<div class="legend">{legend} <span class="key" style="background:#444"></span>down <span class="key" style="border:2px solid #3060d0"></span>paused <span class="key" style="background:#d9c2f0"></span>partition <span class="key" style="background:#f3b0a0"></span>nothing committed for over 0.6 s <span class="key" style="background:#d0021b"></span>violation</div>
<svg xmlns="http://www.w3.org/2000/svg" width="{svg_width}" height="{height}" role="img" aria-label="the run over simulated time">
<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#555"/><line x1="0" y1="0" x2="0" y2="6" stroke="#999" stroke-width="2"/></pattern></defs>
{svg}
</svg>
<script type="application/json" id="run-data">{data}</script>
</body>
</html>
"##,
        title = escape(&header.title),
        svg_width = LEFT + WIDTH + 330.0,
    )
}

/// The picture being drawn: the SVG so far, the top of the next lane, and the run's end.
struct Canvas {
    svg: String,
    y: f64,
    end: f64,
}

impl Canvas {
    fn new(end: u64) -> Canvas {
        Canvas {
            svg: String::new(),
            y: 24.0,
            end: end.max(1) as f64,
        }
    }

    /// Where `us` microseconds into the run falls on the page.
    fn x(&self, us: u64) -> f64 {
        LEFT + WIDTH * (us as f64 / self.end)
    }

    /// Starts a lane labelled `label` at the current height.
    fn lane(&mut self, label: &str) {
        let y = self.y;
        let _ = write!(
            self.svg,
            r#"<text x="{}" y="{}" class="label">{}</text>"#,
            LEFT - 8.0,
            y + LANE * 0.65,
            escape(label)
        );
        let _ = write!(
            self.svg,
            r#"<rect x="{LEFT}" y="{y}" width="{WIDTH}" height="{LANE}" class="lane"/>"#
        );
    }

    /// The network lane: partitions as stretches, cuts and heals as marks.
    fn network_lane(&mut self, picture: &Picture) {
        self.lane("network");
        let y = self.y;
        for (start, stop, groups) in &picture.partitions {
            let _ = write!(
                self.svg,
                r#"<rect x="{:.2}" y="{y}" width="{:.2}" height="{LANE}" class="partition"><title>partition {} from {} to {}</title></rect>"#,
                self.x(*start),
                (self.x(*stop) - self.x(*start)).max(1.0),
                escape(groups),
                seconds(*start),
                seconds(*stop)
            );
        }
        for mark in &picture.network {
            let _ = write!(
                self.svg,
                r#"<path d="M{:.2} {y} l4 8 l-8 0 z" class="cut"><title>{} at {}</title></path>"#,
                self.x(mark.at),
                escape(&mark.text),
                seconds(mark.at)
            );
        }
        self.y += LANE + GAP;
    }

    /// The cluster's lane: the stretches in which nothing committed, as bands.
    fn commits_lane(&mut self, picture: &Picture) {
        self.lane("commits");
        let y = self.y;
        for (start, stop) in &picture.stalls {
            let _ = write!(
                self.svg,
                r#"<rect x="{:.2}" y="{y}" width="{:.2}" height="{LANE}" class="stall"><title>nothing committed from {} to {} ({:.3} s)</title></rect>"#,
                self.x(*start),
                (self.x(*stop) - self.x(*start)).max(1.0),
                seconds(*start),
                seconds(*stop),
                (stop - start) as f64 / 1e6
            );
        }
        self.y += LANE + GAP;
    }

    /// A node's lane: its roles and terms, down and paused stretches, and commits.
    fn node_lane(&mut self, lane: &Lane) {
        self.lane(&lane.node);
        self.roles(lane);
        let y = self.y;
        for (start, stop) in &lane.down {
            let _ = write!(
                self.svg,
                r#"<rect x="{:.2}" y="{y}" width="{:.2}" height="{LANE}" class="down"><title>{} down from {} to {}</title></rect>"#,
                self.x(*start),
                (self.x(*stop) - self.x(*start)).max(1.0),
                lane.node,
                seconds(*start),
                seconds(*stop)
            );
        }
        for (start, stop) in &lane.paused {
            let _ = write!(
                self.svg,
                r#"<rect x="{:.2}" y="{}" width="{:.2}" height="{}" class="paused"><title>{} paused from {} to {}</title></rect>"#,
                self.x(*start),
                y + 2.0,
                (self.x(*stop) - self.x(*start)).max(1.0),
                LANE - 4.0,
                lane.node,
                seconds(*start),
                seconds(*stop)
            );
        }
        for (at, index) in &lane.commits {
            let _ = write!(
                self.svg,
                r#"<line x1="{0:.2}" x2="{0:.2}" y1="{1}" y2="{2}" class="commit"><title>{3} commits up to #{4} at {5}</title></line>"#,
                self.x(*at),
                y + LANE - 6.0,
                y + LANE,
                lane.node,
                index,
                seconds(*at)
            );
        }
        self.y += LANE + GAP;
    }

    /// A node's roles over time, a leader's stretch labelled with its term where it fits.
    fn roles(&mut self, lane: &Lane) {
        let y = self.y;
        for span in &lane.roles {
            let width = (self.x(span.end) - self.x(span.start)).max(0.5);
            let _ = write!(
                self.svg,
                r#"<rect x="{:.2}" y="{y}" width="{width:.2}" height="{LANE}" fill="{}"><title>{} {} in t{} from {} to {}</title></rect>"#,
                self.x(span.start),
                role_colour(&span.role),
                lane.node,
                escape(&span.role),
                span.term,
                seconds(span.start),
                seconds(span.end)
            );
            if span.role == "Leader" && width > 24.0 {
                let _ = write!(
                    self.svg,
                    r#"<text x="{:.2}" y="{}" class="term">t{}</text>"#,
                    self.x(span.start) + 3.0,
                    y + LANE * 0.65,
                    span.term
                );
            }
        }
    }

    /// The clients' lane: operations completed per slice of time, and the unknown ones.
    fn clients_lane(&mut self, operations: &Operations) {
        const SLICES: usize = 200;
        self.lane("clients");
        let (y, end) = (self.y, self.end);
        let mut done = [0u64; SLICES];
        let mut unknown = 0;
        for (_, ret) in operations {
            match ret {
                Some(ret) => {
                    done[((*ret as f64 / end * SLICES as f64) as usize).min(SLICES - 1)] += 1
                }
                None => unknown += 1,
            }
        }
        let most = done.iter().copied().max().unwrap_or(0).max(1) as f64;
        for (slice, count) in done.iter().enumerate().filter(|(_, c)| **c > 0) {
            let height = LANE * (*count as f64 / most);
            let start = (slice as f64 / SLICES as f64 * end) as u64;
            let stop = ((slice + 1) as f64 / SLICES as f64 * end) as u64;
            let _ = write!(
                self.svg,
                r#"<rect x="{:.2}" y="{:.2}" width="{:.2}" height="{height:.2}" class="ops"><title>{count} operations returned from {} to {}</title></rect>"#,
                self.x(start),
                y + LANE - height,
                WIDTH / SLICES as f64,
                seconds(start),
                seconds(stop)
            );
        }
        let _ = write!(
            self.svg,
            r#"<text x="{}" y="{}" class="note">{} operations, {unknown} with an unknown outcome</text>"#,
            LEFT + WIDTH + 6.0,
            y + LANE * 0.65,
            operations.len()
        );
        self.y += LANE + GAP;
    }

    /// The time axis: a tick every 1, 2 or 5 times a power of ten, about ten of them.
    fn time_axis(&mut self) {
        let step = tick_step(self.end);
        let decimals = (-(step / 1e6).log10().floor()).max(0.0) as usize;
        for us in (0..)
            .map(|k| k * step as u64)
            .take_while(|&us| us as f64 <= self.end)
        {
            let _ = write!(
                self.svg,
                r#"<line x1="{0:.2}" x2="{0:.2}" y1="20" y2="{1}" class="grid"/><text x="{0:.2}" y="{2}" class="tick">{3:.4$} s</text>"#,
                self.x(us),
                self.y,
                self.y + 14.0,
                us as f64 / 1e6,
                decimals
            );
        }
    }

    /// The violation, across every lane.
    fn violation(&mut self, violation: &Mark) {
        let _ = write!(
            self.svg,
            r#"<line x1="{0:.2}" x2="{0:.2}" y1="14" y2="{1}" class="violation"><title>{2} at {3}</title></line><text x="{0:.2}" y="11" class="violation-label">violation at {3}</text>"#,
            self.x(violation.at),
            self.y,
            escape(&violation.text),
            seconds(violation.at)
        );
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::report::picture::{Lane, Mark, RoleSpan};

    #[test]
    fn ticks_fall_on_round_times() {
        assert_eq!(tick_step(1_155_000.0), 200_000.0);
        assert_eq!(tick_step(27_700_000.0), 5_000_000.0);
        assert_eq!(tick_step(10_000_000.0), 1_000_000.0);
        assert_eq!(tick_step(5.0), 1.0);
    }

    #[test]
    fn the_page_escapes_what_it_quotes_and_embeds_its_data() {
        let picture = Picture {
            lanes: vec![Lane {
                node: "n0".into(),
                roles: vec![RoleSpan {
                    start: 0,
                    end: 10,
                    role: "Leader".into(),
                    term: 2,
                }],
                ..Lane::default()
            }],
            violation: Some(Mark {
                at: 5,
                text: "a <b> & </script>".into(),
            }),
            end: 10,
            ..Picture::default()
        };
        let header = Header {
            title: "seed 1 <x>".into(),
            lines: vec!["replay: a && b".into()],
            history_page: Some("history.html".into()),
        };
        let page = render(&header, &picture, Some(&[(1, Some(4)), (2, None)]));
        assert!(page.contains("<title>seed 1 &lt;x&gt;</title>"));
        assert!(page.contains("replay: a &amp;&amp; b"));
        assert!(page.contains("a &lt;b&gt; &amp; &lt;/script&gt; at 0.000005s"));
        assert!(
            !page.contains("& </script>"),
            "the data cannot end its own script element"
        );
        assert!(page.contains(r#"<a href="history.html">"#));
        assert!(page.contains("2 operations, 1 with an unknown outcome"));
        let data = page
            .split(r#"id="run-data">"#)
            .nth(1)
            .unwrap()
            .split("</script>")
            .next()
            .unwrap();
        let parsed: serde_json::Value = serde_json::from_str(data).unwrap();
        assert_eq!(
            parsed["lanes"][0]["roles"][0],
            serde_json::json!([0, 10, "Leader", 2])
        );
    }
}
