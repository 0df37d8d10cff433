//! The schedule's line format: `# key: value` notes, then one event per line, `TIME EVENT`, in
//! the words the run's trace uses (`0.212000s crash n3`, `1.250000s partition [n0 n1] [n2 n3]`).

use super::{Event, Schedule, Timed};
use node::NodeId;
use std::fmt;
use std::time::Duration;
use threadsim::clock::RatePpm;

/// The first line of every schedule file.
pub const HEADER: &str = "# interleave schedule, version 1";

/// Why a schedule file could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ParseError {
    /// The line (from 1).
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

fn node_list(nodes: &[NodeId]) -> String {
    crate::events::node_list(nodes)
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Offer { to, value } => write!(f, "offer c{value} to {to}"),
            Event::Crash(node) => write!(f, "crash {node}"),
            Event::Restart(node) => write!(f, "restart {node}"),
            Event::TearSave(node) => write!(f, "tear the next save of {node}"),
            Event::CutPowerInSync(node) => write!(f, "cut the power in the next sync of {node}"),
            Event::FailSync(node) => write!(f, "fail the next sync of {node}"),
            Event::FillDisk(node) => write!(f, "fill the disk of {node}"),
            Event::MisdirectSave(node) => write!(f, "misdirect the next save of {node}"),
            Event::CorruptCopy(node) => write!(f, "corrupt a copy of the state of {node}"),
            Event::Pause(node) => write!(f, "pause {node}"),
            Event::Resume(node) => write!(f, "resume {node}"),
            Event::Partition(groups) => {
                let groups: Vec<String> = groups.iter().map(|g| node_list(g)).collect();
                write!(f, "partition {}", groups.join(" "))
            }
            Event::Cut(from, to) => write!(f, "cut {from} -> {to}"),
            Event::Heal => write!(f, "heal"),
            Event::Unreliable(true) => write!(f, "network unreliable"),
            Event::Unreliable(false) => write!(f, "network reliable"),
            Event::ClockRate(node, rate) => write!(f, "clock {node} runs at {}", rate_text(*rate)),
            Event::ClockJump(node, by) => write!(f, "clock {node} jumps {}", format_time(*by)),
            Event::AddLearner(node) => write!(f, "add learner {node}"),
            Event::Promote(node) => write!(f, "promote {node}"),
            Event::Demote(node) => write!(f, "demote {node}"),
            Event::RemoveMember(node) => write!(f, "remove {node}"),
            Event::TransferLeadership(node) => write!(f, "transfer to {node}"),
            Event::End => write!(f, "end"),
        }
    }
}

/// `1.1x`, `0.95x`: a clock rate as a factor of true time, with every digit it has (to the
/// millionth) and none more.
pub fn rate_text(rate: RatePpm) -> String {
    let fraction = format!("{:06}", rate.0 % 1_000_000);
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        format!("{}x", rate.0 / 1_000_000)
    } else {
        format!("{}.{fraction}x", rate.0 / 1_000_000)
    }
}

fn parse_rate(word: &str) -> Result<RatePpm, String> {
    let bad = || {
        format!(
            "{word:?} is not a clock rate from {} to {} (like 1.1x)",
            rate_text(RatePpm::SLOWEST),
            rate_text(RatePpm::FASTEST)
        )
    };
    let factor: f64 = word
        .strip_suffix('x')
        .and_then(|number| number.parse().ok())
        .ok_or_else(bad)?;
    let ppm = (factor * 1e6).round();
    if !(RatePpm::SLOWEST.0 as f64..=RatePpm::FASTEST.0 as f64).contains(&ppm) {
        return Err(bad());
    }
    Ok(RatePpm(ppm as u64))
}

/// The longest clock jump a schedule may hold.
const LONGEST_JUMP: Duration = Duration::from_secs(3600);

/// `1.250000s`, as the trace writes simulated time.
pub fn format_time(at: Duration) -> String {
    format!("{}.{:06}s", at.as_secs(), at.subsec_micros())
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{HEADER}")?;
        for (key, value) in &self.notes {
            writeln!(f, "# {key}: {value}")?;
        }
        for timed in &self.events {
            writeln!(f, "{} {}", format_time(timed.at), timed.event)?;
        }
        Ok(())
    }
}

fn parse_node(word: &str) -> Result<NodeId, String> {
    word.strip_prefix('n')
        .and_then(|id| id.parse().ok())
        .map(NodeId)
        .ok_or_else(|| format!("{word:?} is not a node (n0, n1, ...)"))
}

fn parse_time(word: &str) -> Result<Duration, String> {
    let seconds = word
        .strip_suffix('s')
        .ok_or_else(|| format!("{word:?} is not a time (like 1.250000s)"))?;
    let value: f64 = seconds
        .parse()
        .map_err(|_| format!("{word:?} is not a time (like 1.250000s)"))?;
    if !(0.0..=1e7).contains(&value) {
        return Err(format!("{word:?} is outside 0 to 10,000,000 seconds"));
    }
    Ok(Duration::from_micros((value * 1e6).round() as u64))
}

