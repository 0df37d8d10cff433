//! Hosts through the real kernel: namespaces, a bridge, nftables. Where root, `ip` or `nft` is
//! missing: skipped, saying why, on a user's machine, and failed in CI (`realtools`).

use super::reach::in_namespace;
use super::slot::Slot;
use super::*;
use server::real_time::{now, sleep_until};
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::Duration;

fn can_run(test: &str) -> bool {
    realtools::require(test, available())
}

fn names_of(slot: u8) -> Vec<String> {
    let prefix = format!("ilv{slot}");
    names_on_this_machine()
        .unwrap()
        .into_iter()
        .filter(|name| {
            name.strip_prefix(&prefix)
                .is_some_and(|rest| rest.starts_with(['n', 'v', 'b']))
        })
        .collect()
}

/// A listener in `node`'s namespace on its address.
fn listen(hosts: &Hosts, node: NodeId) -> TcpListener {
    let file = hosts.namespace_file(node).unwrap();
    let address = SocketAddr::from((hosts.address(node), 0));
    in_namespace(&file, || TcpListener::bind(address)).unwrap()
}

/// Connects from `from`'s namespace to `to`.
fn connect_from(hosts: &Hosts, from: NodeId, to: SocketAddr) -> io::Result<TcpStream> {
    let file = hosts.namespace_file(from).unwrap();
    in_namespace(&file, || {
        TcpStream::connect_timeout(&to, Duration::from_millis(500))
    })
}

#[test]
fn hosts_reach_each_other_and_leave_nothing_when_dropped() {
    if !can_run("hosts_reach_each_other_and_leave_nothing_when_dropped") {
        return;
    }
    let hosts = Hosts::create(3, 1).unwrap();
    let slot = hosts.slot();
    let names = names_of(slot);
    // Three namespaces, three links on the bridge, the bridge.
    assert_eq!(names.len(), 7, "{names:?}");
    assert_eq!(hosts.address(NodeId(2)), Ipv4Addr::new(10, 213, slot, 12));
    drop(hosts);
    assert_eq!(names_of(slot), Vec::<String>::new());
}

#[test]
fn a_cut_link_drops_packets_silently_until_healed() {
    if !can_run("a_cut_link_drops_packets_silently_until_healed") {
        return;
    }
    let (a, b) = (NodeId(0), NodeId(1));
    let mut hosts = Hosts::create(2, 1).unwrap();
    let (listener_b, listener_a) = (listen(&hosts, b), listen(&hosts, a));
    let (at_b, at_a) = (
        listener_b.local_addr().unwrap(),
        listener_a.local_addr().unwrap(),
    );
    connect_from(&hosts, a, at_b).unwrap();
    hosts.set_links(&[(a, b, LinkFault::Cut)]).unwrap();
    assert_eq!(hosts.link(a, b), LinkFault::Cut);
    // Dropped, not refused: the connection hangs until its timeout.
    let error = connect_from(&hosts, a, at_b).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::TimedOut, "{error}");
    // A connection needs packets both ways: b's handshake with a gets no answer either.
    let error = connect_from(&hosts, b, at_a).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::TimedOut, "{error}");
    // The root namespace (the clients) still reaches both.
    TcpStream::connect_timeout(&at_b, Duration::from_millis(500)).unwrap();
    hosts.heal().unwrap();
    assert!(hosts.faulty_links().is_empty());
    connect_from(&hosts, a, at_b).unwrap();
    connect_from(&hosts, b, at_a).unwrap();
}

/// How many of `count` datagrams sent from `a` to `b` arrive.
fn datagrams_through(hosts: &Hosts, a: NodeId, b: NodeId, count: usize) -> usize {
    let receiver = {
        let address = SocketAddr::from((hosts.address(b), 0));
        in_namespace(&hosts.namespace_file(b).unwrap(), || {
            UdpSocket::bind(address)
        })
        .unwrap()
    };
    let sender = {
        let address = SocketAddr::from((hosts.address(a), 0));
        in_namespace(&hosts.namespace_file(a).unwrap(), || {
            UdpSocket::bind(address)
        })
        .unwrap()
    };
    receiver.set_nonblocking(true).unwrap();
    let to = receiver.local_addr().unwrap();
    let mut received = 0;
    let mut buffer = [0; 16];
    let mut drain = |received: &mut usize| {
        while receiver.recv(&mut buffer).is_ok() {
            *received += 1;
        }
    };
    for _ in 0..count {
        // A dropped datagram fails its send with EPERM: the filter said no on the way out.
        let _ = sender.send_to(b"x", to);
        drain(&mut received);
    }
    receiver.set_nonblocking(false).unwrap();
    receiver
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    while receiver.recv(&mut buffer).is_ok() {
        received += 1;
    }
    received
}

#[test]
fn lossy_and_duplicating_links_act_on_a_share_of_the_packets() {
    if !can_run("lossy_and_duplicating_links_act_on_a_share_of_the_packets") {
        return;
    }
    let (a, b) = (NodeId(0), NodeId(1));
    let mut hosts = Hosts::create(2, 1).unwrap();
    assert_eq!(datagrams_through(&hosts, a, b, 2000), 2000);
    hosts
        .set_links(&[(a, b, LinkFault::Lossy { percent: 30 })])
        .unwrap();
    let through = datagrams_through(&hosts, a, b, 2000);
    assert!(
        (1200..=1600).contains(&through),
        "{through} of 2000 with 30% lost"
    );
    // The other direction is untouched.
    assert_eq!(datagrams_through(&hosts, b, a, 500), 500);
    hosts
        .set_links(&[(a, b, LinkFault::Duplicated { percent: 50 })])
        .unwrap();
    let through = datagrams_through(&hosts, a, b, 2000);
    assert!(
        (2700..=3300).contains(&through),
        "{through} from 2000 with 50% twice"
    );
}

