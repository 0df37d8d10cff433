//! Every reader either reads a text or refuses it with an error, never a panic: valid histories
//! of every format are damaged by seeded random edits (characters inserted, deleted or replaced
//! from the formats' own alphabet, lines cut, repeated or swapped, huge numbers spliced in) and
//! read again.

use crate::xorshift::Rng;
use models::formats::{edn, jepsen, json, kvlog};

/// Damaged texts per format: under half a second for all of them in the test profile.
const CASES: u64 = 20_000;

const JSON_KV: &str = r#"{"client":3,"op":"append","key":"k","input":"x","output":null,"call":5,"return":9,"outcome":"ok"}
{"client":4,"op":"get","key":"k","input":null,"output":"x","call":10,"return":12,"outcome":"ok"}
{"client":5,"op":"put","key":"j","input":"y","output":null,"call":11,"return":null,"outcome":"unknown"}"#;

const JSON_REGISTER: &str = r#"{"client":0,"op":"write","input":3,"output":null,"call":100,"return":180,"outcome":"ok"}
{"client":1,"op":"cas","input":[3,4],"output":false,"call":120,"return":200,"outcome":"ok"}
{"client":2,"op":"read","input":null,"output":3,"call":150,"return":null,"outcome":"unknown"}"#;

const KVLOG: &str = r#"{:process 0, :type :invoke, :f :append, :key "0", :value "x 0 0 y"}
{:process 1, :type :invoke, :f :get, :key "0", :value nil}
{:process 0, :type :ok, :f :append, :key "0", :value "x 0 0 y"}
{:process 1, :type :ok, :f :get, :key "0", :value "x 0 0 y"}"#;

const JEPSEN: &str = "INFO  jepsen.util - 2\t:invoke\t:cas\t[3 0]
INFO  jepsen.util - 1\t:invoke\t:read\tnil
INFO  jepsen.util - 2\t:ok\t:cas\t[3 0]
INFO  jepsen.util - 1\t:ok\t:read\t0
INFO  jepsen.util - 4\t:invoke\t:write\t1
INFO  jepsen.util - 4\t:info\t:write\t:timed-out";

/// Characters the formats give meaning to, and some they do not expect.
const ALPHABET: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    " ",
    "\t",
    "\n",
    "\\",
    "0",
    "9",
    "-",
    "1e99",
    "nil",
    "null",
    ":ok",
    ":invoke",
    ":info",
    ":fail",
    "ok",
    "unknown",
    "é",
    "\u{0}",
    "99999999999999999999999",
    "-1",
    "true",
    "\"call\":",
    "\"return\":",
    ":type",
    ":process",
    ":f",
];

fn damage(rng: &mut Rng, text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..=rng.below(3) {
        let at = rng.below(chars.len() + 1);
        match rng.below(6) {
            0 => {
                let piece = ALPHABET[rng.below(ALPHABET.len())];
                chars.splice(at..at, piece.chars());
            }
            1 if at < chars.len() => {
                chars.remove(at);
            }
            2 if at < chars.len() => {
                let piece: Vec<char> = ALPHABET[rng.below(ALPHABET.len())].chars().collect();
                chars.splice(at..at + 1, piece);
            }
            3 => chars.truncate(at),
            _ => {
                let mut lines: Vec<String> = chars
                    .iter()
                    .collect::<String>()
                    .lines()
                    .map(String::from)
                    .collect();
                if !lines.is_empty() {
                    let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                    if rng.below(2) == 0 {
                        lines.swap(a, b);
                    } else {
                        let copy = lines[a].clone();
                        lines.insert(b, copy);
                    }
                }
                chars = lines.join("\n").chars().collect();
            }
        }
    }
    chars.into_iter().collect()
}

/// Whether a reader read a text (`false`: it refused it).
type Reader = dyn Fn(&str) -> bool;

/// Damages `valid` `CASES` times and reads each result with `read`; returns how many were
/// refused (the rest read as histories).
fn refused_of(seed: u64, valid: &str, read: impl Fn(&str) -> bool) -> u64 {
    assert!(read(valid), "the undamaged text must read");
    let mut rng = Rng(seed);
    (0..CASES)
        .filter(|_| !read(&damage(&mut rng, valid)))
        .count() as u64
}

#[test]
fn every_reader_refuses_or_reads_damaged_text_without_a_panic() {
    let formats: [(&str, &str, &Reader); 4] = [
        ("json kv", JSON_KV, &|t| json::parse_kv("f", t).is_ok()),
        ("json register", JSON_REGISTER, &|t| {
            json::parse_register("f", t).is_ok()
        }),
        ("kv log", KVLOG, &|t| kvlog::parse("f", t).is_ok()),
        ("jepsen", JEPSEN, &|t| jepsen::parse("f", t).is_ok()),
    ];
    for (seed, (name, valid, read)) in (1..).zip(formats) {
        let refused = refused_of(seed, valid, read);
        // Vacuity guard: the damage must make many texts invalid, or nothing was tested.
        assert!(
            refused > CASES / 4,
            "{name}: only {refused} of {CASES} refused"
        );
    }
    let mut rng = Rng(99);
    for line in KVLOG.lines().cycle().take(CASES as usize) {
        let _ = edn::parse_map(&damage(&mut rng, line));
    }
}
