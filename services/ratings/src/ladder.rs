//! The leaderboard: from the store alone (one process), or from a Redis
//! sorted set per board size, checked against the store's count of the
//! ladder as each page is read and rebuilt from the store when they differ
//! (Redis restarted or flushed). Either way a page costs one store round
//! trip, however long it is.

use std::collections::HashMap;
use std::sync::Arc;

use tonic::Status;
use ttakji_platform::redis_target::SharedConnection;
use ttakji_platform::store::Database;

use crate::store::{self, Standing};
use crate::store_status;

#[cfg(test)]
mod contract;

/// The leaderboard's default key prefix.
pub const LADDER_PREFIX: &str = "ttakji:ladder:";

/// Where the leaderboard is read from: the store, and Redis's sorted sets
/// (a connection and the key prefix) when there is one.
#[derive(Clone)]
pub(crate) struct Ladder {
    db: Database,
    redis: Option<(SharedConnection, Arc<str>)>,
}

fn ladder_key(prefix: &str, board_size: i64) -> String {
    format!("{prefix}{board_size}")
}

impl Ladder {
    pub(crate) fn new(db: Database, redis: Option<(SharedConnection, Arc<str>)>) -> Ladder {
        Ladder { db, redis }
    }

    /// Puts players' new ratings on the Redis ladder, if there is one. A
    /// failure is only logged: the next rebuild (a set that disagrees with
    /// the store's count) or update corrects it.
    pub(crate) async fn record(&self, board_size: i64, standings: &[Standing]) {
        let Some((conn, prefix)) = &self.redis else {
            return;
        };
        let mut conn = conn.clone();
        let mut pipe = redis::pipe();
        for s in standings {
            pipe.cmd("ZADD")
                .arg(ladder_key(prefix, board_size))
                .arg(s.rating)
                .arg(&s.user_id);
        }
        if let Err(e) = pipe.query_async::<()>(&mut conn).await {
            tracing::warn!(error = %e, "leaderboard not updated");
        }
    }

    /// The first `top` places of the ladder, and the `neighbours` places
    /// either side of `around`'s when that player is on it: one store round
    /// trip, however long the page. From Redis, the set is checked against
    /// the ladder's length the same statement reads, and rebuilt from the
    /// store when they differ (Redis restarted or flushed).
    pub(crate) async fn page(
        &self,
        board_size: i64,
        top: usize,
        around: Option<(&str, usize)>,
    ) -> Result<Page, Status> {
        let Some((conn, prefix)) = &self.redis else {
            let rows = store::ladder_page(&self.db, board_size, top, around)
                .await
                .map_err(store_status)?;
            return Ok(Page::from_places(rows, top, around));
        };
        let mut conn = conn.clone();
        let key = ladder_key(prefix, board_size);
        let mut rebuilt = false;
        loop {
            let mut pipe = redis::pipe();
            pipe.cmd("ZCARD").arg(&key);
            // ZREVRANGE 0 -1 would be the whole set.
            pipe.cmd("ZREVRANGE").arg(&key).arg(0).arg(top.max(1) - 1);
            pipe.cmd("ZREVRANK")
                .arg(&key)
                .arg(around.map_or("", |a| a.0));
            let (count, mut top_ids, rank): (u64, Vec<String>, Option<usize>) =
                pipe.query_async(&mut conn).await.map_err(redis_status)?;
            top_ids.truncate(top);
            let (start, around_ids) = match (around, rank) {
                (Some((_, n)), Some(rank)) => {
                    let start = rank.saturating_sub(n);
                    let ids: Vec<String> = redis::cmd("ZREVRANGE")
                        .arg(&key)
                        .arg(start)
                        .arg(rank + n)
                        .query_async(&mut conn)
                        .await
                        .map_err(redis_status)?;
                    (start, ids)
                }
                _ => (0, Vec::new()),
            };
            let mut wanted = top_ids.clone();
            wanted.extend(
                around_ids
                    .iter()
                    .filter(|id| !top_ids.contains(id))
                    .cloned(),
            );
            let (total, standings) = store::standings_of(&self.db, board_size, &wanted)
                .await
                .map_err(store_status)?;
            if total != count && !rebuilt {
                rebuilt = true;
                self.rebuild(&mut conn, &key, board_size).await?;
                continue;
            }
            let by_id: HashMap<&str, &Standing> =
                standings.iter().map(|s| (s.user_id.as_str(), s)).collect();
            let placed = |first: usize, ids: &[String]| -> Vec<(u32, Standing)> {
                ids.iter()
                    .enumerate()
                    .filter_map(|(i, id)| {
                        let s = by_id.get(id.as_str())?;
                        Some((place(first + i + 1), (*s).clone()))
                    })
                    .collect()
            };
            return Ok(Page {
                top: placed(0, &top_ids),
                around: placed(start, &around_ids),
                me: rank.and_then(|rank| {
                    let s = by_id.get(around?.0)?;
                    Some((place(rank + 1), (*s).clone()))
                }),
            });
        }
    }

    /// Writes the whole ladder of a board size into its Redis set.
    async fn rebuild(
        &self,
        conn: &mut ttakji_platform::redis_target::SharedConnection,
        key: &str,
        board_size: i64,
    ) -> Result<(), Status> {
        let all = store::ladder(&self.db, board_size)
            .await
            .map_err(store_status)?;
        tracing::warn!(
            players = all.len(),
            key,
            "rebuilding the leaderboard from the store"
        );
        let mut pipe = redis::pipe();
        pipe.atomic().cmd("DEL").arg(key);
        if !all.is_empty() {
            let cmd = pipe.cmd("ZADD").arg(key);
            for s in &all {
                cmd.arg(s.rating).arg(&s.user_id);
            }
        }
        pipe.query_async::<()>(conn).await.map_err(redis_status)
    }
}

/// What [`Ladder::page`] read: the top places, the places around the
/// player asked about, and that player's own place.
#[derive(Debug, Default)]
pub(crate) struct Page {
    pub(crate) top: Vec<(u32, Standing)>,
    pub(crate) around: Vec<(u32, Standing)>,
    pub(crate) me: Option<(u32, Standing)>,
}

impl Page {
    /// Sorts the rows of [`store::ladder_page`] into a page.
    fn from_places(rows: Vec<(u64, Standing)>, top: usize, around: Option<(&str, usize)>) -> Page {
        let me = around.and_then(|(id, _)| {
            rows.iter()
                .find(|(_, s)| s.user_id == id)
                .map(|(p, s)| (*p, s.clone()))
        });
        let mut page = Page::default();
        for (p, s) in rows {
            let index = usize::try_from(p).unwrap_or(usize::MAX);
            if let (Some((me_place, _)), Some((_, n))) = (&me, around)
                && p.abs_diff(*me_place) <= n as u64
            {
                page.around.push((place(index), s.clone()));
            }
            if index <= top {
                page.top.push((place(index), s));
            }
        }
        page.me = me.map(|(p, s)| (place(usize::try_from(p).unwrap_or(usize::MAX)), s));
        page
    }
}

/// A place on the ladder as the API carries it.
fn place(p: usize) -> u32 {
    u32::try_from(p).unwrap_or(u32::MAX)
}

fn redis_status(e: redis::RedisError) -> Status {
    Status::unavailable(format!("leaderboard: {e}"))
}
