//! The public LadderService: the leaderboard and the caller's own rating and
//! history, from the ratings service.

use tonic::{Request, Response, Status};
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::ladder_service_server::LadderService;

use crate::auth::Caller;
use crate::state::Gateway;

/// How many players above and below the caller the ladder shows.
const NEIGHBOURS: u32 = 2;

#[tonic::async_trait]
impl LadderService for Gateway {
    #[tracing::instrument(skip_all)]
    async fn get_ladder(
        &self,
        request: Request<pb::GetLadderRequest>,
    ) -> Result<Response<pb::GetLadderResponse>, Status> {
        let me = Caller::of(&request)?;
        let req = request.into_inner();
        let board = self
            .ratings()
            .get_ladder(internal::GetLadderRequest {
                board_size: req.board_size,
                top: req.top,
                around_user_id: me.user_id,
                neighbours: NEIGHBOURS,
            })
            .await?
            .into_inner();
        Ok(Response::new(pb::GetLadderResponse {
            top: board.top,
            around_me: board.around,
        }))
    }

    #[tracing::instrument(skip_all)]
    async fn get_my_rating(
        &self,
        request: Request<pb::GetMyRatingRequest>,
    ) -> Result<Response<pb::GetMyRatingResponse>, Status> {
        let me = Caller::of(&request)?;
        let entry = self
            .ratings()
            .get_rating(internal::GetRatingRequest {
                user_id: me.user_id,
                board_size: request.get_ref().board_size,
            })
            .await?
            .into_inner()
            .entry;
        Ok(Response::new(pb::GetMyRatingResponse { entry }))
    }

    #[tracing::instrument(skip_all)]
    async fn get_my_rating_history(
        &self,
        request: Request<pb::GetMyRatingHistoryRequest>,
    ) -> Result<Response<pb::GetMyRatingHistoryResponse>, Status> {
        let me = Caller::of(&request)?;
        let changes = self
            .ratings()
            .get_rating_history(internal::GetRatingHistoryRequest {
                user_id: me.user_id,
                board_size: request.get_ref().board_size,
                limit: 0,
            })
            .await?
            .into_inner()
            .changes;
        Ok(Response::new(pb::GetMyRatingHistoryResponse { changes }))
    }
}
