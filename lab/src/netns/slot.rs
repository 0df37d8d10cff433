//! Whose hosts are whose: a run takes a slot (0 to [`SLOTS`] - 1) by locking the slot's file,
//! names everything it creates after the slot, and uses only the slot's addresses,
//! `10.213.<slot>.0/24`. The kernel drops a lock when its process dies, however it dies, so a
//! slot whose file is unlocked and whose names are still there belongs to a run that was killed:
//! the next run removes what it left ([`Slot::claim`]).

use super::command::run;
use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;

/// How many runs can have hosts at once on one machine.
pub(super) const SLOTS: u8 = 32;

/// Where the slots' lock files are.
const LOCK_DIR: &str = "/run/interleave-netns";

/// What every name of a run's begins with (`ilv3n0`: slot 3's namespace of node 0).
const PREFIX: &str = "ilv";

/// A slot this process holds (see the module's documentation). Dropping it lets it go.
pub(super) struct Slot {
    number: u8,
    _lock: File,
}

impl Slot {
    /// Takes the first free slot whose addresses nothing else on the machine uses, after
    /// removing whatever killed runs left in every free slot.
    pub(super) fn claim() -> io::Result<Slot> {
        std::fs::create_dir_all(LOCK_DIR)?;
        let addresses = run("ip", &["-4", "-o", "addr", "show"], None)?;
        let mut claimed = None;
        for number in 0..SLOTS {
            let Some(lock) = try_lock(number)? else {
                continue;
            };
            let slot = Slot {
                number,
                _lock: lock,
            };
            slot.remove_leftovers()?;
            if claimed.is_none() && !slot.addresses_taken(&addresses) {
                claimed = Some(slot);
            }
        }
        claimed.ok_or_else(|| {
            io::Error::other(format!(
                "no free slot for hosts: {SLOTS} runs hold one, or 10.213.0.0/16 is in use on \
                 this machine"
            ))
        })
    }

    /// Removes what killed runs left in every slot no process holds now; returns how many
    /// names it removed.
    pub(super) fn remove_leftovers_of_free_slots() -> io::Result<usize> {
        std::fs::create_dir_all(LOCK_DIR)?;
        let mut removed = 0;
        for number in 0..SLOTS {
            if let Some(lock) = try_lock(number)? {
                removed += Slot {
                    number,
                    _lock: lock,
                }
                .remove_leftovers()?;
            }
        }
        Ok(removed)
    }

    /// The slot's number.
    pub(super) fn number(&self) -> u8 {
        self.number
    }

    /// The network namespace of `node`.
    pub(super) fn namespace(&self, node: u32) -> String {
        format!("{PREFIX}{}n{node}", self.number)
    }

    /// The bridge every host's link is on (in the root namespace).
    pub(super) fn bridge(&self) -> String {
        format!("{PREFIX}{}br", self.number)
    }

    /// The root namespace's end of `node`'s link.
    pub(super) fn host_link(&self, node: u32) -> String {
        format!("{PREFIX}{}v{node}", self.number)
    }

    /// The root namespace's address on the bridge, where the clients and the nemesis are.
    pub(super) fn bridge_address(&self) -> Ipv4Addr {
        Ipv4Addr::new(10, 213, self.number, 1)
    }

    /// `node`'s address.
    pub(super) fn address(&self, node: u32) -> Ipv4Addr {
        assert!(node < 200, "node {node} has no address in a /24");
        Ipv4Addr::new(10, 213, self.number, 10 + node as u8)
    }

    /// Whether a device other than this slot's bridge has an address of the slot's range
    /// (`ip -4 -o addr show` lines: `3: eth0    inet 10.0.0.2/24 ...`).
    fn addresses_taken(&self, listing: &str) -> bool {
        let range = format!("10.213.{}.", self.number);
        listing.lines().any(|line| {
            let mut fields = line.split_whitespace();
            let device = fields.nth(1).unwrap_or("");
            line.contains(&format!("inet {range}")) && device != self.bridge()
        })
    }

    /// Removes what a killed run left in this slot (see [`Slot::remove_names`]), saying so.
    fn remove_leftovers(&self) -> io::Result<usize> {
        let removed = self.remove_names()?;
        if removed > 0 {
            tracing::warn!(
                "removed {removed} namespaces and links a killed run left in slot {}",
                self.number
            );
        }
        Ok(removed)
    }

    /// Removes this slot's namespaces (killing any process still in one), links and bridge.
    /// Returns how many names it removed.
    pub(super) fn remove_names(&self) -> io::Result<usize> {
        let mut removed = 0;
        let namespace_prefix = format!("{PREFIX}{}n", self.number);
        for name in namespaces()? {
            if name.strip_prefix(&namespace_prefix).is_some_and(is_number) {
                kill_processes_in(&name)?;
                run("ip", &["netns", "del", &name], None)?;
                removed += 1;
            }
        }
        let link_prefix = format!("{PREFIX}{}v", self.number);
        for name in links()? {
            let ours =
                name == self.bridge() || name.strip_prefix(&link_prefix).is_some_and(is_number);
            if ours {
                // A host's link goes away with its namespace, soon after the namespace does: one
                // listed a moment ago may be gone already.
                match run("ip", &["link", "del", &name], None) {
                    Ok(_) => removed += 1,
                    Err(_) if !links()?.contains(&name) => {}
                    Err(error) => return Err(error),
                }
            }
        }
        Ok(removed)
    }
}

/// Locks slot `number`'s file; `None` if another process holds it.
fn try_lock(number: u8) -> io::Result<Option<File>> {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(format!("{LOCK_DIR}/slot-{number}.lock"))?;
    // SAFETY: a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(Some(file));
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(None)
    } else {
        Err(error)
    }
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit())
}

/// Every named network namespace (`ip netns list` lines: `name (id: 3)` or `name`).
pub(super) fn namespaces() -> io::Result<Vec<String>> {
    Ok(run("ip", &["netns", "list"], None)?
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect())
}

/// Every link of the root namespace (`ip -o link show` lines: `7: name@if2: <...> ...`).
pub(super) fn links() -> io::Result<Vec<String>> {
    Ok(run("ip", &["-o", "link", "show"], None)?
        .lines()
        .filter_map(|line| line.split(": ").nth(1))
        .map(|name| name.split('@').next().unwrap_or(name).to_string())
        .collect())
}

/// Kills every process in the namespace `name` with SIGKILL.
fn kill_processes_in(name: &str) -> io::Result<()> {
    for pid in run("ip", &["netns", "pids", name], None)?.split_whitespace() {
        if let Ok(pid) = pid.parse::<libc::pid_t>() {
            // SAFETY: a plain signal; a process that is gone already makes it fail harmlessly.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    Ok(())
}

/// Whether any name of any slot is on this machine (for tests: nothing left behind).
pub(super) fn any_left() -> io::Result<Vec<String>> {
    let ours = |name: &String| {
        name.strip_prefix(PREFIX)
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    };
    let mut left: Vec<String> = namespaces()?.into_iter().filter(ours).collect();
    left.extend(links()?.into_iter().filter(ours));
    Ok(left)
}
