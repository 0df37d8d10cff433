//! The packet filter of one host: what its links to the other hosts do, written as one
//! nftables table that replaces the last one in a single transaction (`nft -f`), or removes it
//! when every link is healthy. Links that hold packets back send them to a queue of the
//! nemesis's delayer instead, through iptables' `NFQUEUE` target (this machine's kernel has it,
//! but not nftables' own `queue`), in a filter table replaced whole by `iptables-restore`.

use super::delayer::queue_of;
use crate::link_fault::LinkFault;
use node::NodeId;
use std::net::Ipv4Addr;

/// The table's name in each namespace.
pub(super) const TABLE: &str = "interleave";

/// The `nft -f` script that makes the links out of a host do what `outgoing` says (the other
/// end's address and the fault): packets to a cut link dropped, a share of them dropped or sent
/// twice. Links that hold packets are left to [`queue_script`].
pub(super) fn script(outgoing: &[(Ipv4Addr, NodeId, LinkFault)]) -> String {
    let mut rules = Vec::new();
    for &(to, _, fault) in outgoing {
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
            LinkFault::Delayed(_) | LinkFault::Jittery { .. } | LinkFault::Reordered { .. } => {}
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
    script
}

/// The `iptables-restore` input that sends every packet of a link that holds packets to its
/// queue (numbered by the receiving node), replacing the host's filter table whole: an empty
/// table when no link holds packets.
pub(super) fn queue_script(outgoing: &[(Ipv4Addr, NodeId, LinkFault)]) -> String {
    let mut script = String::from("*filter\n:OUTPUT ACCEPT [0:0]\n");
    for &(to, node, fault) in outgoing {
        if fault.holds_packets() {
            script.push_str(&format!(
                "-A OUTPUT -d {to}/32 -j NFQUEUE --queue-num {}\n",
                queue_of(node)
            ));
        }
    }
    script.push_str("COMMIT\n");
    script
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::time::Duration;

    const A: Ipv4Addr = Ipv4Addr::new(10, 213, 0, 10);
    const B: Ipv4Addr = Ipv4Addr::new(10, 213, 0, 11);
    const TO_A: NodeId = NodeId(0);
    const TO_B: NodeId = NodeId(1);

    #[test]
    fn healthy_links_remove_the_table() {
        let script = script(&[(A, TO_A, LinkFault::Healthy)]);
        assert_eq!(
            script,
            "table ip interleave {}\ndelete table ip interleave\n"
        );
    }

    #[test]
    fn each_fault_is_a_rule_on_the_way_out() {
        let script = script(&[
            (A, TO_A, LinkFault::Cut),
            (B, TO_B, LinkFault::Lossy { percent: 20 }),
            (B, TO_B, LinkFault::Duplicated { percent: 50 }),
        ]);
        assert!(script.contains("hook output"));
        assert!(script.contains("ip daddr 10.213.0.10 drop\n"));
        assert!(script.contains("ip daddr 10.213.0.11 numgen random mod 100 < 20 drop\n"));
        assert!(
            script.contains("ip daddr 10.213.0.11 numgen random mod 100 < 50 dup to 10.213.0.11\n")
        );
    }

    #[test]
    fn links_that_hold_packets_go_to_their_queues_and_nowhere_else() {
        let by = Duration::from_millis(5);
        let outgoing = [
            (A, TO_A, LinkFault::Delayed(by)),
            (B, TO_B, LinkFault::Reordered { percent: 30, by }),
        ];
        assert!(!script(&outgoing).contains("daddr"));
        let queues = queue_script(&outgoing);
        assert!(queues.contains("-A OUTPUT -d 10.213.0.10/32 -j NFQUEUE --queue-num 0\n"));
        assert!(queues.contains("-A OUTPUT -d 10.213.0.11/32 -j NFQUEUE --queue-num 1\n"));
        let cut = queue_script(&[(A, TO_A, LinkFault::Cut)]);
        assert_eq!(cut, "*filter\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n");
    }
}
