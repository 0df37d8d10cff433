//! The machine's own fsync rate, the ceiling a storage that syncs every save runs into: appends
//! of 4 KiB to one file, each followed by `fdatasync`, in the temporary directory (the disk the
//! servers of `growth` write to), for about two seconds.
//!
//! ```sh
//! cargo run --release -p storage --example fsync_rate
//! ```

use std::io::Write;
use std::time::{Duration, Instant};

fn main() -> std::io::Result<()> {
    let path = std::env::temp_dir().join(format!("interleave-fsync-rate-{}", std::process::id()));
    let mut file = std::fs::File::create(&path)?;
    let block = [0x5au8; 4096];
    #[allow(clippy::disallowed_methods)] // a real-time measurement
    let started = Instant::now();
    let mut syncs = 0u64;
    let mut slowest = Duration::ZERO;
    while started.elapsed() < Duration::from_secs(2) {
        #[allow(clippy::disallowed_methods)] // a real-time measurement
        let one = Instant::now();
        file.write_all(&block)?;
        file.sync_data()?;
        slowest = slowest.max(one.elapsed());
        syncs += 1;
    }
    let elapsed = started.elapsed();
    drop(file);
    std::fs::remove_file(&path)?;
    println!(
        "{syncs} appends of 4 KiB, each fdatasync'ed, in {:.2} s: {:.0} fsyncs/s (mean {:.3} ms, slowest {:.3} ms), in {}",
        elapsed.as_secs_f64(),
        syncs as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e3 / syncs as f64,
        slowest.as_secs_f64() * 1e3,
        std::env::temp_dir().display()
    );
    Ok(())
}
