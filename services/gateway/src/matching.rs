//! The public MatchService: the queue, friend challenges and rematches, as
//! streams that report progress and end with the game.
//!
//! Each stream hears the matchmaker's news on the player's bus channel and
//! also asks the matchmaker twice a second, which keeps a queue ticket alive
//! and makes up for any message pub/sub lost. When the client goes away the
//! asking stops, and the matchmaker drops the ticket after its grace.

use std::pin::Pin;
use std::time::Duration;

use prost::Message as _;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use ttakji_platform::bus::{Delivery, Subscription, user_channel};
use ttakji_platform::grpc::observe;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::match_service_server::MatchService;

use crate::service::{Gateway, game_id};

/// How often a waiting stream asks the matchmaker (and so tells it the
/// player is still there: keep it well under the matchmaker's grace).
const POLL: Duration = Duration::from_millis(500);
/// How long a rematch offer waits for the opponent.
const REMATCH_WAIT: Duration = Duration::from_secs(120);

type Stream<T> = Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send>>;

fn final_ticket(t: &pb::Ticket) -> bool {
    t.state == pb::TicketState::Matched as i32 || t.state == pb::TicketState::Cancelled as i32
}

impl Gateway {
    async fn user_subscription(&self, user_id: &str) -> Result<Subscription, Status> {
        self.bus
            .subscribe(&user_channel(user_id))
            .await
            .map_err(|e| Status::unavailable(format!("cannot follow your queue: {e}")))
    }
}

/// Waits for the next message of `type_name` on the subscription, or the
/// next poll time, whichever comes first.
async fn next_news(
    sub: &mut Subscription,
    type_name: &str,
    poll: &mut tokio::time::Interval,
) -> Option<Vec<u8>> {
    loop {
        tokio::select! {
            _ = poll.tick() => return None,
            delivery = sub.recv() => match delivery {
                Delivery::Message(envelope) if envelope.r#type == type_name => return Some(envelope.payload.clone()),
                Delivery::Message(_) | Delivery::Gap => {}
                Delivery::Closed => {
                    poll.tick().await;
                    return None;
                }
            },
        }
    }
}

#[tonic::async_trait]
impl MatchService for Gateway {
    type FindMatchStream = Stream<pb::FindMatchResponse>;

