//! A latency histogram in the manner of HdrHistogram: logarithmic buckets,
//! each a power of two split into equal steps, so every recorded value is
//! kept to within 1/128 of itself whatever its size, in fixed memory.

use std::time::Duration;

/// Bits of each value kept exactly: values below 2^SUB_BITS microseconds
/// have a bucket each; above, each power of two has 2^(SUB_BITS-1) buckets.
const SUB_BITS: u32 = 8;
const HALF: u64 = 1 << (SUB_BITS - 1);
const BUCKETS: usize = (1 << SUB_BITS) + (64 - SUB_BITS as usize) * HALF as usize;

/// Durations in whole microseconds, by bucket.
#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64]>,
    total: u64,
    sum_us: u128,
    max_us: u64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("total", &self.total)
            .field("max_us", &self.max_us)
            .finish_non_exhaustive()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            total: 0,
            sum_us: 0,
            max_us: 0,
        }
    }
}

/// The bucket of `v`: `v` itself below 2^SUB_BITS, else its top SUB_BITS
/// bits placed after the buckets of the smaller powers of two.
fn bucket(v: u64) -> usize {
    if v < (1 << SUB_BITS) {
        return v as usize;
    }
    let magnitude = 63 - v.leading_zeros();
    let shift = magnitude - (SUB_BITS - 1);
    let top = v >> shift;
    (1 << SUB_BITS) + ((magnitude - SUB_BITS) as usize) * HALF as usize + (top - HALF) as usize
}

/// The largest value that falls in bucket `i` (HdrHistogram's "highest
/// equivalent value"), so a percentile never understates.
fn bucket_top(i: usize) -> u64 {
    let i = i as u64;
    if i < (1 << SUB_BITS) {
        return i;
    }
    let above = i - (1 << SUB_BITS);
    let magnitude = u64::from(SUB_BITS) + above / HALF;
    let top = HALF + above % HALF;
    let shift = magnitude - u64::from(SUB_BITS - 1);
    // The top bucket's end is 2^64, which wraps to 0: one less is u64::MAX.
    ((top + 1) << shift).wrapping_sub(1)
}

impl Histogram {
    pub fn record(&mut self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        if let Some(c) = self.counts.get_mut(bucket(us)) {
            *c += 1;
        }
        self.total += 1;
        self.sum_us += u128::from(us);
        self.max_us = self.max_us.max(us);
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn max(&self) -> Duration {
        Duration::from_micros(self.max_us)
    }

    pub fn mean(&self) -> Option<Duration> {
        let mean = self.sum_us.checked_div(u128::from(self.total))?;
        Some(Duration::from_micros(
            u64::try_from(mean).unwrap_or(u64::MAX),
        ))
    }

    /// The value at or below which `q` (0 to 1) of the samples fall,
    /// rounded up to its bucket's top (and never above the largest
    /// sample); `None` when nothing was recorded.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        if self.total == 0 {
            return None;
        }
        // The rank of the sample asked for, 1-based: at least the first.
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(Duration::from_micros(bucket_top(i).min(self.max_us)));
            }
        }
        Some(self.max())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn buckets_are_contiguous_and_each_value_lies_within_its_own() {
        let mut last = 0;
        for v in 0..100_000u64 {
            let b = bucket(v);
            assert!(b == last || b == last + 1, "{v}: bucket {b} after {last}");
            assert!(bucket_top(b) >= v, "{v} above its bucket's top");
            last = b;
        }
        for v in [u64::MAX / 3, u64::MAX - 1, u64::MAX] {
            let b = bucket(v);
            assert!(b < BUCKETS, "{v} in bucket {b}");
            assert!(bucket_top(b) >= v, "{v} above its bucket's top");
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn a_value_is_reported_within_one_part_in_128() {
        for v in [1u64, 200, 255, 256, 257, 1_000, 12_345, 999_999, 60_000_000] {
            let mut h = Histogram::default();
            h.record(us(v));
            h.record(us(v * 2));
            let p50 = h.quantile(0.5).expect("a sample").as_micros() as u64;
            assert!(p50 >= v && p50 - v <= v / 128, "{v} reported as {p50}");
        }
    }

    #[test]
    fn percentiles_are_ordered_and_the_top_one_is_the_largest_sample() {
        let mut h = Histogram::default();
        for v in 1..=10_000u64 {
            h.record(us(v * 7));
        }
        let p = |q| h.quantile(q).expect("samples");
        assert!(p(0.5) <= p(0.99) && p(0.99) <= p(0.999) && p(0.999) <= p(1.0));
        assert_eq!(p(1.0), us(70_000));
        assert_eq!(h.max(), us(70_000));
        let p50 = p(0.5).as_micros() as f64;
        assert!((p50 - 35_000.0).abs() / 35_000.0 < 0.01, "{p50}");
        assert_eq!(h.count(), 10_000);
    }

    #[test]
    fn an_empty_histogram_has_no_percentiles() {
        let h = Histogram::default();
        assert_eq!(h.quantile(0.5), None);
        assert_eq!(h.mean(), None);
    }
}
