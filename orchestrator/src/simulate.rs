//! Simulated latency for the offline model, search and fetch: a **simulation setting**
//! for crash tests and orchestration benchmarks, never a change to any answer.
//!
//! A [`Latency`] is fixed (`400ms`), uniform (`300ms..900ms`) or normal
//! (`600ms~200ms`: mean ~ standard deviation, clamped at zero). A [`ModelLatency`] adds a
//! generation speed to a model's time to first token (`800ms+60tok/s`). Every draw is
//! seeded by the call's identity (the request hash, the provider and query, the
//! document key) and the run's latency seed — never by draw order — so a parallel and a
//! sequential run of the same research see the same latency for every call.

use crate::clock::Clock;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::provider::{FetchOutcome, Fetcher, SearchHit, SearchOutcome, SearchProvider};

/// A latency distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Latency {
    Fixed(Duration),
    /// Uniform between the two bounds (inclusive of the lower one).
    Uniform(Duration, Duration),
    /// Normal with this mean and standard deviation, clamped at zero.
    Normal {
        mean: Duration,
        sd: Duration,
    },
}

impl Default for Latency {
    fn default() -> Self {
        Self::Fixed(Duration::ZERO)
    }
}

/// Why a latency setting could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct LatencyError(String);

/// Slowest simulated generation speed accepted.
pub const MIN_TOKENS_PER_S: f64 = 1.0;

/// Longest simulated latency accepted: anything above is a typo, not a simulation.
const MAX_LATENCY: Duration = Duration::from_secs(3600);

fn duration(text: &str, whole: &str) -> Result<Duration, LatencyError> {
    let parsed = humantime::parse_duration(text.trim()).map_err(|_| {
        LatencyError(format!(
            "{whole:?} is not a latency: {text:?} is not a duration like 400ms or 2s"
        ))
    })?;
    if parsed > MAX_LATENCY {
        return Err(LatencyError(format!(
            "{whole:?}: {text:?} is over an hour; simulated latencies are ms or s"
        )));
    }
    Ok(parsed)
}

impl Latency {
    /// Parse `400ms`, `300ms..900ms` or `600ms~200ms`.
    pub fn parse(text: &str) -> Result<Self, LatencyError> {
        let text = text.trim();
        if let Some((low, high)) = text.split_once("..") {
            let (low, high) = (duration(low, text)?, duration(high, text)?);
            if high < low {
                return Err(LatencyError(format!(
                    "{text:?}: the upper bound is below the lower one"
                )));
            }
            return Ok(Self::Uniform(low, high));
        }
        if let Some((mean, sd)) = text.split_once('~') {
            return Ok(Self::Normal {
                mean: duration(mean, text)?,
                sd: duration(sd, text)?,
            });
        }
        Ok(Self::Fixed(duration(text, text)?))
    }

    pub fn is_zero(&self) -> bool {
        match self {
            Self::Fixed(d) => d.is_zero(),
            Self::Uniform(low, high) => low.is_zero() && high.is_zero(),
            Self::Normal { mean, sd } => mean.is_zero() && sd.is_zero(),
        }
    }

    /// The mean of the distribution (for estimates and displays).
    pub fn mean(&self) -> Duration {
        match self {
            Self::Fixed(d) => *d,
            Self::Uniform(low, high) => (*low + *high) / 2,
            Self::Normal { mean, .. } => *mean,
        }
    }

    /// The latency of the call named by `identity`, under `seed`, in whole
    /// milliseconds (the timer's resolution).
    pub fn sample(&self, seed: u64, identity: &[u8]) -> Duration {
        whole_ms(self.draw(seed, identity))
    }