    #[tracing::instrument(skip_all, fields(user_id, ticket_id))]
    async fn find_match(
        &self,
        request: Request<pb::FindMatchRequest>,
    ) -> Result<Response<Self::FindMatchStream>, Status> {
        observe(
            "FindMatch",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let req = request.into_inner();
                if req.ranked && me.guest {
                    return Err(Status::permission_denied(
                        "sign in to play ranked games; guests play casual games",
                    ));
                }
                let mut sub = self.user_subscription(&me.sub).await?;
                // Paired by the ladder's rating on this board size; a newcomer,
                // or a ratings service that cannot be reached, counts as 1200.
                let rating = self
                    .ratings
                    .clone()
                    .get_rating(pb::GetRatingRequest {
                        user_id: me.sub.clone(),
                        board_size: req.board_size,
                    })
                    .await
                    .ok()
                    .and_then(|r| r.into_inner().entry)
                    .map_or(1200, |e| u32::try_from(e.rating).unwrap_or(1200));
                let ticket = self
                    .matchmaker
                    .clone()
                    .enqueue(pb::EnqueueRequest {
                        user_id: me.sub.clone(),
                        nickname: me.name.clone(),
                        rating,
                        pool: Some(pb::Pool {
                            board_size: req.board_size,
                            ruleset: req.ruleset.clone(),
                            ranked: req.ranked,
                        }),
                    })
                    .await?
                    .into_inner()
                    .ticket
                    .ok_or_else(|| Status::internal("the matchmaker sent no ticket"))?;
                tracing::Span::current().record("ticket_id", ticket.ticket_id.as_str());
                let (tx, rx) = mpsc::channel(8);
                let this = self.clone();
                tokio::spawn(async move {
                    let id = ticket.ticket_id.clone();
                    let mut last = ticket;
                    let mut poll = tokio::time::interval(POLL);
                    let mut shutdown = this.shutdown.clone();
                    loop {
                        if tx
                            .send(Ok(pb::FindMatchResponse {
                                ticket: Some(last.clone()),
                            }))
                            .await
                            .is_err()
                            || final_ticket(&last)
                        {
                            break;
                        }
                        let news = tokio::select! {
                            () = shutdown.wait() => break,
                            () = tx.closed() => break,
                            news = next_news(&mut sub, "ttakji.v1.Ticket", &mut poll) => news,
                        };
                        let fresh = match news
                            .and_then(|bytes| pb::Ticket::decode(bytes.as_slice()).ok())
                        {
                            Some(t) if t.ticket_id == id => Ok(t),
                            _ => this
                                .matchmaker
                                .clone()
                                .get_ticket(pb::GetTicketRequest {
                                    ticket_id: id.clone(),
                                    user_id: last.user_id.clone(),
                                })
                                .await
                                .map(|r| r.into_inner().ticket.unwrap_or_default()),
                        };
                        match fresh {
                            Ok(t) => last = t,
                            Err(status) if status.code() == tonic::Code::NotFound => {
                                let _ = tx.send(Err(status)).await;
                                break;
                            }
                            // The matchmaker is briefly away: keep the stream and ask again.
                            Err(status) => tracing::warn!(%status, "ticket not read"),
                        }
                    }
                });
                Ok(Response::new(
                    Box::pin(ReceiverStream::new(rx)) as Self::FindMatchStream
                ))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(ticket_id = %request.get_ref().ticket_id))]
    async fn cancel_match(
        &self,
        request: Request<pb::CancelMatchRequest>,
    ) -> Result<Response<pb::CancelMatchResponse>, Status> {
        observe(
            "CancelMatch",
            async {
                let me = self.caller(&request)?;
                let ticket = self
                    .matchmaker
                    .clone()
                    .cancel_ticket(pb::CancelTicketRequest {
                        ticket_id: request.into_inner().ticket_id,
                        user_id: me.sub,
                    })
                    .await?
                    .into_inner()
                    .ticket;
                Ok(Response::new(pb::CancelMatchResponse { ticket }))
            }
            .await,
        )
    }

    type CreateChallengeStream = Stream<pb::CreateChallengeResponse>;