fn parse_groups(text: &str) -> Result<Vec<Vec<NodeId>>, String> {
    let mut groups = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let inner = rest
            .strip_prefix('[')
            .ok_or_else(|| format!("expected '[' at {rest:?}"))?;
        let close = inner
            .find(']')
            .ok_or_else(|| format!("no ']' after {rest:?}"))?;
        let group = inner[..close]
            .split_whitespace()
            .map(parse_node)
            .collect::<Result<Vec<_>, _>>()?;
        groups.push(group);
        rest = inner[close + 1..].trim_start();
    }
    if groups.is_empty() {
        return Err("a partition needs at least one group".into());
    }
    Ok(groups)
}

fn parse_event(text: &str) -> Result<Event, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let one_node = |what: fn(NodeId) -> Event| match words.as_slice() {
        [_, node] => parse_node(node).map(what),
        _ => Err(format!("{:?} takes one node", words[0])),
    };
    match words.first().copied() {
        Some("offer") => match words.as_slice() {
            [_, command, "to", node] => {
                let value = command
                    .strip_prefix('c')
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| format!("{command:?} is not a command (c1, c2, ...)"))?;
                Ok(Event::Offer {
                    to: parse_node(node)?,
                    value,
                })
            }
            _ => Err("expected `offer cN to nM`".into()),
        },
        Some("crash") => one_node(Event::Crash),
        Some("restart") => one_node(Event::Restart),
        Some("tear") => match words[1..] {
            ["the", "next", "save", "of", node] => Ok(Event::TearSave(parse_node(node)?)),
            _ => Err("expected `tear the next save of nN`".into()),
        },
        Some("misdirect") => match words[1..] {
            ["the", "next", "save", "of", node] => Ok(Event::MisdirectSave(parse_node(node)?)),
            _ => Err("expected `misdirect the next save of nN`".into()),
        },
        Some("corrupt") => match words[1..] {
            ["a", "copy", "of", "the", "state", "of", node] => {
                Ok(Event::CorruptCopy(parse_node(node)?))
            }
            _ => Err("expected `corrupt a copy of the state of nN`".into()),
        },
        Some("cut") if words.get(1) == Some(&"the") => match words[1..] {
            ["the", "power", "in", "the", "next", "sync", "of", node] => {
                Ok(Event::CutPowerInSync(parse_node(node)?))
            }
            _ => Err("expected `cut the power in the next sync of nN`".into()),
        },
        Some("fail") => match words[1..] {
            ["the", "next", "sync", "of", node] => Ok(Event::FailSync(parse_node(node)?)),
            _ => Err("expected `fail the next sync of nN`".into()),
        },
        Some("fill") => match words[1..] {
            ["the", "disk", "of", node] => Ok(Event::FillDisk(parse_node(node)?)),
            _ => Err("expected `fill the disk of nN`".into()),
        },
        Some("pause") => one_node(Event::Pause),
        Some("resume") => one_node(Event::Resume),
        Some("partition") => Ok(Event::Partition(parse_groups(
            text.trim_start().trim_start_matches("partition"),
        )?)),
        Some("cut") => match words.as_slice() {
            [_, from, "->", to] => Ok(Event::Cut(parse_node(from)?, parse_node(to)?)),
            _ => Err("expected `cut nA -> nB`".into()),
        },
        Some("heal") if words.len() == 1 => Ok(Event::Heal),
        Some("network") => match words.as_slice() {
            [_, "unreliable"] => Ok(Event::Unreliable(true)),
            [_, "reliable"] => Ok(Event::Unreliable(false)),
            _ => Err("expected `network reliable` or `network unreliable`".into()),
        },
        Some("clock") => match words.as_slice() {
            [_, node, "runs", "at", rate] => {
                Ok(Event::ClockRate(parse_node(node)?, parse_rate(rate)?))
            }
            [_, node, "jumps", by] => {
                let by = parse_time(by)?;
                if by > LONGEST_JUMP {
                    return Err(format!(
                        "a clock jump of {} is longer than the {} a schedule allows",
                        format_time(by),
                        format_time(LONGEST_JUMP)
                    ));
                }
                Ok(Event::ClockJump(parse_node(node)?, by))
            }
            _ => Err("expected `clock nN runs at 1.1x` or `clock nN jumps 0.250000s`".into()),
        },
        Some("add") => match words[1..] {
            ["learner", node] => Ok(Event::AddLearner(parse_node(node)?)),
            _ => Err("expected `add learner nN`".into()),
        },
        Some("promote") => one_node(Event::Promote),
        Some("demote") => one_node(Event::Demote),
        Some("remove") => one_node(Event::RemoveMember),
        Some("transfer") => match words[1..] {
            ["to", node] => Ok(Event::TransferLeadership(parse_node(node)?)),
            _ => Err("expected `transfer to nN`".into()),
        },
        Some("end") if words.len() == 1 => Ok(Event::End),
        Some(other) => Err(format!(
            "unknown event {other:?} (offer, crash, restart, tear, pause, resume, partition, \
             cut, heal, network, clock, add, promote, demote, remove, transfer, end)"
        )),
        None => Err("an event is missing after the time".into()),
    }
}