    fn draw(&self, seed: u64, identity: &[u8]) -> Duration {
        match self {
            Self::Fixed(d) => *d,
            Self::Uniform(low, high) => {
                let u = unit(seed, identity, 0);
                *low + (*high - *low).mul_f64(u)
            }
            Self::Normal { mean, sd } => {
                // Box–Muller from two independent draws of the same identity.
                let u1 = unit(seed, identity, 1).max(f64::MIN_POSITIVE);
                let u2 = unit(seed, identity, 2);
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let seconds = mean.as_secs_f64() + z * sd.as_secs_f64();
                Duration::from_secs_f64(seconds.max(0.0))
            }
        }
    }
}

impl fmt::Display for Latency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: &Duration| format!("{}ms", d.as_millis());
        match self {
            Self::Fixed(d) => write!(f, "{}", ms(d)),
            Self::Uniform(low, high) => write!(f, "{}..{}", ms(low), ms(high)),
            Self::Normal { mean, sd } => write!(f, "{}~{}", ms(mean), ms(sd)),
        }
    }
}

fn whole_ms(duration: Duration) -> Duration {
    Duration::from_millis(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

/// A uniform draw in [0, 1) from the seed, the identity and a stream number.
fn unit(seed: u64, identity: &[u8], stream: u8) -> f64 {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"deepr.latency.v1\0");
    hasher.update(&seed.to_le_bytes());
    hasher.update(&[stream]);
    hasher.update(identity);
    let bytes = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&bytes.as_bytes()[..8]);
    // 53 random bits → an exactly representable fraction.
    (u64::from_le_bytes(first) >> 11) as f64 / (1u64 << 53) as f64
}

/// A model's simulated latency: time to first token, plus completion tokens at a
/// generation speed when one is given (`800ms+60tok/s`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ModelLatency {
    pub first_token: Latency,
    /// Completion tokens per second; `None` = generation is instant.
    pub tokens_per_s: Option<f64>,
}

impl ModelLatency {
    /// Parse `800ms`, `800ms+60tok/s`, `500ms..1s+40tok/s`.
    pub fn parse(text: &str) -> Result<Self, LatencyError> {
        let text = text.trim();
        let (first, speed) = match text.split_once('+') {
            Some((first, speed)) => (first, Some(speed.trim())),
            None => (text, None),
        };
        let tokens_per_s = match speed {
            None => None,
            Some(speed) => {
                let number = speed.strip_suffix("tok/s").ok_or_else(|| {
                    LatencyError(format!(
                        "{text:?}: the generation speed must read like 60tok/s"
                    ))
                })?;
                let value: f64 = number.trim().parse().map_err(|_| {
                    LatencyError(format!("{text:?}: {number:?} is not a number of tokens"))
                })?;
                if !value.is_finite() || value < MIN_TOKENS_PER_S {
                    return Err(LatencyError(format!(
                        "{text:?}: the generation speed must be at least {MIN_TOKENS_PER_S} tok/s"
                    )));
                }
                Some(value)
            }
        };
        Ok(Self {
            first_token: Latency::parse(first)?,
            tokens_per_s,
        })
    }

    pub fn is_zero(&self) -> bool {
        self.first_token.is_zero() && self.tokens_per_s.is_none()
    }

    /// The latency of one call answering `completion_tokens` tokens.
    pub fn sample(&self, seed: u64, identity: &[u8], completion_tokens: u64) -> Duration {
        let generation = self
            .tokens_per_s
            .and_then(|speed| Duration::try_from_secs_f64(completion_tokens as f64 / speed).ok())
            .unwrap_or_default()
            .min(MAX_LATENCY);
        self.first_token.sample(seed, identity) + whole_ms(generation)
    }
}

impl fmt::Display for ModelLatency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.first_token)?;
        if let Some(speed) = self.tokens_per_s {
            write!(f, "+{speed}tok/s")?;
        }
        Ok(())
    }
}

/// A search provider that waits a simulated latency before each call, on `clock`.
pub struct SlowSearch {
    pub inner: Arc<dyn SearchProvider>,
    pub latency: Latency,
    pub seed: u64,
    pub clock: Arc<dyn Clock>,
}

