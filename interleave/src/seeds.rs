//! Which seeds a run covers: where the range starts (a number, or drawn at random and printed),
//! how many it holds, and the slice of it one shard of a CI matrix runs.

use std::fmt;
use std::str::FromStr;

/// The most shards a range can be cut into.
pub const MAX_SHARDS: u64 = 100_000;

/// Random first seeds stay below this, so a range of any size that fits in a run never wraps
/// and a printed seed stays short enough to type.
const RANDOM_FIRST_SEED_LIMIT: u64 = 1 << 40;

/// What is wrong with a range of seeds or a shard of it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SeedsError {
    /// `--first-seed` neither a number nor `random`.
    #[error("{0:?} is neither a seed (0 to {max}) nor `random`", max = u64::MAX)]
    NotASeed(String),
    /// `--shard` not `K/N` within the bounds.
    #[error("{0:?} is not a shard K/N with 1 <= K <= N <= {MAX_SHARDS}")]
    NotAShard(String),
    /// A range that passes the largest seed.
    #[error("seeds {first}.. plus {count} seeds passes the largest seed {max}", max = u64::MAX)]
    PastTheLargest {
        /// The first seed.
        first: u64,
        /// How many.
        count: u64,
    },
}

/// `--first-seed`: a seed, or `random` (a fresh range for each run, printed so it replays).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstSeed {
    /// This seed.
    Fixed(u64),
    /// A seed drawn from the operating system's randomness when the run starts.
    Random,
}

impl FromStr for FirstSeed {
    type Err = SeedsError;

    fn from_str(text: &str) -> Result<Self, SeedsError> {
        if text == "random" {
            return Ok(FirstSeed::Random);
        }
        text.parse()
            .map(FirstSeed::Fixed)
            .map_err(|_| SeedsError::NotASeed(text.to_string()))
    }
}

impl fmt::Display for FirstSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FirstSeed::Fixed(seed) => write!(f, "{seed}"),
            FirstSeed::Random => f.write_str("random"),
        }
    }
}

impl FirstSeed {
    /// The seed itself, drawing one if it is `random`.
    pub fn resolve(self) -> u64 {
        match self {
            FirstSeed::Fixed(seed) => seed,
            FirstSeed::Random => draw_seed(),
        }
    }
}

/// A seed from the operating system's randomness (the keys of std's `RandomState`): the one
/// place a run takes randomness it does not derive from its seed, and the seed is printed.
fn draw_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0);
    1 + hasher.finish() % (RANDOM_FIRST_SEED_LIMIT - 1)
}

/// `--shard K/N`: the K-th (from 1) of N disjoint, contiguous slices of a range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which slice, from 1.
    pub index: u64,
    /// How many slices.
    pub count: u64,
}

impl FromStr for Shard {
    type Err = SeedsError;

    fn from_str(text: &str) -> Result<Self, SeedsError> {
        let usage = || SeedsError::NotAShard(text.to_string());
        let (index, count) = text.split_once('/').ok_or_else(usage)?;
        let index: u64 = index.trim().parse().map_err(|_| usage())?;
        let count: u64 = count.trim().parse().map_err(|_| usage())?;
        if index == 0 || index > count || count > MAX_SHARDS {
            return Err(usage());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// The positions `0..len` of a list this shard takes: a contiguous slice; the slices of
    /// all shards are disjoint, cover the list, and differ in size by at most one.
    pub fn slice(self, len: u64) -> std::ops::Range<u64> {
        let start = |k: u64| {
            // k * len / count without overflow: len and count are at most u64::MAX and 1e5.
            ((u128::from(k) * u128::from(len)) / u128::from(self.count)) as u64
        };
        start(self.index - 1)..start(self.index)
    }
}

/// The seeds `first`, `first + 1`, ... (`count` of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRange {
    /// The first seed.
    pub first: u64,
    /// How many seeds; at least one, unless a shard's slice is empty.
    pub count: u64,
}

impl SeedRange {
    /// The range, or an error when it would pass the largest seed.
    pub fn new(first: u64, count: u64) -> Result<SeedRange, SeedsError> {
        if count > 0 && first.checked_add(count - 1).is_none() {
            return Err(SeedsError::PastTheLargest { first, count });
        }
        Ok(SeedRange { first, count })
    }

    /// This shard's slice of the range.
    pub fn shard(self, shard: Shard) -> SeedRange {
        let slice = shard.slice(self.count);
        SeedRange {
            first: self.first + slice.start,
            count: slice.end - slice.start,
        }
    }

    /// The `index`-th seed (from 0).
    pub fn nth(self, index: u64) -> u64 {
        assert!(
            index < self.count,
            "seed {index} of a range of {}",
            self.count
        );
        self.first + index
    }

    /// The last seed, if the range is not empty.
    pub fn last(self) -> Option<u64> {
        self.count.checked_sub(1).map(|offset| self.first + offset)
    }
}

impl fmt::Display for SeedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.last() {
            Some(last) => write!(f, "{}..={last}", self.first),
            None => f.write_str("(none)"),
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn the_shards_of_a_range_are_disjoint_contiguous_and_cover_it() {
        for (len, count) in [(10_000, 8), (7, 3), (3, 7), (1, 1), (u64::MAX, 100_000)] {
            let mut next = 0;
            let mut sizes = Vec::new();
            for index in 1..=count.min(50) {
                let slice = Shard { index, count }.slice(len);
                assert_eq!(slice.start, next, "shard {index}/{count} of {len}");
                next = slice.end;
                sizes.push(slice.end - slice.start);
            }
            if count <= 50 {
                assert_eq!(next, len);
                let (min, max) = (sizes.iter().min(), sizes.iter().max());
                assert!(max.unwrap() - min.unwrap() <= 1, "{sizes:?}");
            }
        }
        let range = SeedRange::new(1, 10_000).unwrap();
        let third = range.shard(Shard { index: 3, count: 8 });
        assert_eq!((third.first, third.count), (2_501, 1_250));
        assert_eq!(third.to_string(), "2501..=3750");
    }

    #[test]
    fn shard_and_first_seed_refuse_what_is_not_one() {
        for bad in ["0/8", "9/8", "8", "1/0", "a/b", "1/100001", "-1/2", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad:?}");
        }
        assert_eq!("2/8".parse(), Ok(Shard { index: 2, count: 8 }));
        assert_eq!("random".parse(), Ok(FirstSeed::Random));
        assert_eq!(
            "18446744073709551615".parse(),
            Ok(FirstSeed::Fixed(u64::MAX))
        );
        for bad in ["-1", "18446744073709551616", "Random", "1e3", ""] {
            assert!(bad.parse::<FirstSeed>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_range_that_would_pass_the_largest_seed_is_refused() {
        assert!(SeedRange::new(u64::MAX, 1).is_ok());
        assert!(SeedRange::new(u64::MAX, 2).is_err());
        assert!(SeedRange::new(u64::MAX - 9, 10).is_ok());
    }

    #[test]
    fn a_random_first_seed_leaves_room_for_any_range() {
        for _ in 0..100 {
            let seed = FirstSeed::Random.resolve();
            assert!((1..RANDOM_FIRST_SEED_LIMIT).contains(&seed));
        }
    }
}