/// Sends `count` numbered datagrams from `a` to `b`, one a millisecond; returns the numbers in
/// the order they arrived and how long each took.
fn arrivals(hosts: &Hosts, a: NodeId, b: NodeId, count: u32) -> Vec<(u32, Duration)> {
    let bind = |node: NodeId| {
        let address = SocketAddr::from((hosts.address(node), 0));
        in_namespace(&hosts.namespace_file(node).unwrap(), || {
            UdpSocket::bind(address)
        })
        .unwrap()
    };
    let (receiver, sender) = (bind(b), bind(a));
    receiver.set_nonblocking(true).unwrap();
    let to = receiver.local_addr().unwrap();
    let mut sent_at = Vec::new();
    let mut arrived = Vec::new();
    let receive = |sent_at: &[std::time::Instant], arrived: &mut Vec<(u32, Duration)>| {
        let mut buffer = [0; 4];
        while let Ok(4) = receiver.recv(&mut buffer) {
            let number = u32::from_be_bytes(buffer);
            arrived.push((number, now() - sent_at[number as usize]));
        }
    };
    for number in 0..count {
        sent_at.push(now());
        sender.send_to(&number.to_be_bytes(), to).unwrap();
        receive(&sent_at, &mut arrived);
        sleep_until(sent_at[number as usize] + Duration::from_millis(1));
    }
    let deadline = now() + Duration::from_secs(2);
    while arrived.len() < count as usize && now() < deadline {
        receive(&sent_at, &mut arrived);
        sleep_until(now() + Duration::from_millis(1));
    }
    arrived
}

/// How many datagrams arrived after one numbered higher.
fn overtaken(arrived: &[(u32, Duration)]) -> usize {
    let mut highest = 0;
    let mut count = 0;
    for &(number, _) in arrived {
        if number < highest {
            count += 1;
        }
        highest = highest.max(number);
    }
    count
}

#[test]
fn links_that_hold_packets_delay_jitter_and_reorder_them_until_healed() {
    let test = "links_that_hold_packets_delay_jitter_and_reorder_them_until_healed";
    if !realtools::require(test, can_hold_packets()) {
        return;
    }
    let (a, b) = (NodeId(0), NodeId(1));
    let mut hosts = Hosts::create(2, 1).unwrap();
    let ms = Duration::from_millis;
    let slowest = |arrived: &[(u32, Duration)]| arrived.iter().map(|&(_, d)| d).max().unwrap();
    let fastest = |arrived: &[(u32, Duration)]| arrived.iter().map(|&(_, d)| d).min().unwrap();

    let healthy = arrivals(&hosts, a, b, 200);
    assert_eq!((healthy.len(), overtaken(&healthy)), (200, 0));
    assert!(slowest(&healthy) < ms(50), "{:?}", slowest(&healthy));

    hosts
        .set_links(&[(a, b, LinkFault::Delayed(ms(120)))])
        .unwrap();
    let delayed = arrivals(&hosts, a, b, 200);
    assert_eq!((delayed.len(), overtaken(&delayed)), (200, 0));
    assert!(fastest(&delayed) >= ms(120), "{:?}", fastest(&delayed));
    // The other direction is untouched.
    let back = arrivals(&hosts, b, a, 50);
    assert!(slowest(&back) < ms(50), "{:?}", slowest(&back));

    let jitter = LinkFault::Jittery {
        by: ms(60),
        jitter: ms(50),
    };
    hosts.set_links(&[(a, b, jitter)]).unwrap();
    let jittered = arrivals(&hosts, a, b, 200);
    assert_eq!(jittered.len(), 200);
    assert!(
        overtaken(&jittered) > 20,
        "{} overtaken",
        overtaken(&jittered)
    );
    assert!(fastest(&jittered) >= ms(10) && slowest(&jittered) < ms(160));

    let reorder = LinkFault::Reordered {
        percent: 50,
        by: ms(30),
    };
    hosts.set_links(&[(a, b, reorder)]).unwrap();
    let reordered = arrivals(&hosts, a, b, 200);
    assert_eq!(reordered.len(), 200);
    let held = reordered.iter().filter(|&&(_, d)| d >= ms(30)).count();
    assert!((60..=140).contains(&held), "{held} of 200 held");
    assert!(
        overtaken(&reordered) > 20,
        "{} overtaken",
        overtaken(&reordered)
    );

    hosts.heal().unwrap();
    let healed = arrivals(&hosts, a, b, 200);
    assert_eq!((healed.len(), overtaken(&healed)), (200, 0));
    assert!(slowest(&healed) < ms(50), "{:?}", slowest(&healed));
}

#[test]
fn what_a_killed_run_left_in_its_slot_is_removed() {
    if !can_run("what_a_killed_run_left_in_its_slot_is_removed") {
        return;
    }
    let slot = Slot::claim().unwrap();
    let number = slot.number();
    // What a run killed between making its hosts and removing them leaves.
    let namespace = slot.namespace(0);
    command::run("ip", &["netns", "add", &namespace], None).unwrap();
    command::run(
        "ip",
        &["link", "add", &slot.bridge(), "type", "bridge"],
        None,
    )
    .unwrap();
    command::run(
        "ip",
        &[
            "link",
            "add",
            &slot.host_link(0),
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            &namespace,
        ],
        None,
    )
    .unwrap();
    assert_eq!(names_of(number).len(), 3);
    // The link inside the namespace goes with it, and its other end with it.
    assert!(slot.remove_names().unwrap() >= 2);
    assert_eq!(names_of(number), Vec::<String>::new());
}