#[async_trait]
impl SearchProvider for SlowSearch {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn weight(&self) -> f64 {
        self.inner.weight()
    }
    async fn search(&self, query: &str, limit: usize) -> SearchOutcome {
        let identity = format!("search\0{}\0{query}\0{limit}", self.inner.name());
        self.clock
            .sleep(self.latency.sample(self.seed, identity.as_bytes()))
            .await;
        self.inner.search(query, limit).await
    }
}

/// A fetcher that waits a simulated latency before each call, on `clock`.
pub struct SlowFetcher {
    pub inner: Arc<dyn Fetcher>,
    pub latency: Latency,
    pub seed: u64,
    pub clock: Arc<dyn Clock>,
}

#[async_trait]
impl Fetcher for SlowFetcher {
    async fn fetch(&self, hit: &SearchHit) -> FetchOutcome {
        let identity = format!("fetch\0{}", hit.doc_key);
        self.clock
            .sleep(self.latency.sample(self.seed, identity.as_bytes()))
            .await;
        self.inner.fetch(hit).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn parses_each_form_and_rejects_bad_ones() {
        assert_eq!(Latency::parse("400ms"), Ok(Latency::Fixed(ms(400))));
        assert_eq!(Latency::parse("2s"), Ok(Latency::Fixed(ms(2000))));
        assert_eq!(
            Latency::parse("300ms..900ms"),
            Ok(Latency::Uniform(ms(300), ms(900)))
        );
        assert_eq!(
            Latency::parse("600ms~200ms"),
            Ok(Latency::Normal {
                mean: ms(600),
                sd: ms(200)
            })
        );
        assert_eq!(
            ModelLatency::parse("800ms+60tok/s"),
            Ok(ModelLatency {
                first_token: Latency::Fixed(ms(800)),
                tokens_per_s: Some(60.0)
            })
        );
        for bad in [
            "",
            "fast",
            "-5ms",
            "900ms..300ms",
            "1s..",
            "400",
            "5h",
            "NaNs",
            "2000m",
            "1s~",
        ] {
            assert!(Latency::parse(bad).is_err(), "{bad:?} was accepted");
        }
        for bad in [
            "800ms+60",
            "800ms+0tok/s",
            "800ms+xtok/s",
            "+60tok/s",
            "800ms+1e-300tok/s",
            "800ms+0.5tok/s",
            "800ms+inftok/s",
        ] {
            assert!(ModelLatency::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn draws_depend_on_identity_not_order() {
        let latency = Latency::parse("300ms..900ms").unwrap_or_default();
        let a1 = latency.sample(7, b"a");
        let b = latency.sample(7, b"b");
        let a2 = latency.sample(7, b"a");
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(latency.sample(8, b"a"), a1, "the seed changes the draw");
        let draws: Vec<Duration> = (0..2000u32)
            .map(|i| latency.sample(1, &i.to_le_bytes()))
            .collect();
        assert!(draws.iter().all(|d| *d >= ms(300) && *d <= ms(900)));
        let mean = draws.iter().sum::<Duration>().as_secs_f64() / draws.len() as f64;
        assert!((mean - 0.6).abs() < 0.02, "uniform mean {mean}");
    }

    #[test]
    fn normal_draws_have_the_asked_mean_and_spread() {
        let latency = Latency::parse("1s~100ms").unwrap_or_default();
        let draws: Vec<f64> = (0..4000u32)
            .map(|i| latency.sample(3, &i.to_le_bytes()).as_secs_f64())
            .collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let var = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        assert!((mean - 1.0).abs() < 0.01, "mean {mean}");
        assert!((var.sqrt() - 0.1).abs() < 0.01, "sd {}", var.sqrt());
    }

    #[test]
    fn model_latency_adds_generation_time() {
        let latency = ModelLatency::parse("800ms+50tok/s").unwrap_or_default();
        assert_eq!(latency.sample(0, b"x", 100), ms(2800));
        assert_eq!(latency.to_string(), "800ms+50tok/s");
    }
}
