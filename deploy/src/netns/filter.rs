//! The packet filter of one host: what its links to the other hosts do, written as one
//! nftables table that replaces the last one in a single transaction (`nft -f`), or removes it
//! when every link is healthy.

use crate::LinkFault;
use std::net::Ipv4Addr;

/// The table's name in each namespace.
pub(super) const TABLE: &str = "interleave";

/// The `nft -f` script that makes the links out of a host do what `outgoing` says (the other
/// end's address and the fault): packets to a cut link dropped, a share of them dropped or sent
/// twice. A fault a packet filter cannot make (a delay) is refused with why.
pub(super) fn script(outgoing: &[(Ipv4Addr, LinkFault)]) -> Result<String, String> {
    let mut rules = Vec::new();
    for &(to, fault) in outgoing {
        match fault {
            LinkFault::Healthy => {}
            LinkFault::Cut => rules.push(format!("ip daddr {to} drop")),
            LinkFault::Lossy { percent } => {
                assert!((1..=99).contains(&percent), "a loss of {percent}%");
                rules.push(format!(
                    "ip daddr {to} numgen random mod 100 < {percent} drop"
                ));
            }
            LinkFault::Duplicated { percent } => {
                assert!((1..=100).contains(&percent), "{percent}% duplicated");
                rules.push(format!(
                    "ip daddr {to} numgen random mod 100 < {percent} dup to {to}"
                ));
            }
            LinkFault::Delayed(_) => {
                return Err(
                    "a packet filter cannot delay packets (that takes tc netem, which \
                            this machine's kernel is built without); delays need the proxies"
                        .into(),
                )
            }
        }
    }
    // Declaring the table first makes deleting it succeed whether or not it was there.
    let mut script = format!("table ip {TABLE} {{}}\ndelete table ip {TABLE}\n");
    if !rules.is_empty() {
        script.push_str(&format!(
            "table ip {TABLE} {{\n  chain output {{\n    type filter hook output priority 0; \
             policy accept;\n"
        ));
        for rule in rules {
            script.push_str(&format!("    {rule}\n"));
        }
        script.push_str("  }\n}\n");
    }
    Ok(script)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::time::Duration;

    const A: Ipv4Addr = Ipv4Addr::new(10, 213, 0, 10);
    const B: Ipv4Addr = Ipv4Addr::new(10, 213, 0, 11);

    #[test]
    fn healthy_links_remove_the_table() {
        let script = script(&[(A, LinkFault::Healthy)]).unwrap();
        assert_eq!(
            script,
            "table ip interleave {}\ndelete table ip interleave\n"
        );
    }

    #[test]
    fn each_fault_is_a_rule_on_the_way_out() {
        let script = script(&[
            (A, LinkFault::Cut),
            (B, LinkFault::Lossy { percent: 20 }),
            (B, LinkFault::Duplicated { percent: 50 }),
        ])
        .unwrap();
        assert!(script.contains("hook output"));
        assert!(script.contains("ip daddr 10.213.0.10 drop\n"));
        assert!(script.contains("ip daddr 10.213.0.11 numgen random mod 100 < 20 drop\n"));
        assert!(
            script.contains("ip daddr 10.213.0.11 numgen random mod 100 < 50 dup to 10.213.0.11\n")
        );
    }

    #[test]
    fn a_delay_is_refused_with_why() {
        let error = script(&[(A, LinkFault::Delayed(Duration::from_millis(5)))]).unwrap_err();
        assert!(error.contains("netem"), "{error}");
    }
}
