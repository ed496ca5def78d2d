//! Finished ranked games applied once each: from the finished-games
//! channel as they end, and by reconciliation with the authority, at start,
//! every `--reconcile-every` and after the channel lost messages.

use std::time::Duration;

use anyhow::Context as _;
use tonic::Status;
use ttakji_platform::bus::{self, Bus, Delivery};
use ttakji_platform::shutdown::Shutdown;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;

use crate::elo::Outcome;
use crate::store::{self, RankedGame, Side};
use crate::{Ratings, store_status};

/// How far back of the last applied game reconciliation looks (clock skew
/// between authorities, games committed out of order).
const RECONCILE_MARGIN_MS: i64 = 10 * 60 * 1000;

/// The ranked game a finished snapshot describes, if it is one.
#[must_use]
pub fn ranked_game(snapshot: &pb::GameSnapshot) -> Option<RankedGame> {
    finished_ranked(
        &snapshot.game_id,
        snapshot.board_size,
        snapshot.finished_at_unix_ms,
        snapshot.ranked && snapshot.status == pb::GameStatus::Finished as i32,
        snapshot.result.as_ref(),
        [snapshot.black.as_ref(), snapshot.white.as_ref()],
    )
}

/// The ranked game a finished game's stored summary describes, if it is one.
#[must_use]
pub fn ranked_summary(summary: &pb::GameSummary) -> Option<RankedGame> {
    finished_ranked(
        &summary.game_id,
        summary.board_size,
        summary.finished_at_unix_ms,
        summary.ranked && summary.status == pb::GameStatus::Finished as i32,
        summary.result.as_ref(),
        [summary.black.as_ref(), summary.white.as_ref()],
    )
}

fn finished_ranked(
    game_id: &str,
    board_size: u32,
    finished_at: i64,
    ranked_and_finished: bool,
    result: Option<&pb::GameResult>,
    [black, white]: [Option<&pb::Player>; 2],
) -> Option<RankedGame> {
    if !ranked_and_finished {
        return None;
    }
    let (result, black, white) = (result?, black?, white?);
    if black.user_id.is_empty() || white.user_id.is_empty() {
        return None;
    }
    let black_outcome = match pb::Color::try_from(result.winner) {
        Ok(pb::Color::Black) => Outcome::Win,
        Ok(pb::Color::White) => Outcome::Loss,
        _ => Outcome::Draw,
    };
    Some(RankedGame {
        game_id: game_id.to_owned(),
        board_size: i64::from(board_size),
        finished_at,
        sides: [
            Side {
                user_id: black.user_id.clone(),
                nickname: black.nickname.clone(),
                outcome: black_outcome,
            },
            Side {
                user_id: white.user_id.clone(),
                nickname: white.nickname.clone(),
                outcome: black_outcome.opposite(),
            },
        ],
    })
}

impl Ratings {
    /// Applies a finished ranked game (once) and updates the leaderboard.
    pub async fn apply(&self, game: &RankedGame) -> Result<bool, Status> {
        let applied = store::apply(&self.db, game, ttakji_platform::now_unix_ms())
            .await
            .map_err(|e| ttakji_platform::store::status(&e, "ratings not stored"))?;
        let Some(standings) = applied else {
            return Ok(false);
        };
        metrics::counter!("ttakji_rating_updates_total").increment(1);
        tracing::info!(game_id = %game.game_id, a = standings[0].rating, b = standings[1].rating, "ratings updated");
        self.ladder.record(game.board_size, &standings).await;
        Ok(true)
    }

    /// Applies every ranked game finished since shortly before the last
    /// applied one that has no rating change yet.
    pub async fn reconcile(&self) -> Result<usize, Status> {
        let mut cursor = self.cursor.lock().await;
        if *cursor == 0 {
            *cursor = store::latest_applied(&self.db)
                .await
                .map_err(store_status)?;
        }
        let mut since = (*cursor - RECONCILE_MARGIN_MS).max(0);
        let mut applied = 0;
        loop {
            let games = self
                .authority
                .ask(
                    internal::ListFinishedGamesRequest {
                        finished_since_unix_ms: since,
                        ranked_only: true,
                        limit: 500,
                    },
                    |mut c, r| async move { c.list_finished_games(r).await },
                )
                .await?
                .into_inner()
                .summaries;
            let full = games.len() == 500;
            for summary in &games {
                if let Some(game) = ranked_summary(summary) {
                    if self.apply(&game).await? {
                        applied += 1;
                    }
                    *cursor = (*cursor).max(game.finished_at);
                }
                since = since.max(summary.finished_at_unix_ms);
            }
            if !full {
                break;
            }
        }
        if applied > 0 {
            tracing::warn!(
                applied,
                "reconciliation applied games the bus did not deliver"
            );
        }
        Ok(applied)
    }
}

/// Follows the finished-games channel and reconciles every `every`, until
/// `shutdown`.
///
/// # Errors
/// When the channel cannot be subscribed to.
pub(crate) async fn follow(
    ratings: &Ratings,
    bus: &Bus,
    every: Duration,
    shutdown: &Shutdown,
) -> anyhow::Result<()> {
    let mut finished = bus
        .subscribe(&bus::games_finished())
        .await
        .context("subscribing to finished games")?;
    let consumer = ratings.clone();
    let mut stop = shutdown.clone();
    shutdown.spawn(async move {
        loop {
            let delivery = tokio::select! {
                () = stop.wait() => return,
                d = finished.recv() => d,
            };
            match delivery {
                Delivery::Message { message: event, .. } => {
                    if let Some(game) = event.snapshot.as_ref().and_then(ranked_game)
                        && let Err(status) = consumer.apply(&game).await
                    {
                        tracing::warn!(%status, "finished game not applied; reconciliation will");
                    }
                }
                Delivery::Gap => {
                    let _ = consumer.reconcile().await;
                }
                Delivery::Closed => return,
            }
        }
    });
    let reconciler = ratings.clone();
    let mut stop = shutdown.clone();
    shutdown.spawn(async move {
        let mut tick = tokio::time::interval(every);
        loop {
            tokio::select! {
                () = stop.wait() => return,
                _ = tick.tick() => {}
            }
            if let Err(status) = reconciler.reconcile().await {
                tracing::warn!(%status, "reconciliation failed; it runs again");
            }
        }
    });
    Ok(())
}
