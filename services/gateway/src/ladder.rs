//! The public LadderService: the leaderboard and the caller's own rating and
//! history, from the ratings service.

use tonic::{Request, Response, Status};
use ttakji_platform::grpc::observe;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::ladder_service_server::LadderService;

use crate::service::Gateway;

#[tonic::async_trait]
impl LadderService for Gateway {
    #[tracing::instrument(skip_all, fields(user_id))]
    async fn get_ladder(
        &self,
        request: Request<pb::GetLadderRequest>,
    ) -> Result<Response<pb::GetLadderResponse>, Status> {
        observe(
            "GetLadder",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let req = request.into_inner();
                let board = self
                    .ratings
                    .clone()
                    .get_leaderboard(pb::GetLeaderboardRequest {
                        board_size: req.board_size,
                        top: req.top,
                        around_user_id: me.sub,
                        neighbours: 2,
                    })
                    .await?
                    .into_inner();
                Ok(Response::new(pb::GetLadderResponse {
                    top: board.top,
                    around_me: board.around,
                }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(user_id))]
    async fn get_my_rating(
        &self,
        request: Request<pb::GetMyRatingRequest>,
    ) -> Result<Response<pb::GetMyRatingResponse>, Status> {
        observe(
            "GetMyRating",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let entry = self
                    .ratings
                    .clone()
                    .get_rating(pb::GetRatingRequest {
                        user_id: me.sub,
                        board_size: request.get_ref().board_size,
                    })
                    .await?
                    .into_inner()
                    .entry;
                Ok(Response::new(pb::GetMyRatingResponse { entry }))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(user_id))]
    async fn get_my_rating_history(
        &self,
        request: Request<pb::GetMyRatingHistoryRequest>,
    ) -> Result<Response<pb::GetMyRatingHistoryResponse>, Status> {
        observe(
            "GetMyRatingHistory",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let changes = self
                    .ratings
                    .clone()
                    .get_rating_history(pb::GetRatingHistoryRequest {
                        user_id: me.sub,
                        board_size: request.get_ref().board_size,
                        limit: 0,
                    })
                    .await?
                    .into_inner()
                    .changes;
                Ok(Response::new(pb::GetMyRatingHistoryResponse { changes }))
            }
            .await,
        )
    }
}
