//! The loop that keeps this instance's shard leases: it renews them, lets
//! go of the games of shards it lost, takes free shards up to its fair
//! share (loading their games, whether or not anyone asks for them), hands
//! shards over when others have fewer, and on shutdown hands everything
//! over before the process exits.

use std::collections::HashSet;
use std::time::Instant;

use tracing::Instrument as _;
use ttakji_platform::authorities::SHARDS;
use ttakji_platform::bus;
use ttakji_platform::shutdown::Shutdown;

use crate::ownership::{Leases, Ownership};
use crate::registry::Registry;

/// The most shards handed over in one renewal when others have fewer: the
/// hand-over is spread over a few renewals so games move a few at a time.
const HAND_OVER_AT_ONCE: usize = 8;

/// Keeps the leases until shutdown, then hands every shard over.
pub async fn keep(leases: Leases, ownership: Ownership, registry: Registry, shutdown: Shutdown) {
    let mut stop = shutdown.clone();
    let mut every = tokio::time::interval(leases.config().renew_every());
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.wait() => break,
            _ = every.tick() => {}
        }
        round(&leases, &ownership, &registry, &shutdown).await;
    }
    hand_over_all(&leases, &ownership, &registry).await;
}

/// One renewal and what follows from it.
async fn round(leases: &Leases, ownership: &Ownership, registry: &Registry, shutdown: &Shutdown) {
    let ttl = leases.config().ttl();
    let held = ownership.held();
    let sent = Instant::now();
    let serving = ownership.within_window(sent);
    let renewal = match leases.renew(&held, &serving).await {
        Ok(renewal) => renewal,
        Err(e) => {
            // The serving window runs out on its own if this goes on.
            metrics::counter!("ttakji_lease_renewals_total", "outcome" => "failed").increment(1);
            tracing::warn!(error = %e, "shard leases not renewed");
            return;
        }
    };
    let lost: HashSet<u32> = renewal.lost.iter().copied().collect();
    let kept: Vec<u32> = held.iter().copied().filter(|s| !lost.contains(s)).collect();
    ownership.renewed(&kept, sent, ttl);
    ownership.saw_owners(&renewal.owners);
    metrics::counter!("ttakji_lease_renewals_total", "outcome" => "renewed")
        .increment(kept.len() as u64);
    if !lost.is_empty() {
        metrics::counter!("ttakji_lease_renewals_total", "outcome" => "lost")
            .increment(lost.len() as u64);
        tracing::warn!(shards = %listed(&renewal.lost), "shard leases lost; their games are dropped here");
        for &s in &renewal.lost {
            ownership.dropped(s);
        }
        registry.unload_shards(&renewal.lost).await;
    }

    let fair = SHARDS.div_ceil(renewal.members.max(1)) as usize;
    if kept.len() < fair {
        let mut free: Vec<u32> = (0..SHARDS)
            .filter(|&s| renewal.owners[s as usize].is_none() && !held.contains(&s))
            .collect();
        // Each instance tries the free shards in its own order, so two
        // taking over at once mostly take different ones.
        free.sort_by_key(|&s| {
            ttakji_platform::authorities::shard_of(&format!("{}{s}", leases.member()))
        });
        free.truncate(fair - kept.len());
        if !free.is_empty() {
            acquire(leases, ownership, registry, shutdown, &free).await;
        }
    } else if kept.len() > fair {
        let extra: Vec<u32> = kept[fair..]
            .iter()
            .copied()
            .take(HAND_OVER_AT_ONCE)
            .collect();
        hand_over(leases, ownership, registry, &extra).await;
    } else if kept.len() >= least_held(&renewal) + 2 && renewal.owners.iter().all(Option::is_some) {
        // Everyone at or under the fair share, but one instance two or
        // more short and nothing free: give it one.
        hand_over(leases, ownership, registry, &kept[kept.len() - 1..]).await;
    }
    metrics::gauge!("ttakji_shards_owned").set(ownership.held().len() as f64);
}

/// The fewest shards any live instance holds (0 when one holds none).
/// Shard numbers as a log field: `3,17,40`.
fn listed(shards: &[u32]) -> String {
    shards
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn least_held(renewal: &crate::ownership::leases::Renewal) -> usize {
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for owner in renewal.owners.iter().flatten() {
        *counts.entry(owner.as_str()).or_default() += 1;
    }
    if counts.len() < renewal.members as usize {
        0
    } else {
        counts.values().copied().min().unwrap_or(0)
    }
}

/// Acquires the free `shards` it can and loads their games in the background
/// (renewals go on meanwhile).
async fn acquire(
    leases: &Leases,
    ownership: &Ownership,
    registry: &Registry,
    shutdown: &Shutdown,
    shards: &[u32],
) {
    let sent = Instant::now();
    let taken = match leases.acquire(shards).await {
        Ok(taken) => taken,
        Err(e) => {
            tracing::warn!(error = %e, "free shards not acquired");
            return;
        }
    };
    if taken.is_empty() {
        return;
    }
    let ttl = leases.config().ttl();
    for t in &taken {
        ownership.acquired(t.shard, sent, ttl, t.unowned_ms);
    }
    let shards: Vec<u32> = taken.iter().map(|t| t.shard).collect();
    // Callers send calls about these games here at once, and give up a
    // try still waiting on their last holder.
    let announced = ttakji_proto::internal::v1::ShardsTaken {
        owner: ownership.me().to_owned(),
        shards: shards.clone(),
    };
    if let Err(e) = registry
        .bus()
        .publish(&bus::shards_taken(), &announced)
        .await
    {
        tracing::warn!(error = %e, "shards taken not announced; callers learn from answers");
    }
    let longest_unowned = taken.iter().map(|t| t.unowned_ms).max().unwrap_or(0);
    let span = tracing::info_span!("takeover", shards = %listed(&shards), unowned_ms = longest_unowned, games = tracing::field::Empty);
    let registry = registry.clone();
    let ownership = ownership.clone();
    shutdown.spawn(
        async move {
            let started = Instant::now();
            let games = registry.load_shards(&shards).await;
            for &s in &shards {
                ownership.loaded(s);
            }
            tracing::Span::current().record("games", games);
            metrics::histogram!("ttakji_takeover_seconds").record(started.elapsed().as_secs_f64());
            tracing::info!(games, "shards taken over");
        }
        .instrument(span),
    );
}

/// Stops serving `shards`, lets their games go and releases the leases.
async fn hand_over(leases: &Leases, ownership: &Ownership, registry: &Registry, shards: &[u32]) {
    for &s in shards {
        ownership.dropped(s);
    }
    registry.unload_shards(shards).await;
    if let Err(e) = leases.release(shards).await {
        tracing::warn!(error = %e, "shard leases not released; they lapse instead");
    }
    tracing::info!(shards = %listed(shards), "shards handed over");
}

/// On shutdown: leaves the members, so the others take everything, and
/// hands every shard over once its games have stopped.
async fn hand_over_all(leases: &Leases, ownership: &Ownership, registry: &Registry) {
    ownership.drain();
    if let Err(e) = leases.leave().await {
        tracing::warn!(error = %e, "membership not withdrawn; it lapses instead");
    }
    let held = ownership.held();
    hand_over(leases, ownership, registry, &held).await;
    metrics::gauge!("ttakji_shards_owned").set(0.0);
}
