//! The ratings service's gRPC API: a player's rating and place, the
//! leaderboard, a player's history.

use tonic::{Request, Response, Status};
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::internal::v1::ratings_service_server::RatingsService;
use ttakji_proto::v1 as pb;

use crate::store::{self, Standing};
use crate::{Ratings, elo, store_status};

fn entry(rank: u32, s: &Standing) -> pb::LadderEntry {
    pb::LadderEntry {
        rank,
        user_id: s.user_id.clone(),
        nickname: s.nickname.clone(),
        rating: i32::try_from(s.rating).unwrap_or(elo::START),
        games: u32::try_from(s.games).unwrap_or(0),
    }
}

fn board_size(size: u32) -> Result<i64, Status> {
    match size {
        0 => Ok(9),
        9 | 13 | 19 => Ok(i64::from(size)),
        other => Err(Status::invalid_argument(format!(
            "board size {other}: use 9, 13 or 19"
        ))),
    }
}

#[tonic::async_trait]
impl RatingsService for Ratings {
    #[tracing::instrument(skip_all, fields(user_id = %request.get_ref().user_id))]
    async fn get_rating(
        &self,
        request: Request<internal::GetRatingRequest>,
    ) -> Result<Response<internal::GetRatingResponse>, Status> {
        {
            let req = request.into_inner();
            let size = board_size(req.board_size)?;
            let me = self.ladder.page(size, 0, Some((&req.user_id, 0))).await?.me;
            let entry = match me {
                Some((rank, s)) => entry(rank, &s),
                None => pb::LadderEntry {
                    rank: 0,
                    user_id: req.user_id,
                    nickname: String::new(),
                    rating: elo::START,
                    games: 0,
                },
            };
            Ok(Response::new(internal::GetRatingResponse {
                entry: Some(entry),
            }))
        }
    }

    #[tracing::instrument(skip_all, fields(board_size = request.get_ref().board_size))]
    async fn get_ladder(
        &self,
        request: Request<internal::GetLadderRequest>,
    ) -> Result<Response<internal::GetLadderResponse>, Status> {
        {
            let req = request.into_inner();
            let size = board_size(req.board_size)?;
            let top = match req.top {
                0 => 10,
                n => n.min(100) as usize,
            };
            let around = (!req.around_user_id.is_empty()).then(|| {
                let n = match req.neighbours {
                    0 => 2,
                    n => n.min(10) as usize,
                };
                (req.around_user_id.as_str(), n)
            });
            let page = self.ladder.page(size, top, around).await?;
            let entries = |rows: Vec<(u32, Standing)>| -> Vec<pb::LadderEntry> {
                rows.iter().map(|(r, s)| entry(*r, s)).collect()
            };
            let (top, around) = (entries(page.top), entries(page.around));
            Ok(Response::new(internal::GetLadderResponse { top, around }))
        }
    }

    #[tracing::instrument(skip_all, fields(user_id = %request.get_ref().user_id))]
    async fn get_rating_history(
        &self,
        request: Request<internal::GetRatingHistoryRequest>,
    ) -> Result<Response<internal::GetRatingHistoryResponse>, Status> {
        {
            let req = request.into_inner();
            let size = if req.board_size == 0 {
                0
            } else {
                board_size(req.board_size)?
            };
            let limit = match req.limit {
                0 => 50,
                n => i64::from(n.min(500)),
            };
            let changes = store::history(&self.db, &req.user_id, size, limit)
                .await
                .map_err(store_status)?
                .into_iter()
                .map(|c| pb::RatingChange {
                    game_id: c.game_id,
                    board_size: u32::try_from(c.board_size).unwrap_or(9),
                    opponent_user_id: c.opponent_id,
                    opponent_nickname: c.opponent_nickname,
                    before: i32::try_from(c.before).unwrap_or(elo::START),
                    after: i32::try_from(c.after).unwrap_or(elo::START),
                    score: c.score_half as f64 / 2.0,
                    at_unix_ms: c.applied_at,
                })
                .collect();
            Ok(Response::new(internal::GetRatingHistoryResponse {
                changes,
            }))
        }
    }
}