impl std::str::FromStr for Schedule {
    type Err = ParseError;

    /// Reads a schedule: the header line, `# key: value` notes, then events in time order.
    fn from_str(text: &str) -> Result<Schedule, ParseError> {
        let mut schedule = Schedule::default();
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        let error = |line, message: String| ParseError { line, message };
        match lines.next() {
            Some((_, first)) if first.trim() == HEADER => {}
            _ => {
                return Err(error(
                    1,
                    format!("not a schedule: the first line must be {HEADER:?}"),
                ))
            }
        }
        for (number, line) in lines {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if let Some(note) = line.strip_prefix('#') {
                if let Some((key, value)) = note.split_once(':') {
                    schedule
                        .notes
                        .push((key.trim().to_string(), value.trim().to_string()));
                }
                continue;
            }
            let (time, event) = line
                .split_once(char::is_whitespace)
                .ok_or_else(|| error(number, format!("expected `TIME EVENT`, got {line:?}")))?;
            let at = parse_time(time).map_err(|m| error(number, m))?;
            let event = parse_event(event).map_err(|m| error(number, m))?;
            if schedule.events.last().is_some_and(|last| last.at > at) {
                return Err(error(number, "events must be in time order".into()));
            }
            if schedule
                .events
                .last()
                .is_some_and(|last| last.event == Event::End)
            {
                return Err(error(number, "nothing may follow `end`".into()));
            }
            schedule.events.push(Timed { at, event });
        }
        Ok(schedule)
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn at(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    #[test]
    fn every_event_round_trips_through_its_line() {
        let events = vec![
            Event::Offer {
                to: NodeId(2),
                value: 17,
            },
            Event::Crash(NodeId(3)),
            Event::Restart(NodeId(3)),
            Event::TearSave(NodeId(2)),
            Event::MisdirectSave(NodeId(1)),
            Event::CorruptCopy(NodeId(3)),
            Event::CutPowerInSync(NodeId(2)),
            Event::FailSync(NodeId(0)),
            Event::FillDisk(NodeId(4)),
            Event::Pause(NodeId(1)),
            Event::Resume(NodeId(1)),
            Event::Partition(vec![
                vec![NodeId(0), NodeId(1)],
                vec![NodeId(2), NodeId(1004)],
            ]),
            Event::Cut(NodeId(4), NodeId(0)),
            Event::Heal,
            Event::Unreliable(true),
            Event::Unreliable(false),
            Event::ClockRate(NodeId(2), RatePpm(1_100_000)),
            Event::ClockRate(NodeId(0), RatePpm(925_500)),
            Event::ClockJump(NodeId(1), Duration::from_millis(250)),
            Event::AddLearner(NodeId(3)),
            Event::Promote(NodeId(3)),
            Event::Demote(NodeId(1)),
            Event::RemoveMember(NodeId(4)),
            Event::TransferLeadership(NodeId(2)),
            Event::End,
        ];
        let schedule = Schedule {
            notes: vec![("seed".into(), "59".into())],
            events: events
                .into_iter()
                .enumerate()
                .map(|(i, event)| Timed {
                    at: at(250 * i as u64),
                    event,
                })
                .collect(),
        };
        let text = schedule.to_string();
        assert!(
            text.contains("2.750000s partition [n0 n1] [n2 n1004]"),
            "{text}"
        );
        assert_eq!(text.parse::<Schedule>(), Ok(schedule));
    }

    #[test]
    fn a_malformed_line_is_refused_with_its_number() {
        for (text, line, fragment) in [
            ("nonsense", 1, "not a schedule"),
            (
                "# interleave schedule, version 1\n0.1s crash x3",
                2,
                "not a node",
            ),
            (
                "# interleave schedule, version 1\n0.1 crash n3",
                2,
                "not a time",
            ),
            (
                "# interleave schedule, version 1\n0.1s explode n3",
                2,
                "unknown event",
            ),
            (
                "# interleave schedule, version 1\n0.2s heal\n0.1s heal",
                3,
                "time order",
            ),
            (
                "# interleave schedule, version 1\n0.2s end\n0.3s heal",
                3,
                "follow `end`",
            ),
            (
                "# interleave schedule, version 1\n0.2s partition [n0 n1",
                2,
                "no ']'",
            ),
            ("# interleave schedule, version 1\n1e30s heal", 2, "outside"),
        ] {
            let error = text.parse::<Schedule>().unwrap_err();
            assert_eq!(error.line, line, "{text:?}: {error}");
            assert!(error.message.contains(fragment), "{text:?}: {error}");
        }
    }
}
