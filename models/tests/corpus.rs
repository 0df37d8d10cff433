//! Every history of the corpus (`models/corpus/`) gets the verdict `verdicts.tsv` gives, on one
//! thread, within the default budget of states and no time limit, so the result does not depend
//! on the machine. How long each takes is a figure of the `checker_speed` benchmark.

use models::corpus::{self, CorpusModel};
use models::{Budget, CheckOptions};

#[test]
fn every_corpus_history_gets_its_verdict_within_the_default_budget() {
    let entries = corpus::entries();
    assert!(
        entries.iter().any(|e| e.model == CorpusModel::Kv)
            && entries.iter().any(|e| e.model == CorpusModel::Register),
        "the corpus holds both models"
    );
    let options = CheckOptions {
        budget: Budget::new(Budget::default().max_states.min(5_000_000), None),
        threads: 1,
    };
    for entry in &entries {
        let history = entry.read();
        let report = history.check(&options);
        assert_eq!(
            history.counts(),
            (entry.operations, entry.unknown),
            "{}: verdicts.tsv is stale",
            entry.file
        );
        assert_eq!(report.verdict, entry.verdict, "{}: {report:?}", entry.file);
    }
}

#[test]
fn every_corpus_file_is_listed() {
    let listed: Vec<String> = corpus::entries().into_iter().map(|e| e.file).collect();
    for folder in ["kv", "register"] {
        for file in std::fs::read_dir(corpus::dir().join(folder)).expect("a corpus folder") {
            let name = format!(
                "{folder}/{}",
                file.expect("an entry").file_name().to_string_lossy()
            );
            assert!(listed.contains(&name), "{name} has no row in verdicts.tsv");
        }
    }
}
