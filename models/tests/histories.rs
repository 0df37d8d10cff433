//! The checker on every history in `testdata/histories/` (Porcupine's test data, in the
//! repository), against the verdicts in `expected.tsv`.

use models::formats::{jepsen, kvlog};
use models::{
    check, check_partitions, partition_by_key, CheckOptions, KeyValue, KvStore, Register, Verdict,
};
use std::path::{Path, PathBuf};

fn histories_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/histories")
}

struct Expected {
    name: String,
    operations: usize,
    verdict: Verdict,
}

fn expected(dir: &Path) -> Vec<Expected> {
    let text = std::fs::read_to_string(dir.join("expected.tsv")).expect("read expected.tsv");
    text.lines()
        .skip(1)
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let verdict = match fields[3] {
                "Ok" => Verdict::Linearizable,
                "Illegal" => Verdict::NotLinearizable,
                other => panic!("unknown verdict {other:?} in expected.tsv"),
            };
            Expected {
                name: fields[0].to_string(),
                operations: fields[1].parse().expect("count"),
                verdict,
            }
        })
        .collect()
}

#[test]
fn every_jepsen_etcd_history_gets_its_expected_verdict() {
    let dir = histories_dir();
    let rows: Vec<Expected> = expected(&dir)
        .into_iter()
        .filter(|row| row.name.starts_with("etcd_"))
        .collect();
    assert_eq!(rows.len(), 102, "expected.tsv lists 102 etcd histories");
    for row in rows {
        let path = dir.join("jepsen").join(format!("{}.log", row.name));
        let text = std::fs::read_to_string(&path).expect("read history");
        let history = jepsen::parse(&path.display().to_string(), &text).expect("valid log");
        let report = check(&Register, &history, &CheckOptions::default());
        assert_eq!(report.verdict, row.verdict, "{}", row.name);
    }
}

#[test]
fn every_kv_history_gets_its_expected_verdict_per_key_and_as_one_partition() {
    let dir = histories_dir();
    let rows: Vec<Expected> = expected(&dir)
        .into_iter()
        .filter(|row| row.name.starts_with('c'))
        .collect();
    assert_eq!(rows.len(), 10, "expected.tsv lists 10 kv checks");
    for row in rows {
        let (file, mode) = row.name.split_once(' ').expect("name and mode");
        let path = dir.join("kv").join(format!("{file}.txt"));
        let text = std::fs::read_to_string(&path).expect("read history");
        let history = kvlog::parse(&path.display().to_string(), &text).expect("valid log");
        assert_eq!(history.len(), row.operations, "{}", row.name);
        let verdict = match mode {
            "(per key)" => {
                check_partitions(
                    &KeyValue,
                    partition_by_key(&history),
                    &CheckOptions::default(),
                )
                .verdict
            }
            "(one partition)" => check(&KvStore, &history, &CheckOptions::default()).verdict,
            other => panic!("unknown mode {other:?}"),
        };
        assert_eq!(verdict, row.verdict, "{}", row.name);
    }
}