    #[tracing::instrument(skip_all, fields(user_id))]
    async fn create_challenge(
        &self,
        request: Request<pb::CreateChallengeRequest>,
    ) -> Result<Response<Self::CreateChallengeStream>, Status> {
        observe(
            "CreateChallenge",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let mut sub = self.user_subscription(&me.sub).await?;
                let challenge = self
                    .matchmaker
                    .clone()
                    .make_challenge(pb::MakeChallengeRequest {
                        user_id: me.sub.clone(),
                        nickname: me.name.clone(),
                        pool: Some(pb::Pool {
                            board_size: request.get_ref().board_size,
                            ruleset: request.get_ref().ruleset.clone(),
                            ranked: false,
                        }),
                    })
                    .await?
                    .into_inner()
                    .challenge
                    .ok_or_else(|| Status::internal("the matchmaker sent no challenge"))?;
                let (tx, rx) = mpsc::channel(4);
                let this = self.clone();
                tokio::spawn(async move {
                    let code = challenge.code.clone();
                    let mut last = challenge;
                    let mut poll = tokio::time::interval(POLL);
                    let mut shutdown = this.shutdown.clone();
                    loop {
                        if tx
                            .send(Ok(pb::CreateChallengeResponse {
                                challenge: Some(last.clone()),
                            }))
                            .await
                            .is_err()
                            || !last.game_id.is_empty()
                        {
                            break;
                        }
                        let news = tokio::select! {
                            () = shutdown.wait() => break,
                            () = tx.closed() => break,
                            news = next_news(&mut sub, "ttakji.v1.Challenge", &mut poll) => news,
                        };
                        let fresh =
                            match news.and_then(|b| pb::Challenge::decode(b.as_slice()).ok()) {
                                Some(c) if c.code == code => Ok(c),
                                _ => this
                                    .matchmaker
                                    .clone()
                                    .get_challenge(pb::GetChallengeRequest { code: code.clone() })
                                    .await
                                    .map(|r| r.into_inner().challenge.unwrap_or_default()),
                            };
                        match fresh {
                            Ok(c) => last = c,
                            Err(status) if status.code() == tonic::Code::NotFound => {
                                let _ = tx.send(Err(status)).await;
                                break;
                            }
                            Err(status) => tracing::warn!(%status, "challenge not read"),
                        }
                    }
                });
                Ok(Response::new(
                    Box::pin(ReceiverStream::new(rx)) as Self::CreateChallengeStream
                ))
            }
            .await,
        )
    }

    #[tracing::instrument(skip_all, fields(user_id))]
    async fn accept_challenge(
        &self,
        request: Request<pb::AcceptChallengeRequest>,
    ) -> Result<Response<pb::AcceptChallengeResponse>, Status> {
        observe(
            "AcceptChallenge",
            async {
                let me = self.caller(&request)?;
                tracing::Span::current().record("user_id", me.sub.as_str());
                let joined = self
                    .matchmaker
                    .clone()
                    .join_challenge(pb::JoinChallengeRequest {
                        code: request.into_inner().code,
                        user_id: me.sub,
                        nickname: me.name,
                    })
                    .await?
                    .into_inner();
                Ok(Response::new(pb::AcceptChallengeResponse {
                    game: joined.game,
                }))
            }
            .await,
        )
    }

    type RematchStream = Stream<pb::RematchResponse>;

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id, user_id))]
    async fn rematch(
        &self,
        request: Request<pb::RematchRequest>,
    ) -> Result<Response<Self::RematchStream>, Status> {
        observe("Rematch", async {
            let me = self.caller(&request)?;
            tracing::Span::current().record("user_id", me.sub.as_str());
            let old = game_id(&request.get_ref().game_id)?;
            let mut sub = self.user_subscription(&me.sub).await?;
            let ask = pb::AgreeRematchRequest {
                game_id: old,
                user_id: me.sub,
            };
            let first = self.matchmaker.clone().agree_rematch(ask.clone()).await?.into_inner();
            let (tx, rx) = mpsc::channel(4);
            let this = self.clone();
            tokio::spawn(async move {
                let mut last = first;
                let mut poll = tokio::time::interval(POLL);
                let mut shutdown = this.shutdown.clone();
                let give_up = tokio::time::Instant::now() + REMATCH_WAIT;
                loop {
                    let response = pb::RematchResponse {
                        agreed_user_ids: last.agreed_user_ids.clone(),
                        new_game_id: last.new_game_id.clone(),
                    };
                    if tx.send(Ok(response)).await.is_err() || !last.new_game_id.is_empty() {
                        break;
                    }
                    let news = tokio::select! {
                        () = shutdown.wait() => break,
                        () = tx.closed() => break,
                        () = tokio::time::sleep_until(give_up) => break,
                        news = next_news(&mut sub, "ttakji.v1.AgreeRematchResponse", &mut poll) => news,
                    };
                    let fresh = match news.and_then(|b| pb::AgreeRematchResponse::decode(b.as_slice()).ok()) {
                        Some(r) if !r.new_game_id.is_empty() => Ok(r),
                        _ => this.matchmaker.clone().agree_rematch(ask.clone()).await.map(tonic::Response::into_inner),
                    };
                    match fresh {
                        Ok(r) => last = r,
                        Err(status) => {
                            let _ = tx.send(Err(status)).await;
                            break;
                        }
                    }
                }
            });
            Ok(Response::new(Box::pin(ReceiverStream::new(rx)) as Self::RematchStream))
        }
        .await)
    }
}
